package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// The records the differential test reads: written with franz-go
// directly (never with kql), so kql's reading is checked against bytes it
// did not write. Every kind of record the query language meets is here:
// JSON objects with integers, decimals, strings holding % _ \ and quotes,
// booleans, nested objects and arrays (spaced and compact), absent members,
// JSON nulls, a member that is a number in one record and a string in
// another, integers at and past the 64-bit range, plain text, empty
// values, tombstones, bytes that are not UTF-8, JSON scalars and arrays as
// whole values, repeated and NULL headers; four partitions on three
// brokers, each written with another compression codec; committed and
// aborted transactions at the end.

const diffPartitions = 4

// diffRecord is one record as written, with the offset the broker gave it.
type diffRecord struct {
	p       int32
	off     int64
	ts      int64
	key     []byte
	value   []byte
	headers []kgo.RecordHeader
	aborted bool // written in a transaction that was aborted: no reader sees it
}

// diffData is what was written and the times the generator may use.
type diffData struct {
	topic string
	recs  []diffRecord
	now   time.Time // the session's clock for FROM ... AGO
	// lastPlain is the timestamp of the last record before the
	// transactions. A time bound after it could start (or end) a
	// partition at a transaction marker, which carries the broker's clock
	// (README, Expressions: a documented kql rule the reference does not
	// model), so the generator keeps its time bounds at or before it.
	lastPlain int64
	first     int64 // the first record's timestamp
}

var diffStrings = []string{"paid", "failed", "100%", "a_b", `back\slash`, `quo"te`, "it's", "é café", "", "  spaced  ", "A", "a", "k-001", "x", "50% off_now", `\%`, "Ünïcode"}

// diffValue builds record i's value from r: mostly JSON objects, and now
// and then each of the other kinds.
func diffValue(r *rand.Rand, i int) []byte {
	switch x := r.IntN(100); {
	case x < 8:
		return nil // a tombstone
	case x < 13:
		return []byte{}
	case x < 20:
		return []byte([]string{"hello world", "100% done", "plain_text", "a\\b", "é", "caf\xe9", "\xff\xfe\x00bin", "42 apples"}[r.IntN(8)])
	case x < 24:
		return []byte([]string{"42", `"a json string"`, "true", "null", "-7.5"}[r.IntN(5)])
	case x < 28:
		return []byte([]string{`[1, 2, {"a": 3}]`, `["x","y"]`, `[{"a":"b"}, 7]`, `[]`}[r.IntN(4)])
	}
	sp := func() string { // spacing, so objects equal but for it meet
		if r.IntN(3) == 0 {
			return " "
		}
		return ""
	}
	var members []string
	add := func(name, v string) {
		if r.IntN(10) < 7 {
			members = append(members, fmt.Sprintf("%q:%s%s", name, sp(), v))
		}
	}
	str := func() string {
		b, _ := jsonString(diffStrings[r.IntN(len(diffStrings))])
		return b
	}
	add("n", fmt.Sprint(r.IntN(41)-20))
	add("price", []string{"12.5", "9.50", "-0.25", "0", "3", "100.125", "2.0"}[r.IntN(7)])
	add("s", str())
	add("ok", []string{"true", "false"}[r.IntN(2)])
	add("nested", fmt.Sprintf("{%s\"x\":%s%d,%s\"y\":%s%s%s}", sp(), sp(), r.IntN(4), sp(), sp(), str(), sp()))
	switch r.IntN(3) {
	case 0:
		add("items", fmt.Sprintf("[%d,%s%d]", r.IntN(5), sp(), r.IntN(5)))
	case 1:
		add("items", fmt.Sprintf(`[{"sku":%s"s-%d"},%s{"sku":"s-%d","qty":%d}]`, sp(), r.IntN(3), sp(), r.IntN(3), r.IntN(4)))
	default:
		add("items", "[]")
	}
	add("tags", fmt.Sprintf(`[%s,%s%s]`, str(), sp(), str()))
	switch r.IntN(5) { // a number in one record, a string, a boolean or an object in another
	case 0, 1:
		add("mixed", []string{"9", "-3.25", "0", "7"}[r.IntN(4)])
	case 2, 3:
		add("mixed", str())
	default:
		add("mixed", []string{"true", `{"m":1}`, "null"}[r.IntN(3)])
	}
	add("big", []string{"1234567890123", "9223372036854775807", "-9223372036854775808", "12345678901234567890", "3037000500"}[r.IntN(5)])
	add("nul", "null")
	add("odd-name", str())
	if i%7 == 0 {
		add("id", fmt.Sprint(i))
	}
	r.Shuffle(len(members), func(a, b int) { members[a], members[b] = members[b], members[a] })
	return []byte("{" + strings.Join(members, ","+sp()) + "}")
}

func jsonString(s string) (string, error) {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteRune(c)
		default:
			sb.WriteRune(c)
		}
	}
	sb.WriteByte('"')
	return sb.String(), nil
}

func diffKey(r *rand.Rand, i int) []byte {
	switch x := r.IntN(20); {
	case x < 2:
		return nil
	case x < 3:
		return []byte{}
	case x < 5:
		return []byte(fmt.Sprintf(`{"id": %d}`, i%5))
	case x < 6:
		return []byte([]string{"100%", "a_b", `k\1`, "é"}[r.IntN(4)])
	}
	return []byte(fmt.Sprintf("k-%03d", r.IntN(60)))
}

func diffHeaders(r *rand.Rand) []kgo.RecordHeader {
	var hs []kgo.RecordHeader
	for range r.IntN(4) {
		h := kgo.RecordHeader{Key: []string{"src", "trace", "dup", "dup"}[r.IntN(4)]}
		switch r.IntN(5) {
		case 0:
			// a NULL header value
		case 1:
			h.Value = []byte{}
		default:
			h.Value = []byte([]string{"web", "kql", "a_b", "100%", "é"}[r.IntN(5)])
		}
		hs = append(hs, h)
	}
	return hs
}

// seedDiffTopic writes the records and returns them with their offsets.
func seedDiffTopic(t *testing.T, b kafkatest.Backend, plain int) *diffData {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := kafkatest.TopicName(t)
	kafkatest.CreateTopic(t, b, topic, diffPartitions, 3, nil)
	if f, ok := b.(*kafkatest.Fake); ok {
		for p := int32(0); p < diffPartitions; p++ {
			require.NoError(t, f.MoveTopicPartition(topic, p, p%3))
		}
	}
	now := time.Now().Truncate(time.Millisecond)
	d := &diffData{topic: topic, now: now}
	r := rand.New(rand.NewPCG(23, 1)) // the records are fixed; the queries vary by seed
	base := now.Add(-2 * time.Hour)
	ts := func(i int) int64 {
		return base.Add(time.Duration(i)*9*time.Second + time.Duration(r.IntN(5000))*time.Millisecond).UnixMilli()
	}
	byPart := make([][]*kgo.Record, diffPartitions)
	for i := range plain {
		rec := &kgo.Record{Topic: topic, Partition: int32(r.IntN(diffPartitions)), Key: diffKey(r, i), Value: diffValue(r, i),
			Headers: diffHeaders(r), Timestamp: time.UnixMilli(ts(i))}
		byPart[rec.Partition] = append(byPart[rec.Partition], rec)
	}
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression()}
	for p, recs := range byPart {
		cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codecs[p]),
			kgo.ProducerLinger(5*time.Millisecond))
		require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	}
	var all []*kgo.Record
	for _, recs := range byPart {
		all = append(all, recs...)
	}
	for _, rec := range all {
		d.recs = append(d.recs, fromKgo(rec, false))
	}
	for _, rec := range d.recs {
		d.lastPlain = max(d.lastPlain, rec.ts)
	}
	d.first = base.UnixMilli()
	// Transactions, zstd-compressed: committed, aborted, committed.
	txn := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.TransactionalID(topic+"-txn"),
		kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	i := plain
	for _, commit := range []bool{true, false, true} {
		require.NoError(t, txn.BeginTransaction())
		var recs []*kgo.Record
		for range 6 {
			i++
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(1 + r.IntN(diffPartitions-1)), Key: diffKey(r, i), Value: diffValue(r, i),
				Headers: diffHeaders(r), Timestamp: time.UnixMilli(ts(i))})
		}
		require.NoError(t, txn.ProduceSync(ctx, recs...).FirstErr())
		require.NoError(t, txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)))
		for _, rec := range recs {
			d.recs = append(d.recs, fromKgo(rec, !commit))
		}
	}
	return d
}

func fromKgo(rec *kgo.Record, aborted bool) diffRecord {
	return diffRecord{p: rec.Partition, off: rec.Offset, ts: rec.Timestamp.UnixMilli(), key: rec.Key, value: rec.Value, headers: rec.Headers, aborted: aborted}
}
