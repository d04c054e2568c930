package exec

import (
	"bytes"
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/result"
)

// passRecords is a source of records a byte-for-byte copy can get wrong:
// NULL and empty keys, tombstones and empty values, binary bytes of every
// value and of many lengths, repeated headers and NULL header values, and
// a distinct timestamp each.
func passRecords(topic string, partitions int32, perPartition int) []*kgo.Record {
	rnd := rand.New(rand.NewSource(17))
	blob := func(n int) []byte {
		b := make([]byte, n)
		rnd.Read(b)
		return b
	}
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var out []*kgo.Record
	for i := range perPartition {
		for p := range partitions {
			r := &kgo.Record{Topic: topic, Partition: p, Timestamp: base.Add(time.Duration(i*int(partitions)+int(p)) * time.Millisecond)}
			switch i % 5 {
			case 0: // a NULL key
			case 1:
				r.Key = []byte{}
			default:
				r.Key = blob(1 + rnd.Intn(40))
			}
			switch i % 7 {
			case 0: // a tombstone
			case 1:
				r.Value = []byte{}
			default:
				r.Value = blob(rnd.Intn(700))
			}
			r.Headers = []kgo.RecordHeader{{Key: "id", Value: []byte(fmt.Sprintf("%d-%d", p, i))}}
			if i%3 == 0 {
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: "h", Value: nil}, kgo.RecordHeader{Key: "h", Value: blob(rnd.Intn(30))})
			}
			out = append(out, r)
		}
	}
	return out
}

// An INSERT of SELECT * copies each record's bytes as the scan handed them
// out, after the scan went on to later records: the producer sends them
// later (linger, batches of many records), and again when a batch is
// retried. Here every destination partition refuses its first Produce
// (NOT_LEADER_FOR_PARTITION: the producer retries the same batch), the
// copy spans many transactions, and each copy must equal its source record
// byte for byte: NULL stays NULL, empty stays empty, headers and timestamp
// are kept. A scan buffer reused before the producer sent it shows as
// another record's bytes here.
func TestInsertOfRecordsCopiesBytesThatOutliveTheScan(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "dst", 3)
	src := passRecords("src", 3, 120)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctxT(t), src...).FirstErr())
	insertTxnsOf(t, 50)
	refused := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "dst", Err: kerr.NotLeaderForPartition, Count: 3})

	rows, res := mustRun(t, f.sess, parse(t, "INSERT INTO dst KEEP PARTITION SELECT * FROM src EXECUTE"))
	require.Equal(t, int64(len(src)), sumRecords(rows), "%v %v", rows, res)
	require.Equal(t, 3, refused.Hits(), "the first Produce requests were refused and retried")

	got := committedEventually(t, f.sess, "dst", len(src))
	require.Len(t, got, len(src))
	want := map[int32][]*kgo.Record{}
	for _, r := range src {
		want[r.Partition] = append(want[r.Partition], r)
	}
	next := map[int64]int{}
	for _, row := range got {
		p := row[0].(int64)
		w := want[int32(p)][next[p]]
		next[p]++
		id := string(w.Headers[0].Value)
		requireSameBytes(t, w.Key, row[3], id+": key")
		requireSameBytes(t, w.Value, row[4], id+": value")
		require.True(t, w.Timestamp.Equal(row[2].(time.Time)), "%s: timestamp %v, want %v", id, row[2], w.Timestamp)
		hs, _ := row[5].([]result.Header)
		require.Len(t, hs, len(w.Headers), "%s: headers", id)
		for i, h := range hs {
			require.Equal(t, w.Headers[i].Key, h.Key, "%s: header %d", id, i)
			requireSameBytes(t, w.Headers[i].Value, h.Value, fmt.Sprintf("%s: header %d", id, i))
		}
	}
}

// requireSameBytes: got (a key, value or header cell) holds want's bytes,
// NULL when want is nil and empty (not NULL) when want is empty.
func requireSameBytes(t *testing.T, want []byte, got any, what string) {
	t.Helper()
	if want == nil {
		require.Nil(t, got, "%s: NULL", what)
		return
	}
	var b []byte
	switch x := got.(type) {
	case []byte:
		b = x
	case string:
		b = []byte(x)
	case nil:
		t.Fatalf("%s: NULL, want %d bytes", what, len(want))
	default:
		t.Fatalf("%s: a %T", what, got)
	}
	require.NotNil(t, b, "%s: NULL, want %d bytes", what, len(want))
	require.True(t, bytes.Equal(want, b), "%s: %x, want %x", what, b, want)
}

// A Produce the broker refuses for good (INVALID_RECORD, not retried) stops
// an INSERT of records: the writer's error flag is set by the producer's
// answer on another goroutine, and the next record or the commit sees it.
// The open transaction is aborted, the error names the partition and its
// leader, and the resume statement copies the rest exactly once.
func TestInsertOfRecordsStopsAtARefusedProduce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "dst", 3)
	src := passRecords("src", 3, 60)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctxT(t), src...).FirstErr())
	insertTxnsOf(t, 40)
	// From the second transaction on: one is committed before the refusal.
	var ended atomic.Int32
	f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.EndTxn}, Observe: true, Count: -1, When: func(kmsg.Request) bool { ended.Add(1); return true }})
	refused := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "dst", Partitions: []int32{1}, Err: kerr.InvalidRecord, Count: -1,
		When: func(kmsg.Request) bool { return ended.Load() > 0 }})

	_, _, err = run(t, f.sess, parse(t, "INSERT INTO dst KEEP PARTITION SELECT * FROM src EXECUTE"))
	require.Error(t, err)
	require.Regexp(t, `write to dst/1 \(leader broker 1 at 127\.0\.0\.1:\d+\)`, err.Error(), "the partition and the leader that refused it")
	require.ErrorContains(t, err, "committed 1 transaction,")
	require.ErrorContains(t, err, "INVALID_RECORD")
	require.Positive(t, refused.Hits())
	require.Len(t, committedEventually(t, f.sess, "dst", 40), 40, "the first transaction only: the refused one was aborted")
	refused.Remove()

	mustRun(t, f.sess, parse(t, resumeIfNotCommitted(t, err.Error())))
	seen := map[string]bool{}
	for _, row := range committedEventually(t, f.sess, "dst", len(src)) {
		hs := row[5].([]result.Header)
		id := string(hs[0].Value)
		require.False(t, seen[id], "%s copied twice", id)
		seen[id] = true
	}
	require.Len(t, seen, len(src))
}
