package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// fake is a 3-broker kfake cluster with a kql session and an admin client.
type fake struct {
	*kfake.Cluster
	sess  *Session
	kcl   *kgo.Client
	adm   *kadm.Client
	trace *tracer
}

type tracer struct {
	mu     sync.Mutex
	events []kafka.TraceEvent
}

func (tr *tracer) record(e kafka.TraceEvent) {
	tr.mu.Lock()
	tr.events = append(tr.events, e)
	tr.mu.Unlock()
}

func (tr *tracer) reset() { tr.mu.Lock(); tr.events = nil; tr.mu.Unlock() }

// byAPI returns how many requests of each API were made.
func (tr *tracer) byAPI() map[string]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := map[string]int{}
	for _, e := range tr.events {
		out[e.API]++
	}
	return out
}

// failed returns the requests that failed as a whole (no answer, cut off).
func (tr *tracer) failed() []kafka.TraceEvent {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []kafka.TraceEvent
	for _, e := range tr.events {
		if e.Err != nil {
			out = append(out, e)
		}
	}
	return out
}

// count returns how many requests of api went to each broker.
func (tr *tracer) count(api string) map[int32]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := map[int32]int{}
	for _, e := range tr.events {
		if e.API == api {
			out[e.Broker]++
		}
	}
	return out
}

func newFake(t *testing.T) *fake { return newFakeTB(t) }

func newFakeTB(t testing.TB, opts ...kfake.Opt) *fake {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3), kfake.ListenFn(func(network, _ string) (netListener, error) {
		return listenLoopback(network)
	})}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	tr := &tracer{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Bootstrap: c.ListenAddrs(), Trace: tr.record})
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	kcl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(""))
	require.NoError(t, err)
	t.Cleanup(kcl.Close)
	return &fake{Cluster: c, sess: NewSession(cl), kcl: kcl, adm: kadm.NewClient(kcl), trace: tr}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ctxSetup bounds a test's setup whose time is only the machine's (seeding
// records through kgo into kfake) by the test binary's -timeout, less a
// margin for the cleanup to report, instead of ctxT's fixed 30 s; the
// claims the test makes must then not depend on that time.
func ctxSetup(t *testing.T) context.Context {
	dl, ok := t.Deadline()
	if !ok {
		return ctxT(t)
	}
	ctx, cancel := context.WithDeadline(context.Background(), dl.Add(-time.Until(dl)/10))
	t.Cleanup(cancel)
	return ctx
}

// spread creates a topic and moves its leaders round-robin over the brokers,
// so that each broker leads some partitions.
func (f *fake) spread(t *testing.T, topic string, partitions int32) {
	t.Helper()
	_, err := f.adm.CreateTopic(ctxT(t), partitions, 3, nil, topic)
	require.NoError(t, err)
	for p := int32(0); p < partitions; p++ {
		require.NoError(t, f.MoveTopicPartition(topic, p, p%3))
	}
}

// produce writes n records to every partition, with timestamps that
// interleave the partitions, and returns them all.
func (f *fake) produce(t *testing.T, topic string, partitions int32, n int) []*kgo.Record {
	t.Helper()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		for p := int32(0); p < partitions; p++ {
			recs = append(recs, &kgo.Record{
				Topic: topic, Partition: p,
				Key:       []byte(fmt.Sprintf("k-%d-%d", p, i)),
				Value:     []byte(fmt.Sprintf("v-%d-%d", p, i)),
				Timestamp: base.Add(time.Duration(i*int(partitions)+int(partitions-1-p)) * time.Millisecond),
			})
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	return recs
}

func run(t *testing.T, s *Session, st lang.Statement) ([]result.Row, result.Result, error) {
	t.Helper()
	res, err := s.Execute(ctxT(t), st)
	if err != nil {
		return nil, nil, err
	}
	var rows []result.Row
	for {
		r, ok := res.Next()
		if !ok {
			break
		}
		rows = append(rows, r)
	}
	return rows, res, res.Err()
}

// pagerOf is the pager of a CONSUME result; nil for any other result.
func pagerOf(res result.Result) Pager {
	p, _ := PagerOf(res)
	return p
}

func mustRun(t *testing.T, s *Session, st lang.Statement) ([]result.Row, result.Result) {
	t.Helper()
	rows, res, err := run(t, s, st)
	require.NoError(t, err)
	return rows, res
}

func i64(v int64) *int64 { return &v }
func i32(v int32) *int32 { return &v }

func TestDescribeTopicOneListOffsetsPerLeaderBroker(t *testing.T) {
	f := newFake(t)
	f.spread(t, "wide", 60)
	f.produce(t, "wide", 60, 2)
	f.trace.reset()
	rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "wide"})
	require.Len(t, rows, 60)
	for _, r := range rows {
		require.Equal(t, int64(0), r[4], "earliest of partition %v", r[0])
		require.Equal(t, int64(2), r[5], "latest of partition %v", r[0])
		require.Equal(t, int64(2), r[6])
		require.Equal(t, r[0].(int64)%3, r[1], "leader column")
	}
	// Three ListOffsets (the earliest and the last stable offset,
	// concurrently; then the latest), each one request per leader broker.
	require.Equal(t, map[int32]int{0: 3, 1: 3, 2: 3}, f.trace.count("ListOffsets"))
}

func TestDescribeTopicPartitionWithNoAnswerIsNotZero(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 3)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{4}, Err: kerr.UnknownServerError, Count: -1})
	defer h.Remove()
	rows, _, err := run(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	require.Error(t, err)
	require.True(t, result.IsPartial(err))
	require.Contains(t, err.Error(), "partition t/4 on broker 1 (")
	require.Len(t, rows, 6, "the partitions that answered are kept")
	for _, r := range rows {
		if r[0] == int64(4) {
			require.Nil(t, r[4])
			require.Nil(t, r[5])
			require.Nil(t, r[6])
		} else {
			require.Equal(t, int64(3), r[6])
		}
	}
}

func TestLeaderMovedBetweenMetadataAndRequestIsRetriedOnce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 5)
	// The first ListOffsets for partition 2 answers NOT_LEADER, as a broker
	// does right after the leader moved; kql must refresh and ask again.
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{2}, Err: kerr.NotLeaderForPartition, Count: 1})
	defer h.Remove()
	require.NoError(t, f.MoveTopicPartition("t", 2, 0))
	rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	for _, r := range rows {
		require.Equal(t, int64(5), r[6], "partition %v", r[0])
	}
	require.Equal(t, 1, h.Hits())
}

func TestShowGroupsIsTheUnionOverEveryBroker(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	groups := committedGroupsOnEveryBroker(t, f, 2)
	rows, _ := mustRun(t, f.sess, &lang.ShowGroups{})
	var names []string
	coord := map[int64]int{}
	for _, r := range rows {
		names = append(names, r[0].(string))
		coord[r[3].(int64)]++
	}
	slices.Sort(groups)
	require.Equal(t, groups, names)
	require.Equal(t, map[int64]int{0: 2, 1: 2, 2: 2}, coord)
	require.Len(t, f.trace.count("ListGroups"), 3)
}

// committedGroupsOnEveryBroker is groupsOnEveryBroker with an offset
// committed for each group on t/0, so SHOW GROUPS lists them.
func committedGroupsOnEveryBroker(t *testing.T, f *fake, per int) []string {
	t.Helper()
	groups := groupsOnEveryBroker(t, f, per)
	for _, g := range groups {
		_, err := f.adm.CommitOffsets(ctxT(t), g, kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
		require.NoError(t, err)
	}
	return groups
}

// groupsOnEveryBroker picks per-broker group names so each of the 3 brokers
// coordinates `per` of them.
func groupsOnEveryBroker(t *testing.T, f *fake, per int) []string {
	t.Helper()
	count := map[int32]int{}
	var out []string
	for i := 0; len(out) < 3*per && i < 10000; i++ {
		g := fmt.Sprintf("group-%d", i)
		n := f.CoordinatorFor(g)
		if count[n] < per {
			count[n]++
			out = append(out, g)
		}
	}
	require.Len(t, out, 3*per)
	return out
}

func TestShowGroupsNamesABrokerThatDidNotAnswer(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	committedGroupsOnEveryBroker(t, f, 1)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListGroups}, Nodes: []int32{1}, TopLevel: true, Err: kerr.CoordinatorNotAvailable, Count: -1})
	defer h.Remove()
	rows, _, err := run(t, f.sess, &lang.ShowGroups{})
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "broker 1 (")
	require.Len(t, rows, 2)
}

// SHOW GROUPS LIMIT 1 stops at its first row, but the list is still
// partial: the broker that did not answer is named after the row, and the
// script exits 1, not 0 on a list that looks whole.
func TestShowGroupsLimitStaysPartial(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	committedGroupsOnEveryBroker(t, f, 1)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListGroups}, Nodes: []int32{1}, TopLevel: true, Err: kerr.CoordinatorNotAvailable, Count: -1})
	defer h.Remove()
	rows, _, err := run(t, f.sess, parse(t, "SHOW GROUPS LIMIT 1"))
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "broker 1 (")
	require.Len(t, rows, 1)
}

// A broker that has just started (or just became coordinator of more
// groups) answers COORDINATOR_LOAD_IN_PROGRESS until its groups are
// loaded: SHOW GROUPS asks it again shortly instead of calling the list
// partial.
func TestShowGroupsWaitsForABrokerLoadingItsGroups(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	committedGroupsOnEveryBroker(t, f, 1)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListGroups}, Nodes: []int32{1}, TopLevel: true, Err: kerr.CoordinatorLoadInProgress, Count: 2})
	defer h.Remove()
	rows, _ := mustRun(t, f.sess, &lang.ShowGroups{})
	require.Len(t, rows, 3, "every broker's groups, broker 1's once it had loaded them")
	require.Equal(t, map[int32]int{0: 1, 1: 3, 2: 1}, f.trace.count("ListGroups"), "broker 1 asked twice more")
}

func TestDescribeGroup(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	recs := f.produce(t, "t", 3, 10)
	now := time.Now().Truncate(time.Millisecond)
	f.sess.Now = func() time.Time { return now }
	_, err := f.adm.CommitOffsets(ctxT(t), "billing", kadm.OffsetsFromRecords(
		kgo.Record{Topic: "t", Partition: 0, Offset: 3}, kgo.Record{Topic: "t", Partition: 2, Offset: 9}))
	require.NoError(t, err)

	_, _, err = run(t, f.sess, &lang.DescribeGroup{Group: "nope"})
	require.EqualError(t, err, `no consumer group named "nope" (SHOW GROUPS lists the groups)`)

	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "billing"})
	require.Equal(t, []result.Row{
		{"t", int64(0), int64(4), int64(10), int64(6), nil, nil, nil, now.Sub(recs[4*3+0].Timestamp).Milliseconds()},
		{"t", int64(1), nil, int64(10), nil, nil, nil, nil, nil},
		{"t", int64(2), int64(10), int64(10), int64(0), nil, nil, nil, int64(0)},
	}, rows, "a partition with nothing committed has NULL committed offset, lag and lag_ms; lag_ms is the age of the record at the committed offset")
}

func TestDescribeGroupCoordinatorMovedIsRefound(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: "g", Err: kerr.NotCoordinator, Count: 1})
	defer h.Remove()
	f.RehashCoordinators()
	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Len(t, rows, 1)
	require.Equal(t, int64(1), rows[0][2])
	require.Equal(t, 1, h.Hits())
}

func consumeAll(t *testing.T, s *Session, st *lang.Consume) []result.Row {
	rows, _ := mustRun(t, s, st)
	return rows
}

func TestConsumeNewestIsTheNewestNotTheOldest(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 20) // 120 records
	all := consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromOldest}, Limit: i64(1000)})
	require.Len(t, all, 120)
	for i := 1; i < len(all); i++ {
		require.False(t, all[i][2].(time.Time).Before(all[i-1][2].(time.Time)), "rows ordered by timestamp")
	}
	newest := consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(25)})
	require.Equal(t, all[len(all)-25:], newest)
}

func TestConsumeTailPagesNeitherOverlapNorSkip(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 10) // 60 records
	all := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(1000)})
	// New records after page 1 must not shift later pages: the end is pinned.
	res, err := f.sess.Execute(ctxT(t), &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(25)})
	require.NoError(t, err)
	var pages [][]result.Row
	for {
		var page []result.Row
		for {
			r, ok := res.Next()
			if !ok {
				break
			}
			page = append(page, r)
		}
		require.NoError(t, res.Err())
		pages = append(pages, page)
		if len(pages) == 1 {
			f.produce(t, "t", 6, 1)
		}
		next, ok := pagerOf(res).NextPage()
		if !ok {
			break
		}
		require.Equal(t, lang.FromTail, next.From.Kind)
		require.Nil(t, next.Skip, "pages are cut by position, not by a growing SKIP")
		res, err = f.sess.Execute(ctxT(t), next)
		require.NoError(t, err)
	}
	require.Len(t, pages, 3)
	require.Len(t, pages[1], 25, "page 2 is full when older records exist")
	var joined []result.Row
	for i := len(pages) - 1; i >= 0; i-- {
		joined = append(joined, pages[i]...)
	}
	require.Equal(t, all, joined)
}

func TestConsumeForwardPagesWithAnchor(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 10)
	all := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(1000)})
	var joined []result.Row
	var st lang.Statement = &lang.Consume{Topic: "t", Limit: i64(7)}
	for i := 0; i < 10; i++ {
		rows, res := mustRun(t, f.sess, st)
		joined = append(joined, rows...)
		next, ok := pagerOf(res).NextPage()
		if !ok {
			break
		}
		st = next
	}
	require.Equal(t, all, joined)
}

func TestConsumeFromOffsetTimestampAndSkip(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	recs := f.produce(t, "t", 2, 10)
	rows := consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromOffset, Offset: 8}, Limit: i64(100)})
	require.Len(t, rows, 4)
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromOffset, Offset: 99}})
	require.Empty(t, rows, "an offset past the end clamps to the end")
	byTime := slices.Clone(recs)
	slices.SortFunc(byTime, func(a, b *kgo.Record) int { return a.Timestamp.Compare(b.Timestamp) })
	ts := byTime[10].Timestamp.UnixMilli() // the 11th record in time order: 10 are at or after it
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromTimestamp, Timestamp: ts}})
	require.Len(t, rows, 10)
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "t", Skip: i64(15)})
	require.Len(t, rows, 5)
	f.sess.Now = func() time.Time { return byTime[10].Timestamp.Add(time.Minute) }
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromAgo, Ago: time.Minute}})
	require.Len(t, rows, 10)
}

func TestConsumeErrors(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	_, _, err := run(t, f.sess, &lang.Consume{Topic: "t", Partitions: []int32{99}})
	require.EqualError(t, err, `topic "t" has no partition 99 (in PARTITION); its partitions are 0-5`)
	_, _, err = run(t, f.sess, &lang.Consume{Topic: "missing"})
	require.EqualError(t, err, `no topic named "missing" (SHOW TOPICS lists the topics)`)
	var ut *kafka.UnknownTopicError
	require.True(t, errors.As(err, &ut))
}

func TestConsumeKeepsNullDistinctFromEmptyAndDecodesEveryCodec(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	codecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}
	for i, codec := range codecs {
		cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.ProducerBatchCompression(codec))
		require.NoError(t, err)
		rec := &kgo.Record{Topic: "t", Key: []byte{}, Value: []byte(strings.Repeat(fmt.Sprint(i), 100)),
			Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}}}
		require.NoError(t, cl.ProduceSync(ctxT(t), rec).FirstErr())
		cl.Close()
	}
	require.NoError(t, f.kcl.ProduceSync(ctxT(t), &kgo.Record{Topic: "t", Key: []byte("gone"), Value: nil}).FirstErr())
	rows := consumeAll(t, f.sess, &lang.Consume{Topic: "t"})
	require.Len(t, rows, 6)
	for i := range codecs {
		require.Equal(t, []byte{}, rows[i][3], "empty key stays empty, not NULL")
		require.Equal(t, strings.Repeat(fmt.Sprint(i), 100), string(rows[i][4].([]byte)))
		require.Equal(t, []result.Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}}, rows[i][5])
	}
	require.Nil(t, rows[5][4], "a tombstone's value is NULL")
}

func TestProduceRoutesLikeJava(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	rows, _ := mustRun(t, f.sess, &lang.Produce{Topic: "t", Key: &lang.Literal{Bytes: []byte("customer-42")}, Value: &lang.Literal{Bytes: []byte("v")}})
	require.Len(t, rows, 1)
	// murmur2("customer-42") & 0x7fffffff % 6, as Kafka's Java client computes it.
	require.Equal(t, int64(kafka.PartitionForKey("t", []byte("customer-42"), 6)), rows[0][1])
	require.Equal(t, int64(0), rows[0][2])
	rows, _ = mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(5), Value: &lang.Literal{Bytes: []byte("x")}})
	require.Equal(t, int64(5), rows[0][1])
	_, _, err := run(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(6), Value: &lang.Literal{Bytes: []byte("x")}})
	require.EqualError(t, err, `topic "t" has no partition 6; its partitions are 0-5`)
}

func TestCreateAndDropTopic(t *testing.T) {
	f := newFake(t)
	rows, _ := mustRun(t, f.sess, &lang.CreateTopic{Topic: "new", Partitions: i32(4), Replication: i16(3), Configs: []lang.TopicConfig{{Name: "cleanup.policy", Value: "compact"}}})
	require.Equal(t, []result.Row{{"new", "created"}}, rows)
	_, _, err := run(t, f.sess, &lang.CreateTopic{Topic: "new"})
	require.ErrorContains(t, err, "already exists")
	rows, _ = mustRun(t, f.sess, &lang.DescribeTopic{Topic: "new"})
	require.Len(t, rows, 4)
	rows, _ = mustRun(t, f.sess, &lang.DropTopic{Topic: "new"})
	require.Equal(t, []result.Row{{"new", "dropped"}}, rows)
	rows, _ = mustRun(t, f.sess, &lang.DropTopic{Topic: "new", IfExists: true})
	require.Equal(t, []result.Row{{"new", "did not exist"}}, rows)
	_, _, err = run(t, f.sess, &lang.DropTopic{Topic: "new"})
	require.EqualError(t, err, `no topic named "new" (SHOW TOPICS lists the topics)`)
}

func i16(v int16) *int16 { return &v }

func TestExplainShowsOneListOffsetsPerLeader(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.trace.reset()
	rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: &lang.DescribeTopic{Topic: "t"}})
	var lo []result.Row
	for _, r := range rows {
		if r[1] == "ListOffsets" {
			lo = append(lo, r)
		}
	}
	require.Len(t, lo, 9, "earliest, latest and the last stable offset, each one request per leader broker")
	require.Equal(t, []any{int64(2), int64(2), int64(3)}, []any{lo[0][0], lo[3][0], lo[6][0]}, "the earliest offsets and the LSO in one step, concurrently, then the latest")
	require.Equal(t, "t/0, t/3", lo[0][4])
	require.Empty(t, f.trace.count("ListOffsets"), "EXPLAIN runs nothing but metadata")
}

func TestShowTopicsBrokersCluster(t *testing.T) {
	f := newFake(t)
	f.spread(t, "orders", 6)
	f.spread(t, "orders.v2", 1)
	rows, _ := mustRun(t, f.sess, &lang.ShowTopics{})
	require.Equal(t, []result.Row{{"orders", int64(6), int64(3), false, int64(0), int64(0), int64(0), int64(0), int64(0), nil},
		{"orders.v2", int64(1), int64(3), false, int64(0), int64(0), int64(0), int64(0), int64(0), nil}}, rows, "empty topics: 0 bytes, as every broker reports; no records in the last minute, no last write")
	glob := "*.v2"
	rows, _ = mustRun(t, f.sess, &lang.ShowTopics{Like: &glob})
	require.Len(t, rows, 1)
	rows, _ = mustRun(t, f.sess, &lang.ShowBrokers{})
	require.Len(t, rows, 3)
	rows, _ = mustRun(t, f.sess, &lang.ShowCluster{})
	require.Equal(t, "controller", rows[3][0])
	require.Contains(t, rows[3][1], "unknown: ", "kfake answers no DescribeQuorum: the row says so instead of guessing")
	require.NotContains(t, rows[3][1], "\n", "a cell reads on one line")
}

func TestCancelledStatementLeavesTheSessionUsable(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 200)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := f.sess.Execute(ctx, &lang.Consume{Topic: "t", Limit: i64(1000)})
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
	rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	require.Len(t, rows, 3)
	rows = consumeAll(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(10)})
	require.Len(t, rows, 10)
}

func TestConsumeNeverJoinsOrCommits(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	consumeAll(t, f.sess, &lang.Consume{Topic: "t"})
	consumeAll(t, f.sess, &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromNewest}})
	groups, err := f.adm.ListGroups(ctxT(t))
	require.NoError(t, err)
	require.Empty(t, groups.Groups())
	for _, api := range []string{"JoinGroup", "OffsetCommit", "FindCoordinator"} {
		require.Empty(t, f.trace.count(api), api)
	}
}

func TestBrokerRemovedStatementsStillAnswer(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 4)
	mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"}) // the session now knows all three brokers
	require.NoError(t, f.RemoveNode(2))
	rows, _ := mustRun(t, f.sess, &lang.ShowBrokers{})
	require.Len(t, rows, 2)
	rows, _ = mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	for _, r := range rows {
		require.NotEqual(t, int64(2), r[1], "no partition is led by the removed broker")
		require.Equal(t, int64(4), r[6])
	}
	require.Len(t, consumeAll(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(100)}), 24)
}

func TestProduceRetriedAfterTimeoutIsWrittenOnce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	// REQUEST_TIMED_OUT after the append, as a leader answers when its
	// replicas were late: the producer retries, and idempotence must keep
	// the retry from writing the record twice.
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Topic: "t", Err: kerr.RequestTimedOut, Count: 1})
	defer h.Remove()
	rows, _ := mustRun(t, f.sess, &lang.Produce{Topic: "t", Value: &lang.Literal{Bytes: []byte("once")}})
	require.Equal(t, int64(0), rows[0][2])
	require.Equal(t, 1, h.Hits(), "the fault fired")
	all := consumeAll(t, f.sess, &lang.Consume{Topic: "t"})
	require.Len(t, all, 1)
}

func TestInjectedPartitionErrorsKeepTheRestAndNameTheFailed(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 3)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "t", Partitions: []int32{1, 4}, Err: kerr.CorruptMessage, Count: -1})
	defer h.Remove()
	rows, _, err := run(t, f.sess, &lang.Consume{Topic: "t", Limit: i64(100)})
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "partition t/1 on broker 1 (")
	require.Contains(t, err.Error(), "partition t/4 on broker 1 (")
	require.Len(t, rows, 12, "the four partitions that answered are all there")
}
