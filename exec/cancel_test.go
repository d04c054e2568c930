package exec

// Statements at the edges: CONSUME paging over uneven partitions and
// bounds, retries and coordinators, PRODUCE, EXPLAIN, and cancellation,
// leaks and concurrency (split by subject into files of their own).

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
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

// drain reads a result to its end and returns its error.
func drain(res result.Result, err error) error {
	if err != nil {
		return err
	}
	defer res.Close()
	for {
		if _, ok := res.Next(); !ok {
			return res.Err()
		}
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

// ---------------------------------------------------------------- CONSUME

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

// ---------------------------------------------------------------- retries

// One partition fails for good while another needs the retry: the failed
// one must still be reported, not dropped by the retry round. Here the
// fatal failure hits only the latest-offset lookup, so CONSUME turns the
// missing answer into an empty partition and shows 10 of 15 records as if
// that were all.
func TestRetryRoundDropsAFatalPartitionFailure(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	latest := func(r kmsg.Request) bool {
		for _, t := range r.(*kmsg.ListOffsetsRequest).Topics {
			for _, p := range t.Partitions {
				if p.Timestamp == -1 {
					return true
				}
			}
		}
		return false
	}
	fatal := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{1}, Err: kerr.UnknownServerError, Count: -1, When: latest})
	defer fatal.Remove()
	moved := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{2}, Err: kerr.NotLeaderForPartition, Count: 1, When: latest})
	defer moved.Remove()

	rows, _, err := run(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(100)})
	require.Equal(t, 1, moved.Hits())
	require.Error(t, err, "got %d rows and no error: partition 1's records vanished", len(rows))
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "partition t/1 on broker 1")
}

// A fault that fires on the first try and on every retry (kafka.Leaders
// makes 4 rounds) is reported, never dropped; the other partitions keep
// their answers.
func TestFaultOnBothTriesIsReported(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 3)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{2}, Err: kerr.NotLeaderForPartition, Count: 4})
	defer h.Remove()
	rows, _, err := run(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	require.Equal(t, 4, h.Hits())
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "partition t/2 on broker 2")
	require.Contains(t, err.Error(), "NOT_LEADER_FOR_PARTITION")
	require.Len(t, rows, 6)
	for _, r := range rows {
		if r[0] == int64(2) {
			require.Nil(t, r[4], "the failed bound is NULL, not 0")
		} else {
			require.Equal(t, int64(3), r[6])
		}
	}

	// Same on the CONSUME path: partition 2 is named, the rest is read.
	// (Count -1: on every try; kafka.Leaders makes several rounds.)
	h2 := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "t", Partitions: []int32{2}, Err: kerr.NotLeaderForPartition, Count: -1})
	defer h2.Remove()
	rows, _, err = run(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(100)})
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "partition t/2")
	require.Len(t, rows, 15)
}

// A leader that moves between two fetches of one CONSUME: every record is
// still read, and the statement does not keep asking the old leader first.
func TestLeaderMovedMidConsume(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	big := make([]byte, 64<<10)
	rand.Read(big) // incompressible
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.DefaultProduceTopic("t"))
	require.NoError(t, err)
	for i := 0; i < 80; i++ { // ~5 MiB in 80 batches: several 1 MiB fetches
		require.NoError(t, cl.ProduceSync(ctxT(t), &kgo.Record{Value: big}).FirstErr())
	}
	cl.Close()

	res, err := f.sess.Execute(ctxT(t), &lang.Consume{Topic: "t", Limit: i64(1000)})
	require.NoError(t, err)
	_, ok := res.Next()
	require.True(t, ok)
	t.Logf("fetches before the move: %v", f.trace.count("Fetch"))
	f.trace.reset()
	require.NoError(t, f.MoveTopicPartition("t", 0, 2))
	n := 1
	for {
		if _, ok := res.Next(); !ok {
			break
		}
		n++
	}
	require.NoError(t, res.Err())
	require.Equal(t, 80, n)
	fetches := f.trace.count("Fetch")
	t.Logf("fetches after the move: %v, metadata: %v", fetches, f.trace.count("Metadata"))
	require.Greater(t, fetches[2], 1, "the rest was read from the new leader over several fetches")
	// The read keeps the next Fetch in flight: one may have gone to the old
	// leader before the move; after that, one NOT_LEADER at most.
	require.LessOrEqual(t, fetches[0], 2, "after one NOT_LEADER the old leader should not be asked again")
}

// ---------------------------------------------------------------- coordinators

func TestCoordinatorLoadingThenSuccess(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 4}))
	require.NoError(t, err)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeGroups}, Group: "g", Err: kerr.CoordinatorLoadInProgress, Count: 2})
	defer h.Remove()
	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Equal(t, 2, h.Hits())
	require.Len(t, rows, 1)
	require.Equal(t, int64(5), rows[0][2])
}

func TestNotCoordinatorForeverIsAnErrorNamingTheGroup(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 4}))
	require.NoError(t, err)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: "g", Err: kerr.NotCoordinator, Count: -1})
	defer h.Remove()
	start := time.Now()
	_, _, err = run(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Error(t, err)
	require.Contains(t, err.Error(), `group "g" on coordinator broker`)
	require.Contains(t, err.Error(), "NOT_COORDINATOR")
	require.Greater(t, h.Hits(), 1, "re-found and retried")
	require.Less(t, time.Since(start), 10*time.Second, "gives up instead of retrying forever")
	// The session still works.
	h.Remove()
	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Len(t, rows, 1)
}

// DESCRIBE GROUP of a live kgo consumer group (classic protocol): each
// owned partition shows its member, client id and host.
func TestDescribeGroupShowsLiveMembers(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 4)
	cons, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.ConsumerGroup("live"), kgo.ConsumeTopics("t"),
		kgo.ClientID("review-consumer"), kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cons.Close()
	got := 0
	for got < 12 {
		fs := cons.PollFetches(ctxT(t))
		require.NoError(t, fs.Err0())
		got += fs.NumRecords()
	}
	require.NoError(t, cons.CommitUncommittedOffsets(ctxT(t)))

	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "live"})
	require.Len(t, rows, 3)
	for _, r := range rows {
		require.Equal(t, int64(4), r[2], "committed")
		require.Equal(t, int64(0), r[4], "lag")
		require.NotNil(t, r[5], "member_id of partition %v", r[1])
		require.Equal(t, "review-consumer", r[6])
		require.NotEmpty(t, r[7], "host")
	}
	groups, _ := mustRun(t, f.sess, &lang.ShowGroups{})
	// members 1, the topic it reads, lag 0.
	require.Equal(t, []result.Row{{"live", "Stable", "consumer", int64(f.CoordinatorFor("live")), int64(1), "t", int64(0)}}, groups)
}

// ---------------------------------------------------------------- PRODUCE

func TestProduceNullsAndEmpties(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	null := &lang.Literal{Null: true}
	empty := &lang.Literal{Bytes: []byte{}}
	mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Key: null, Value: null})
	mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Key: empty, Value: empty,
		Headers: []lang.Header{{Key: "a", Value: lang.Literal{Null: true}}, {Key: "a", Value: lang.Literal{Bytes: []byte{}}}, {Key: "b", Value: lang.Literal{Bytes: []byte("x")}}}})
	rows := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Partitions: []int32{1}})
	require.Len(t, rows, 2)
	require.Nil(t, rows[0][3], "null key")
	require.Nil(t, rows[0][4], "null value (a tombstone)")
	require.Equal(t, []byte{}, rows[1][3], "empty key is not NULL")
	require.Equal(t, []byte{}, rows[1][4], "empty value is not NULL")
	require.Equal(t, []result.Header{{Key: "a", Value: nil}, {Key: "a", Value: []byte{}}, {Key: "b", Value: []byte("x")}}, rows[1][5])

	// An empty (non-null) key is hashed like any key, as Java does.
	for _, k := range []string{"", "a", "customer-42", "\xff\xfe\x00"} {
		res, _ := mustRun(t, f.sess, &lang.Produce{Topic: "t", Key: &lang.Literal{Bytes: []byte(k)}, Value: empty})
		require.Equal(t, int64(javaMurmur2([]byte(k))&0x7fffffff%3), res[0][1], "key %q", k)
	}
}

// javaMurmur2 is org.apache.kafka.common.utils.Utils.murmur2, transcribed.
func javaMurmur2(data []byte) uint32 {
	const seed, m, r = uint32(0x9747b28c), uint32(0x5bd1e995), 24
	n := len(data)
	h := seed ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

func TestProduceToAPartitionWhoseLeaderMoved(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	rows, _ := mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Value: &lang.Literal{Bytes: []byte("before")}})
	require.Equal(t, int64(0), rows[0][2])
	require.NoError(t, f.MoveTopicPartition("t", 1, 0))
	rows, _ = mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Value: &lang.Literal{Bytes: []byte("after")}})
	require.Equal(t, int64(1), rows[0][1])
	require.Equal(t, int64(1), rows[0][2])
	got := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Partitions: []int32{1}})
	require.Len(t, got, 2, "written once each")
}

// Partitions added by another tool (kafka-topics --alter) during the
// session, or a topic dropped and created again with more partitions: kql's
// own metadata knows the new partition, so PRODUCE must write to it instead
// of failing on the producer's stale view.
func TestProduceToAPartitionAddedDuringTheSession(t *testing.T) {
	f := newFake(t)
	mustRun(t, f.sess, &lang.CreateTopic{Topic: "t", Partitions: i32(2), Replication: i16(3)})
	mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Value: &lang.Literal{Bytes: []byte("old")}})
	_, err := f.adm.UpdatePartitions(ctxT(t), 4, "t")
	require.NoError(t, err)
	rows, _, err := run(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(3), Value: &lang.Literal{Bytes: []byte("new")}})
	require.NoError(t, err, "PRODUCE into a partition added by another tool")
	require.Equal(t, int64(3), rows[0][1])

	mustRun(t, f.sess, &lang.DropTopic{Topic: "t"})
	mustRun(t, f.sess, &lang.CreateTopic{Topic: "t", Partitions: i32(6), Replication: i16(3)})
	rows, _, err = run(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(5), Value: &lang.Literal{Bytes: []byte("new")}})
	require.NoError(t, err, "PRODUCE after DROP and CREATE with more partitions")
	require.Equal(t, int64(5), rows[0][1])
	require.Equal(t, int64(0), rows[0][2])
}

// ---------------------------------------------------------------- admin

func TestCreateTopicErrorsAreClear(t *testing.T) {
	f := newFake(t)
	_, _, err := run(t, f.sess, &lang.CreateTopic{Topic: "t", Partitions: i32(1), Replication: i16(5)})
	require.ErrorContains(t, err, `CREATE TOPIC "t"`)
	require.ErrorContains(t, err, "INVALID_REPLICATION_FACTOR")
	_, _, err = run(t, f.sess, &lang.DropTopic{Topic: "nope"})
	require.EqualError(t, err, `no topic named "nope" (SHOW TOPICS lists the topics)`)
	rows, _ := mustRun(t, f.sess, &lang.DropTopic{Topic: "nope", IfExists: true})
	require.Equal(t, []result.Row{{"nope", "did not exist"}}, rows)
}

// ---------------------------------------------------------------- EXPLAIN

func TestExplainEveryStatementRunsNothing(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	stmts := map[string]lang.Statement{
		"show topics":    &lang.ShowTopics{},
		"show brokers":   &lang.ShowBrokers{},
		"show cluster":   &lang.ShowCluster{},
		"show groups":    &lang.ShowGroups{},
		"describe topic": &lang.DescribeTopic{Topic: "t"},
		"describe group": &lang.DescribeGroup{Group: "g"},
		"consume":        &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromAgo, Ago: time.Hour}},
		"produce":        &lang.Produce{Topic: "t", Key: &lang.Literal{Bytes: []byte("k")}, Value: &lang.Literal{Bytes: []byte("v")}},
		"create":         &lang.CreateTopic{Topic: "new", Partitions: i32(3)},
		"drop":           &lang.DropTopic{Topic: "t"},
	}
	for name, st := range stmts {
		t.Run(name, func(t *testing.T) {
			f.trace.reset()
			rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: st})
			require.NotEmpty(t, rows)
			for _, api := range []string{"ListOffsets", "Fetch", "Produce", "CreateTopics", "DeleteTopics", "ListGroups", "DescribeGroups", "OffsetFetch", "InitProducerID"} {
				require.Empty(t, f.trace.count(api), "EXPLAIN %s sent %s", name, api)
			}
			var apis []string
			for _, r := range rows {
				apis = append(apis, r[1].(string))
			}
			switch name {
			case "show groups":
				require.Equal(t, 3, strings.Count(strings.Join(apis, " "), "ListGroups"), "one per broker")
			case "consume":
				require.Contains(t, apis, "Fetch")
			case "produce":
				require.Contains(t, apis, "Produce")
				last := rows[len(rows)-1]
				require.Equal(t, fmt.Sprintf("t/%d", javaMurmur2([]byte("k"))&0x7fffffff%3), last[4], "the key's partition")
			case "create":
				require.Contains(t, apis, "CreateTopics")
			case "drop":
				require.Contains(t, apis, "DeleteTopics")
			}
		})
	}
	rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	require.Len(t, rows, 3, "EXPLAIN DROP TOPIC dropped nothing")
}

// EXPLAIN PRODUCE of a keyless record names one partition; the PRODUCE that
// follows should write where EXPLAIN said (or EXPLAIN should say "round
// robin" instead of naming one).
func TestExplainProduceKeylessNamesAnotherPartition(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	st := &lang.Produce{Topic: "t", Value: &lang.Literal{Bytes: []byte("v")}}
	plan, _ := mustRun(t, f.sess, &lang.Explain{Stmt: st})
	last := plan[len(plan)-1]
	rows, _ := mustRun(t, f.sess, st)
	require.Equal(t, fmt.Sprintf("t/%d", rows[0][1]), last[4], "EXPLAIN said %v, PRODUCE wrote partition %v", last[4], rows[0][1])
}

// ---------------------------------------------------------------- cancellation, leaks, concurrency

// Every statement type, cancelled while it runs (a fault delays the broker's
// answer... kfake cannot delay, so the context is cancelled up front and
// mid-stream), returns promptly, and the next statement works.
func TestCancelEveryStatementThenNextWorks(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 50)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	stmts := []lang.Statement{
		&lang.ShowTopics{}, &lang.ShowBrokers{}, &lang.ShowCluster{}, &lang.ShowGroups{},
		&lang.DescribeTopic{Topic: "t"}, &lang.DescribeGroup{Group: "g"},
		&lang.Consume{Topic: "t", Limit: i64(1000)}, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(1000)},
		&lang.Produce{Topic: "t", Value: &lang.Literal{Bytes: []byte("v")}},
		&lang.CreateTopic{Topic: "c", Partitions: i32(1)}, &lang.DropTopic{Topic: "c", IfExists: true},
		&lang.Explain{Stmt: &lang.DescribeGroup{Group: "g"}},
	}
	for _, st := range stmts {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		res, err := f.sess.Execute(ctx, st)
		if err == nil {
			for {
				if _, ok := res.Next(); !ok {
					break
				}
			}
			err = res.Err()
			res.Close()
		}
		require.Less(t, time.Since(start), 5*time.Second, "%T returns promptly when cancelled", st)
		if err != nil {
			require.ErrorIs(t, err, context.Canceled, "%T: a cancelled statement says so: %v", st, err)
		}
		rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
		require.Len(t, rows, 3, "the statement after a cancelled %T works", st)
	}

	// Cancelled mid-stream, on both directions of CONSUME.
	for _, from := range []lang.StartKind{lang.FromOldest, lang.FromNewest} {
		ctx, cancel := context.WithCancel(context.Background())
		res, err := f.sess.Execute(ctx, &lang.Consume{Topic: "t", From: &lang.Start{Kind: from}, Limit: i64(150)})
		require.NoError(t, err)
		_, ok := res.Next()
		require.True(t, ok)
		cancel()
		for {
			if _, ok := res.Next(); !ok {
				break
			}
		}
		res.Close()
		require.Len(t, consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: from}, Limit: i64(150)}), 150)
	}
}

// No statement leaves a goroutine behind once its result is read and the
// cluster is closed.
func TestNoGoroutineOutlivesTheSession(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ListenFn(func(network, _ string) (netListener, error) { return listenLoopback(network) }))
		require.NoError(t, err)
		defer c.Close()
		f := &fake{Cluster: c}
		ctx := ctxT(t)
		cl, err := kafka.Dial(ctx, kafka.Config{Bootstrap: c.ListenAddrs()})
		require.NoError(t, err)
		defer cl.Close()
		f.sess = NewSession(cl)
		for _, st := range []lang.Statement{
			&lang.CreateTopic{Topic: "t", Partitions: i32(3)},
			&lang.Produce{Topic: "t", Key: &lang.Literal{Bytes: []byte("k")}, Value: &lang.Literal{Bytes: []byte("v")}},
			&lang.Consume{Topic: "t"}, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}},
			&lang.DescribeTopic{Topic: "t"}, &lang.ShowGroups{}, &lang.ShowCluster{}, &lang.DropTopic{Topic: "t"},
		} {
			mustRun(t, f.sess, st)
		}
		_, err = f.sess.Topics(ctx)
		require.NoError(t, err)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%d goroutines before, %d after:\n%s", before, n, buf)
	}
}

// Topics() and Groups() (the completer) run while a statement streams; run
// under -race.
func TestCompletionNamesWhileAStatementRuns(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 200)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				f.sess.namesMu.Lock()
				f.sess.namesAt = time.Time{} // force a refresh each time
				f.sess.namesMu.Unlock()
				topics, err := f.sess.Topics(context.Background())
				if err == nil && !slices.Contains(topics, "t") {
					t.Errorf("Topics() = %v", topics)
				}
				groups, err := f.sess.Groups(context.Background())
				if err == nil && !slices.Contains(groups, "g") {
					t.Errorf("Groups() = %v", groups)
				}
			}
		}()
	}
	for _, st := range []*lang.Consume{{Topic: "t", Limit: i64(1200)}, {Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(700)}} {
		rows := consumeAll(t, f.sess, st)
		require.Len(t, rows, int(*st.Limit))
	}
	mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	close(stop)
	wg.Wait()
}

// ---------------------------------------------------------------- both backends

// consumeOnce joins a consumer group with a real kgo consumer, polls every
// record of topic and commits, and leaves the member in the group.
func consumeOnce(t *testing.T, b kafkatest.Backend, group, topic string, want int, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID("review-" + group),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)
	cons := kafkatest.Client(t, b, all...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got < want; {
		fs := cons.PollFetches(ctx)
		require.NoError(t, fs.Err0())
		got += fs.NumRecords()
	}
	require.NoError(t, cons.CommitUncommittedOffsets(ctx))
	return cons
}

// A consumer group with a live member, classic protocol: DESCRIBE GROUP
// fills member_id, client_id and host for every partition the member owns.
func TestDescribeGroupLiveClassicMember(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _ := spreadTopic(t, b, 3)
		group := kafkatest.GroupName(t)
		consumeOnce(t, b, group, topic, 18)
		rows, _ := mustRun(t, s, &lang.DescribeGroup{Group: group})
		require.Len(t, rows, 6)
		for _, r := range rows {
			require.Equal(t, []any{int64(3), int64(3), int64(0)}, []any{r[2], r[3], r[4]}, "committed, end, lag of %v", r[1])
			require.NotEmpty(t, r[5], "member_id of partition %v", r[1])
			require.Equal(t, "review-"+group, r[6], "client_id")
			require.NotEmpty(t, r[7], "host")
		}
	})
}

// Kafka 4 consumer groups (KIP-848, group.protocol=consumer, what kgo's
// ServerSideBalancer and Java's group.protocol=consumer use) are not classic
// groups: DescribeGroups answers GROUP_ID_NOT_FOUND for them. DESCRIBE GROUP
// must still describe a group that SHOW GROUPS lists.
func TestDescribeGroupOfAKIP848ConsumerGroup(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _ := spreadTopic(t, b, 3)
		group := kafkatest.GroupName(t)
		consumeOnce(t, b, group, topic, 18, kgo.ServerSideBalancer())
		pattern := group
		listed, _ := mustRun(t, s, &lang.ShowGroups{Like: &pattern})
		require.Len(t, listed, 1, "SHOW GROUPS lists the group")
		rows, _, err := run(t, s, &lang.DescribeGroup{Group: group})
		require.NoError(t, err)
		require.Len(t, rows, 6)
		for _, r := range rows {
			require.Equal(t, int64(3), r[2], "committed offset of partition %v", r[1])
			if b.Name() == kafkatest.Kafka {
				require.NotEmpty(t, r[5], "member_id of partition %v", r[1])
			}
		}
	})
}

// A bad topic config is an error that names the config. Real Kafka only:
// kfake accepts any config, so there is nothing to check there.
func TestCreateTopicBadConfigNamesIt(t *testing.T) {
	func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		name := kafkatest.TopicName(t)
		_, _, err := run(t, s, &lang.CreateTopic{Topic: name, Configs: []lang.TopicConfig{{Name: "retention.ms", Value: "soon"}}})
		require.ErrorContains(t, err, fmt.Sprintf("CREATE TOPIC %q", name))
		require.ErrorContains(t, err, "retention.ms")
		_, _, err = run(t, s, &lang.CreateTopic{Topic: name, Configs: []lang.TopicConfig{{Name: "no.such.config", Value: "1"}}})
		require.ErrorContains(t, err, "no.such.config")
		_, _, err = run(t, s, &lang.CreateTopic{Topic: name, Replication: i16(4)})
		require.ErrorContains(t, err, "INVALID_REPLICATION_FACTOR")
		require.ErrorContains(t, err, "3 broker")
	}(t, kafkatest.Shared(t))
}

// freezer makes a kfake broker hang: while frozen, it accepts requests but
// writes no response, like a broker in a long GC pause or a stalled disk.
type freezer struct {
	net.Listener
	frozen atomic.Bool
}

type freezeConn struct {
	net.Conn
	f      *freezer
	closed atomic.Bool
}

func (l *freezer) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &freezeConn{Conn: c, f: l}, nil
}

func (c *freezeConn) Write(b []byte) (int, error) {
	for c.f.frozen.Load() && !c.closed.Load() {
		time.Sleep(5 * time.Millisecond)
	}
	return c.Conn.Write(b)
}

func (c *freezeConn) Close() error { c.closed.Store(true); return c.Conn.Close() }

// A broker that hangs (accepts, never answers) must not make statements that
// any broker can answer hang as well: SHOW TOPICS, SHOW BROKERS and the
// Metadata step of every statement go to "any broker", and two of three
// answer at once.
func TestHungBrokerStallsAnyBrokerStatements(t *testing.T) {
	f, freezers := newFreezableFake(t)
	s := f.sess
	brokers, _ := mustRun(t, s, &lang.ShowBrokers{})
	hung := freezers[fmt.Sprintf("%s:%d", brokers[2][1], brokers[2][2])]
	require.NotNil(t, hung)
	hung.frozen.Store(true)
	t.Cleanup(func() { hung.frozen.Store(false) })

	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		start := time.Now()
		err := drain(s.Execute(ctx, &lang.ShowTopics{}))
		cancel()
		require.NoError(t, err, "SHOW TOPICS #%d, two brokers of three answer", i+1)
		require.Less(t, time.Since(start), 3*time.Second, "SHOW TOPICS #%d", i+1)
	}
}

// newFreezableFake is newFake with brokers that can be made to hang.
func newFreezableFake(t *testing.T) (*fake, map[string]*freezer) {
	t.Helper()
	var mu sync.Mutex
	freezers := map[string]*freezer{}
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		l, err := listenLoopback(network)
		if err != nil {
			return nil, err
		}
		fl := &freezer{Listener: l}
		mu.Lock()
		freezers[l.Addr().String()] = fl
		mu.Unlock()
		return fl, nil
	}))
	require.NoError(t, err)
	t.Cleanup(func() {
		for _, fl := range freezers {
			fl.frozen.Store(false)
		}
		c.Close()
	})
	tr := &tracer{}
	cl, err := kafka.Dial(ctxT(t), kafka.Config{Bootstrap: c.ListenAddrs(), Trace: tr.record})
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	kcl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	t.Cleanup(kcl.Close)
	return &fake{Cluster: c, sess: NewSession(cl), kcl: kcl, adm: kadm.NewClient(kcl), trace: tr}, freezers
}

// A statement cancelled while its request is in flight (every broker holds
// its answer) returns promptly with context.Canceled, and once the brokers
// answer again the next statement works: the abandoned answers do not
// confuse it.
func TestCancelInFlightThenNextWorks(t *testing.T) {
	cases := []struct {
		key kmsg.Key
		st  lang.Statement
	}{
		{kmsg.ListOffsets, &lang.DescribeTopic{Topic: "t"}},
		{kmsg.Fetch, &lang.Consume{Topic: "t"}},
		{kmsg.Fetch, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}}},
		{kmsg.ListGroups, &lang.ShowGroups{}},
		{kmsg.OffsetFetch, &lang.DescribeGroup{Group: "g"}},
		{kmsg.Produce, &lang.Produce{Topic: "t", Value: &lang.Literal{Bytes: []byte("v")}}},
		{kmsg.CreateTopics, &lang.CreateTopic{Topic: "c", Partitions: i32(1)}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s during %T", tc.key.Name(), tc.st), func(t *testing.T) {
			f, freezers := newFreezableFake(t)
			f.spread(t, "t", 3)
			f.produce(t, "t", 3, 5)
			_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
			require.NoError(t, err)
			freeze := func(on bool) {
				for _, fl := range freezers {
					fl.frozen.Store(on)
				}
			}
			held := make(chan struct{})
			f.ControlKey(int16(tc.key), func(kmsg.Request) (kmsg.Response, error, bool) {
				f.DropControl() // only the first such request
				freeze(true)    // its answer, and every later one, waits
				close(held)
				return nil, nil, false
			})
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-held; time.Sleep(200 * time.Millisecond); cancel() }()
			done := make(chan error, 1)
			go func() { done <- drain(f.sess.Execute(ctx, tc.st)) }()
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				freeze(false) // let the statement finish before the test ends
				<-done
				t.Fatalf("%T did not return within 5 s of its cancellation", tc.st)
			}
			require.ErrorIs(t, err, context.Canceled)
			freeze(false)

			next, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel2()
			err = drain(f.sess.Execute(next, tc.st))
			if _, ok := tc.st.(*lang.CreateTopic); ok && err != nil {
				require.ErrorContains(t, err, "already exists", "the held create went through after all")
				return
			}
			require.NoError(t, err, "the same statement, run again")
			rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
			require.Len(t, rows, 3)
		})
	}
}

// CREATE TOPIC, then at once the statements a user types next. The next
// Metadata goes to another broker (round robin), which may not have the new
// topic yet.
func TestStatementsRightAfterCreateTopic(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		for i := 0; i < 8; i++ {
			name := kafkatest.TopicName(t)
			mustRun(t, s, &lang.CreateTopic{Topic: name, Partitions: i32(3), Replication: i16(3)})
			_, _, err := run(t, s, &lang.Produce{Topic: name, Partition: i32(int32(i % 3)), Value: &lang.Literal{Bytes: []byte("v")}})
			require.NoError(t, err, "PRODUCE right after CREATE TOPIC (round %d)", i)
			rows, _, err := run(t, s, &lang.DescribeTopic{Topic: name})
			require.NoError(t, err, "DESCRIBE TOPIC right after CREATE TOPIC (round %d)", i)
			require.Len(t, rows, 3)
			mustRun(t, s, &lang.DropTopic{Topic: name})
			_, _, err = run(t, s, &lang.DescribeTopic{Topic: name})
			require.Error(t, err, "DESCRIBE TOPIC right after DROP TOPIC (round %d)", i)
		}
	})
}

// A group that committed offsets for a topic that was dropped since.
func TestDescribeGroupAfterItsTopicWasDropped(t *testing.T) {
	f := newFake(t)
	f.spread(t, "keep", 1)
	f.spread(t, "gone", 2)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(
		kgo.Record{Topic: "keep", Partition: 0, Offset: 0}, kgo.Record{Topic: "gone", Partition: 1, Offset: 0}))
	require.NoError(t, err)
	mustRun(t, f.sess, &lang.DropTopic{Topic: "gone"})
	rows, _, err := run(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	require.Equal(t, "keep", rows[len(rows)-1][0])
	for _, r := range rows {
		require.NotEqual(t, "", r[0], "a row with no topic name")
	}
}

// The completer's names follow the session's own CREATE and DROP at once,
// not up to 30 s later.
func TestCompletionNamesFollowCreateAndDrop(t *testing.T) {
	f := newFake(t)
	_, err := f.sess.Topics(ctxT(t))
	require.NoError(t, err)
	mustRun(t, f.sess, &lang.CreateTopic{Topic: "fresh", Partitions: i32(1)})
	names, err := f.sess.Topics(ctxT(t))
	require.NoError(t, err)
	require.Contains(t, names, "fresh")
	mustRun(t, f.sess, &lang.DropTopic{Topic: "fresh"})
	names, err = f.sess.Topics(ctxT(t))
	require.NoError(t, err)
	require.NotContains(t, names, "fresh")
}
