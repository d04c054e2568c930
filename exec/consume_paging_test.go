package exec

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// rowID names a CONSUME row by partition/offset.
func rowID(r result.Row) string { return fmt.Sprintf("%d/%d", r[0], r[1]) }

func ids(rows []result.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowID(r)
	}
	return out
}

// produceAt writes one record per timestamp (milliseconds after base) to a
// partition, in the order given: the producer sets CreateTime, so the
// timestamps inside a partition need not grow.
func (f *fake) produceAt(t *testing.T, topic string, p int32, base time.Time, ms ...int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for _, m := range ms {
		rec := &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("p%d@%d", p, m)), Timestamp: base.Add(time.Duration(m) * time.Millisecond)}
		require.NoError(t, cl.ProduceSync(ctxT(t), rec).FirstErr())
	}
}

// pages runs st and follows NextPage until there is none (at most max pages).
func pages(t *testing.T, s *Session, st *lang.Consume, max int) [][]result.Row {
	t.Helper()
	var out [][]result.Row
	for i := 0; i < max; i++ {
		rows, res := mustRun(t, s, st)
		out = append(out, rows)
		next, ok := pagerOf(res).NextPage()
		if !ok {
			return out
		}
		st = next
	}
	t.Fatalf("NextPage still offers a page after %d pages", max)
	return nil
}

// tailJoined joins tail pages (newest first) back into oldest-first order.
func tailJoined(ps [][]result.Row) []result.Row {
	var out []result.Row
	for i := len(ps) - 1; i >= 0; i-- {
		out = append(out, ps[i]...)
	}
	return out
}

func forwardJoined(ps [][]result.Row) []result.Row {
	var out []result.Row
	for _, p := range ps {
		out = append(out, p...)
	}
	return out
}

// Partitions of very different sizes, two of them empty: every page size
// pages through the whole topic in both directions, pages neither overlap
// nor skip, and page chains end.
func TestConsumePagingUnevenAndEmptyPartitions(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 5)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var p0 []int
	for i := 0; i < 40; i++ {
		p0 = append(p0, i*3)
	}
	f.produceAt(t, "t", 0, base, p0...)
	f.produceAt(t, "t", 2, base, 1, 50, 119)
	f.produceAt(t, "t", 4, base, 61)
	all := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(1000)})
	require.Len(t, all, 44)
	for _, limit := range []int64{1, 3, 7, 44, 1000} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			tail := pages(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(limit)}, 100)
			want := (44 + limit - 1) / limit
			require.Len(t, tail, int(want), "tail pages")
			for i, p := range tail[:len(tail)-1] {
				require.Len(t, p, int(limit), "tail page %d is full", i+1)
			}
			require.Equal(t, all, tailJoined(tail))
			fwd := pages(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(limit)}, 100)
			require.Equal(t, all, forwardJoined(fwd))
			require.LessOrEqual(t, len(fwd), int(want), "forward pages")
		})
	}
}

// Records with equal timestamps in every partition: ties break by
// partition, then offset, the same way forward and backward.
func TestConsumeEqualTimestampsAcrossPartitions(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for p := int32(0); p < 3; p++ {
		f.produceAt(t, "t", p, base, 0, 0, 5, 5, 5)
	}
	all := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(1000)})
	require.Equal(t, []string{"0/0", "0/1", "1/0", "1/1", "2/0", "2/1", "0/2", "0/3", "0/4", "1/2", "1/3", "1/4", "2/2", "2/3", "2/4"}, ids(all))
	tail := pages(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(4)}, 10)
	require.Equal(t, all, tailJoined(tail))
}

// A single partition, LIMIT 1, LIMIT beyond the topic, SKIP beyond the
// total, FROM OFFSET below and above the log, FROM TIMESTAMP after the last
// record.
func TestConsumeEdgeBounds(t *testing.T) {
	f := newFake(t)
	f.spread(t, "one", 1)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	f.produceAt(t, "one", 0, base, 0, 10, 20, 30, 40)

	rows := consumeAll(t, f.sess, &lang.Consume{Topic: "one", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(1)})
	require.Equal(t, []string{"0/4"}, ids(rows))
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "one", Limit: i64(1)})
	require.Equal(t, []string{"0/0"}, ids(rows))
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "one", Limit: i64(1000000)})
	require.Len(t, rows, 5)
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "one", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(1000000)})
	require.Len(t, rows, 5)

	for _, from := range []lang.StartKind{lang.FromOldest, lang.FromNewest} {
		rows, res := mustRun(t, f.sess, &lang.Consume{Topic: "one", From: &lang.Start{Kind: from}, Skip: i64(99)})
		require.Empty(t, rows, "SKIP beyond the total (kind %d)", from)
		_, ok := pagerOf(res).NextPage()
		require.False(t, ok, "no page after a SKIP beyond the total (kind %d)", from)
	}

	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "one", From: &lang.Start{Kind: lang.FromOffset, Offset: 3}})
	require.Equal(t, []string{"0/3", "0/4"}, ids(rows))
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "one", From: &lang.Start{Kind: lang.FromOffset, Offset: 0}, Skip: i64(4)})
	require.Equal(t, []string{"0/4"}, ids(rows))

	rows, res := mustRun(t, f.sess, &lang.Consume{Topic: "one", From: &lang.Start{Kind: lang.FromTimestamp, Timestamp: base.Add(time.Second).UnixMilli()}})
	require.Empty(t, rows, "no record at or after the timestamp")
	require.NoError(t, res.Err())
	_, ok := pagerOf(res).NextPage()
	require.False(t, ok)
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "one", From: &lang.Start{Kind: lang.FromTimestamp, Timestamp: base.Add(25 * time.Millisecond).UnixMilli()}})
	require.Equal(t, []string{"0/3", "0/4"}, ids(rows))

	f.spread(t, "empty", 3)
	for _, from := range []lang.StartKind{lang.FromOldest, lang.FromNewest} {
		rows, res := mustRun(t, f.sess, &lang.Consume{Topic: "empty", From: &lang.Start{Kind: from}})
		require.Empty(t, rows)
		_, ok := pagerOf(res).NextPage()
		require.False(t, ok, "an empty topic has no next page (kind %d)", from)
	}
}

// ANCHOR and TAIL lists naming a subset of the partitions read only those;
// a PARTITION filter narrows a TAIL list further, and its next page keeps
// the filter.
func TestConsumeAnchorAndTailSubsets(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 4)
	f.produce(t, "t", 4, 10)

	rows := consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromAnchor, Positions: []lang.PartitionOffset{{Partition: 3, Offset: 8}, {Partition: 1, Offset: 7}}}})
	require.ElementsMatch(t, []string{"1/7", "1/8", "1/9", "3/8", "3/9"}, ids(rows))

	// An anchor beyond the end clamps to the end; below the start, to the start.
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromAnchor, Positions: []lang.PartitionOffset{{Partition: 0, Offset: 99}, {Partition: 2, Offset: -5}}}})
	require.Len(t, rows, 10)
	for _, r := range rows {
		require.Equal(t, int64(2), r[0])
	}

	tail := &lang.Start{Kind: lang.FromTail, Positions: []lang.PartitionOffset{{Partition: 0, Offset: 6}, {Partition: 2, Offset: 10}}}
	rows, res := mustRun(t, f.sess, &lang.Consume{Topic: "t", From: tail, Limit: i64(3)})
	require.Len(t, rows, 3)
	for _, r := range rows {
		require.Contains(t, []int64{0, 2}, r[0])
		if r[0] == int64(0) {
			require.Less(t, r[1].(int64), int64(6), "the pinned end of partition 0 is exclusive")
		}
	}

	filtered := &lang.Consume{Topic: "t", From: tail, Partitions: []int32{2}, Limit: i64(4)}
	ps := pages(t, f.sess, filtered, 10)
	got := forwardJoined(ps)
	require.Len(t, got, 10)
	for _, r := range got {
		require.Equal(t, int64(2), r[0])
	}
	_ = res

	_, _, err := run(t, f.sess, &lang.Consume{Topic: "t", From: tail, Partitions: []int32{1}})
	require.ErrorContains(t, err, "PARTITION 1 is not in the FROM TAIL list")
	_, _, err = run(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromAnchor, Positions: []lang.PartitionOffset{{Partition: 9, Offset: 0}}}})
	require.ErrorContains(t, err, "has no partition 9 (in FROM ANCHOR); its partitions are 0-3")
}

// Producers set CreateTime, and nothing makes it grow inside a partition
// (event-time producers, clock skew, replays). Paging back through such a
// topic must still show every record exactly once.
func TestTailPagesOverlapAndSkipWithNonMonotonicTimestamps(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	f.produceAt(t, "t", 0, base, 100, 1, 2, 3)
	f.produceAt(t, "t", 1, base, 50, 51, 52, 53)
	ps := pages(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(2)}, 10)
	seen := map[string]int{}
	for _, p := range ps {
		for _, r := range p {
			seen[rowID(r)]++
		}
	}
	for _, id := range []string{"0/0", "0/1", "0/2", "0/3", "1/0", "1/1", "1/2", "1/3"} {
		require.Equal(t, 1, seen[id], "record %s shown %d times over the pages %v", id, seen[id], pagesIDs(ps))
	}
}

func pagesIDs(ps [][]result.Row) [][]string {
	out := make([][]string, len(ps))
	for i, p := range ps {
		out[i] = ids(p)
	}
	return out
}

// A transactional topic ends every committed transaction with a control
// record: the page that shows the last data record must be the last page.
func TestForwardNextPageNeverEndsAfterTransactionMarker(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	txn, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.TransactionalID("review-txn"), kgo.DefaultProduceTopic("t"))
	require.NoError(t, err)
	defer txn.Close()
	require.NoError(t, txn.BeginTransaction())
	for _, v := range []string{"a", "b", "c"} {
		require.NoError(t, txn.ProduceSync(ctxT(t), &kgo.Record{Value: []byte(v)}).FirstErr())
	}
	require.NoError(t, txn.EndTransaction(ctxT(t), kgo.TryCommit))

	rows, res := mustRun(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(1000)})
	require.Len(t, rows, 3)
	next, ok := pagerOf(res).NextPage()
	require.False(t, ok, "all 3 records were shown, yet NextPage offers %+v", next)
}

// A partition that failed on one page must not silently vanish from the
// next: the next page statement still names it (so it is read, or its
// failure is reported again).
func TestNextPageForgetsAFailedPartition(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 10)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{1}, Err: kerr.UnknownServerError, Count: 1})
	for _, from := range []lang.StartKind{lang.FromOldest, lang.FromNewest} {
		h.Remove()
		h = f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{1}, Err: kerr.UnknownServerError, Count: 1})
		rows, res, err := run(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: from}, Limit: i64(5)})
		require.True(t, result.IsPartial(err), "%v", err)
		require.Len(t, rows, 5)
		next, ok := pagerOf(res).NextPage()
		require.True(t, ok)
		var listed []int32
		for _, po := range next.From.Positions {
			listed = append(listed, po.Partition)
		}
		require.Contains(t, listed, int32(1), "kind %d: the next page %+v drops partition 1 without a word", from, next.From)
	}
	h.Remove()
}

// ListOffsets by time fails for one partition while the others answer:
// FROM TIMESTAMP reads the others and names the failed one.
func TestConsumeFromTimestampWithOnePartitionFailing(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	recs := f.produce(t, "t", 3, 4)
	byTime := func(r kmsg.Request) bool {
		return r.(*kmsg.ListOffsetsRequest).Topics[0].Partitions[0].Timestamp >= 0
	}
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{0}, Err: kerr.UnknownServerError, Count: -1, When: byTime})
	defer h.Remove()
	rows, _, err := run(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromTimestamp, Timestamp: recs[2].Timestamp.UnixMilli()}}) // the oldest record
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "ListOffsets: partition t/0 on broker 0")
	require.Len(t, rows, 8)
	for _, r := range rows {
		require.NotEqual(t, int64(0), r[0])
	}
}

// An aggregate or ORDER BY reads its whole range: it is a CONSUME with
// pages for \next, which has no further page, rather than no pager at all
// (then \next paged the CONSUME before it).
func TestAggregateAndOrderByHaveNoFurtherPage(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _, _ := queryTopic(t, b)
		for _, src := range []string{
			"SELECT count(*) FROM %s LIMIT 1",
			"SELECT key FROM %s ORDER BY key LIMIT 1",
		} {
			src = fmt.Sprintf(src, lang.QuoteName(topic))
			_, _, res := query(t, s, src)
			p, ok := PagerOf(res)
			require.True(t, ok, "%s: the CONSUME \\next sees", src)
			next, more := p.NextPage()
			require.False(t, more, "%s: no further page, got %v", src, next)
		}
	})
}
