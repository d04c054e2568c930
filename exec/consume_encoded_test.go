package exec

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// recordPathOnly hides a stream's EncodeWith: render then encodes record by
// record on its own goroutine, as it does for any record stream.
type recordPathOnly struct{ result.RecordStream }

// A plain CONSUME written as jsonl, csv or tsv is encoded in the reader's
// lanes (result.EncodingStream); the bytes are the record path's, byte for
// byte, in the same (timestamp, partition, offset) order, with LIMIT cutting
// at the same row: null keys, binary values (hex), headers, equal
// timestamps across partitions, an aborted transaction's records left out
// (read_committed), over 3 brokers on both backends.
func TestEncodedConsumeWritesWhatTheRecordPathWrites(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, cl, _ := createSpreadTopic(t, b)
		base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		var recs []*kgo.Record
		for i := range 3000 {
			r := &kgo.Record{Topic: topic, Partition: int32(i % 6), Key: []byte("k-" + strconv.Itoa(i)),
				Value:     []byte(`{"n":` + strconv.Itoa(i) + `,"s":"a\"b,c	d"}`),
				Timestamp: base.Add(time.Duration(i/4) * time.Millisecond)} // four records share a timestamp
			switch i % 5 {
			case 1:
				r.Key = nil
			case 2:
				r.Value = []byte{0xff, 0x00, byte(i)}
			case 3:
				r.Headers = []kgo.RecordHeader{{Key: "h", Value: []byte("v" + strconv.Itoa(i))}, {Key: "bin", Value: []byte{0xfe}}}
			}
			recs = append(recs, r)
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), recs[:1500]...).FirstErr())
		txn := kafkatest.Client(t, b, kgo.TransactionalID(topic+"-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		require.NoError(t, txn.BeginTransaction())
		for p := range int32(6) {
			require.NoError(t, txn.ProduceSync(ctxT(t), &kgo.Record{Topic: topic, Partition: p, Value: []byte("aborted"), Timestamp: base}).FirstErr())
		}
		require.NoError(t, txn.EndTransaction(ctxT(t), kgo.TryAbort))
		require.NoError(t, cl.ProduceSync(ctxT(t), recs[1500:]...).FirstErr())
		// A broker writes an abort's markers after EndTxn returns (real
		// Kafka does, kfake at once): until then the last stable offset,
		// where a read_committed read ends, stays at the aborted
		// transaction's first record, and a read sees only the records
		// before it. Both paths are to read all 3000.
		adm := kadm.NewClient(cl)
		require.Eventually(t, func() bool {
			stable, err1 := adm.ListCommittedOffsets(ctxT(t), topic)
			ends, err2 := adm.ListEndOffsets(ctxT(t), topic)
			if err1 != nil || err2 != nil || stable.Error() != nil || ends.Error() != nil {
				return false
			}
			caughtUp := true
			ends.Each(func(o kadm.ListedOffset) {
				if s, ok := stable.Lookup(topic, o.Partition); !ok || s.Offset != o.Offset {
					caughtUp = false
				}
			})
			return caughtUp
		}, 30*time.Second, 50*time.Millisecond, "the aborted transaction's markers were never written")

		for _, format := range []render.Format{render.JSONL, render.CSV, render.TSV} {
			for _, limit := range []int64{3000, 1234} {
				t.Run(string(format)+" LIMIT "+strconv.FormatInt(limit, 10), func(t *testing.T) {
					write := func(hide bool) (string, bool) {
						res, err := s.Execute(ctxT(t), &lang.Consume{Topic: topic, From: &lang.Start{Kind: lang.FromOldest}, Limit: &limit})
						require.NoError(t, err)
						defer res.Close()
						_, encodes := res.(result.EncodingStream)
						if hide {
							res = recordPathOnly{res.(result.RecordStream)}
						}
						var out bytes.Buffer
						n, err := render.Render(&out, res, render.Options{Format: format})
						require.NoError(t, err)
						require.NoError(t, res.Err())
						require.Equal(t, limit, n)
						return out.String(), encodes
					}
					want, _ := write(true)
					require.NotContains(t, want, "aborted")
					got, encodes := write(false)
					require.True(t, encodes, "a plain CONSUME no longer offers its records encoded")
					require.Equal(t, want, got)
				})
			}
		}
	})
}

// What a CONSUME does to its records on the way out (WHERE, SKIP, FROM
// NEWEST's two passes) keeps it on the record path: its output is the one
// render writes record by record.
func TestEncodedConsumeOnlyForRecordsAsRead(t *testing.T) {
	f := newFake(t)
	f.spread(t, "enc", 3)
	require.NoError(t, seedRecords(ctxT(t), f.kcl, "enc", 3, 300))
	for _, src := range []string{
		`CONSUME enc FROM OLDEST WHERE value LIKE '%"p":3,%' LIMIT 100`,
		"CONSUME enc FROM OLDEST SKIP 7 LIMIT 100",
		"CONSUME enc FROM NEWEST LIMIT 100",
	} {
		t.Run(src, func(t *testing.T) {
			write := func(hide bool) string {
				res, err := f.sess.Execute(ctxT(t), parse(t, src))
				require.NoError(t, err)
				defer res.Close()
				if hide {
					res = recordPathOnly{res.(result.RecordStream)}
				}
				var out bytes.Buffer
				_, err = render.Render(&out, res, render.Options{Format: render.JSONL})
				require.NoError(t, err)
				require.NoError(t, res.Err())
				return out.String()
			}
			want := write(true)
			require.NotEmpty(t, want)
			require.Equal(t, want, write(false))
		})
	}
}

// The encoding read allocates per chunk, not per record: what the record
// path allocates (TestConsumeAllocationsPerRecordStaySmall) plus nothing
// for each record's bytes.
func TestEncodedConsumeAllocationsPerRecordStaySmall(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 12)
	const n = 30_000
	require.NoError(t, seedRecordsHeaders(ctxT(t), f.kcl, "t", 12, n, 0))
	limit := int64(n)
	st := &lang.Consume{Topic: "t", Limit: &limit}
	require.Equal(t, limit, drainEncodedCtx(t, ctxT(t), f.sess, st)) // warm: connections, metadata
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	require.Equal(t, limit, drainEncodedCtx(t, ctxT(t), f.sess, st))
	runtime.ReadMemStats(&after)
	per := float64(after.Mallocs-before.Mallocs) / n
	t.Logf("%d allocations for %d records: %.3f per record", after.Mallocs-before.Mallocs, n, per)
	require.Less(t, per, 0.25, "the encoding read allocates per record")
}

// drainEncodedCtx reads a CONSUME through its encoded records (each
// record's offset and a newline) and returns the count.
func drainEncodedCtx(t *testing.T, ctx context.Context, s *Session, st *lang.Consume) int64 {
	t.Helper()
	res, err := s.Execute(ctx, st)
	require.NoError(t, err)
	defer res.Close()
	es := res.(result.EncodingStream)
	require.True(t, es.EncodeWith(func() result.RecordEncoder {
		return func(buf []byte, r *result.Record) []byte {
			return append(strconv.AppendInt(buf, r.Offset, 10), '\n')
		}
	}))
	var n int64
	for {
		if _, ok := es.NextEncoded(); !ok {
			break
		}
		n++
	}
	require.NoError(t, res.Err())
	return n
}

// The next page of a CONSUME written through the encoding read starts at
// the first record it did not write (\next in the REPL): page after page,
// jsonl, the pages joined are one read of them all, each record once.
func TestEncodedConsumePagesJoinUp(t *testing.T) {
	f := newFake(t)
	f.spread(t, "pages", 3)
	require.NoError(t, seedRecords(ctxT(t), f.kcl, "pages", 3, 3000))
	f.sess.ReadBudget = 16 << 10 // pages end mid-chunk and at chunk ends
	jsonl := func(st *lang.Consume, encoded bool) (string, result.Result) {
		res, err := f.sess.Execute(ctxT(t), st)
		require.NoError(t, err)
		defer res.Close()
		var r result.Result = res
		if !encoded {
			r = recordPathOnly{res.(result.RecordStream)}
		}
		var out bytes.Buffer
		_, err = render.Render(&out, r, render.Options{Format: render.JSONL})
		require.NoError(t, err)
		return out.String(), res
	}
	all := int64(3000)
	want, _ := jsonl(&lang.Consume{Topic: "pages", From: &lang.Start{Kind: lang.FromOldest}, Limit: &all}, false)
	page := int64(701)
	st := &lang.Consume{Topic: "pages", From: &lang.Start{Kind: lang.FromOldest}, Limit: &page}
	var got strings.Builder
	for range 10 {
		out, res := jsonl(st, true)
		got.WriteString(out)
		next, ok := pagerOf(res).NextPage()
		if !ok {
			break
		}
		st = next
	}
	require.Equal(t, want, got.String())
}
