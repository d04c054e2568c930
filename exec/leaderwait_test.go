package exec

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// A read that loses a partition's leader waits for a new one and resumes
// the partition where it was; only a partition with no leader for longer
// than the bound makes the result partial. kfake plays the lost leader:
// a Fetch fault (NOT_LEADER_OR_FOLLOWER), dropped connections, or a Fetch
// held on a control hook (a hung broker).

const (
	waitTopic      = "t"
	waitPartitions = 3
	waitRounds     = 40 // batches per partition: a partition takes several Fetches
	waitPerRound   = 10
)

// waitFake is a 3-partition topic led one partition per broker, written in
// many small batches, read with a small budget: every partition takes
// several Fetches, so a fault after the first one hits a read under way.
func waitFake(t *testing.T) *fake {
	t.Helper()
	f := newFake(t)
	f.spread(t, waitTopic, waitPartitions)
	base := time.Now().Add(-time.Hour)
	for r := range waitRounds {
		var recs []*kgo.Record
		for p := range int32(waitPartitions) {
			for i := range waitPerRound {
				n := r*waitPerRound + i
				recs = append(recs, &kgo.Record{Topic: waitTopic, Partition: p, Value: []byte(fmt.Sprintf("p%d-%03d-%s", p, n, strings.Repeat("x", 40))),
					Timestamp: base.Add(time.Duration(n*waitPartitions+int(p)) * time.Millisecond)})
			}
		}
		require.NoError(t, produceManual(t, f, recs))
	}
	f.sess.ReadBudget = 16 << 10
	return f
}

// produceManual writes the records to the partitions they name, as one
// batch per partition.
func produceManual(t *testing.T, f *fake, recs []*kgo.Record) error {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	return cl.ProduceSync(ctxT(t), recs...).FirstErr()
}

// requireEveryRecordOnce requires every record of every partition of
// waitTopic among got, each once.
func requireEveryRecordOnce(t *testing.T, got map[int32][]int64) {
	t.Helper()
	for p := range int32(waitPartitions) {
		requireExactlyOnce(t, got, p, waitTotal)
	}
}

// hangLeader holds, unanswered until the test ends, each key request to
// broker leader that hold picks: a hung leader.
func hangLeader(t *testing.T, f *fake, key kmsg.Key, leader int32, hold func(kmsg.Request) bool) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.ControlKey(key.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if f.CurrentNode() == leader && hold(req) {
			f.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
}

// pastFirstFetch matches a Fetch that asks for partition p past its first
// record: the read is under way.
func pastFirstFetch(p int32) func(kmsg.Request) bool {
	return func(req kmsg.Request) bool {
		for _, rt := range req.(*kmsg.FetchRequest).Topics {
			for _, rp := range rt.Partitions {
				if rp.Partition == p && rp.FetchOffset > 0 {
					return true
				}
			}
		}
		return false
	}
}

// consumeAll runs CONSUME of the whole topic in the background.
type backgroundRead struct {
	res  result.Result
	done chan struct{}
	rows []result.Row
	err  error
	took time.Duration
}

func startConsume(t *testing.T, f *fake, ctx context.Context) *backgroundRead {
	t.Helper()
	start := time.Now()
	res, err := f.sess.Execute(ctx, &lang.Consume{Topic: waitTopic, LimitAll: true})
	require.NoError(t, err)
	b := &backgroundRead{res: res, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		defer res.Close()
		for {
			row, ok := res.Next()
			if !ok {
				break
			}
			b.rows = append(b.rows, row)
		}
		b.err = res.Err()
		b.took = time.Since(start)
	}()
	t.Cleanup(func() { <-b.done })
	return b
}

func (b *backgroundRead) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(within):
		t.Fatalf("the read did not end within %s", within)
	}
}

// waitUntilWaiting returns once the read says it waits for a leader of
// partition p (what progress shows), with what it says.
func (b *backgroundRead) waitUntilWaiting(t *testing.T, p int32) result.Waiting {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, w := range b.res.Stats().Waiting() {
			if w.Partition == fmt.Sprintf("t/%d", p) {
				return w
			}
		}
		select {
		case <-b.done:
			t.Fatalf("the read ended (%v) without waiting for a leader of partition %d", b.err, p)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("the read never said it waits for a leader of partition %d", p)
	return result.Waiting{}
}

// offsets checks that partition p's rows are offsets 0..want-1, each once,
// in order, and returns how many there are.
func offsetsOf(t *testing.T, rows []result.Row) map[int32][]int64 {
	t.Helper()
	got := map[int32][]int64{}
	for _, r := range rows {
		p, err1 := strconv.ParseInt(fmt.Sprint(r[0]), 10, 32)
		o, err2 := strconv.ParseInt(fmt.Sprint(r[1]), 10, 64)
		require.True(t, err1 == nil && err2 == nil, "row %v: want partition, offset", r[:2])
		got[int32(p)] = append(got[int32(p)], o)
	}
	return got
}

func requireExactlyOnce(t *testing.T, got map[int32][]int64, p int32, want int) {
	t.Helper()
	offs := got[p]
	require.Len(t, offs, want, "partition %d", p)
	for i, o := range offs {
		require.Equal(t, int64(i), o, "partition %d row %d: a duplicate or a gap", p, i)
	}
}

const waitTotal = waitRounds * waitPerRound

// hangPartitionOneLeaderOnce holds, unanswered, the first Fetch of
// partition 1 its leader gets after the read's first one, and returns that
// leader.
func hangPartitionOneLeaderOnce(t *testing.T, f *fake) int32 {
	t.Helper()
	leader := f.LeaderFor(waitTopic, 1)
	var holding atomic.Bool
	hangLeader(t, f, kmsg.Fetch, leader, func(req kmsg.Request) bool {
		return pastFirstFetch(1)(req) && holding.CompareAndSwap(false, true)
	})
	return leader
}

// requireOnlyPartitionOneCutShort says a read whose partition 1 lost its
// leader wrote partitions 0 and 2 whole and partition 1 from its start up
// to where it stopped: each record once, no gap.
func requireOnlyPartitionOneCutShort(t *testing.T, rows []result.Row) {
	t.Helper()
	got := offsetsOf(t, rows)
	requireExactlyOnce(t, got, 0, waitTotal)
	requireExactlyOnce(t, got, 2, waitTotal)
	require.NotEmpty(t, got[1])
	requireExactlyOnce(t, got, 1, len(got[1]))
}

// The leader of partition 1 says NOT_LEADER_OR_FOLLOWER after the first
// Fetch; while it does, the read waits (and says so); the leader moves to
// another broker and the read resumes there: every record once, no error.
func TestConsumeWaitsForMovedLeaderAndResumes(t *testing.T) {
	f := waitFake(t)
	old := f.LeaderFor(waitTopic, 1)
	fault := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1,
		When: pastFirstFetch(1)})
	b := startConsume(t, f, ctxT(t))
	w := b.waitUntilWaiting(t, 1)
	require.Equal(t, old, w.Broker, "the broker partition 1 was read from")
	require.NotEmpty(t, w.Addr)

	moved := (old + 1) % 3
	require.NoError(t, f.MoveTopicPartition(waitTopic, 1, moved))
	f.trace.reset()
	fault.Remove()
	b.wait(t, 20*time.Second)
	require.NoError(t, b.err)
	got := offsetsOf(t, b.rows)
	requireEveryRecordOnce(t, got)
	// Partition 1 was read from its new leader once it moved.
	f.trace.mu.Lock()
	defer f.trace.mu.Unlock()
	sawNew := false
	for _, e := range f.trace.events {
		for _, it := range e.Items {
			if e.API == "Fetch" && e.Err == nil && strings.HasPrefix(it, waitTopic+"/1@") && e.Broker == moved {
				sawNew = true
			}
		}
	}
	require.True(t, sawNew, "no Fetch of partition 1 went to its new leader, broker %d", moved)
}

// The leader of partition 1 drops the connection of every Fetch (a broker
// that crashed and restarts) until the read says it waits; then it answers
// again: the read resumes where it was.
func TestConsumeRidesOutDroppedConnections(t *testing.T) {
	f := waitFake(t)
	leader := f.LeaderFor(waitTopic, 1)
	var waited atomic.Bool
	var dropped atomic.Int64
	f.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		// Healed once the read said it waits and asked again while it
		// waited: more than Leaders' own four rounds.
		if (waited.Load() && dropped.Load() >= 8) || f.CurrentNode() != leader || !pastFirstFetch(1)(req) {
			return nil, nil, false
		}
		dropped.Add(1)
		return nil, errors.New("the test drops the connection"), true
	})
	b := startConsume(t, f, ctxT(t))
	b.waitUntilWaiting(t, 1)
	waited.Store(true)
	b.wait(t, 20*time.Second)
	require.NoError(t, b.err)
	require.GreaterOrEqual(t, dropped.Load(), int64(8))
	got := offsetsOf(t, b.rows)
	requireEveryRecordOnce(t, got)
}

// Partition 1 never gets a leader back: with a deadline (--timeout) the
// read waits until just before it and ends partial, naming the partition,
// the broker it was read from and how long it waited; the other
// partitions are complete, and partition 1's rows up to the fault are
// there, once.
func TestConsumeGivesUpBeforeTheStatementDeadline(t *testing.T) {
	f := waitFake(t)
	leader := f.LeaderFor(waitTopic, 1)
	f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1,
		When: pastFirstFetch(1)})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	b := startConsume(t, f, ctx)
	b.wait(t, 10*time.Second)
	require.Less(t, b.took, 3*time.Second, "the read must end before the statement's deadline, with what it has")
	require.Greater(t, b.took, 2*time.Second, "the read gave up before the bound")
	require.True(t, result.IsPartial(b.err), "want a partial result, got %v", b.err)
	msg := b.err.Error()
	for _, want := range []string{"partition t/1", fmt.Sprintf("broker %d (", leader), "no leader answered for", "--timeout", "NOT_LEADER"} {
		require.Contains(t, msg, want)
	}
	require.NotContains(t, msg, "t/0")
	require.NotContains(t, msg, "t/2")
	requireOnlyPartitionOneCutShort(t, b.rows)
}

// A hung leader (its Fetch held on a control hook, unanswered) costs the
// read its bound, not kgo's read timeout (about 10 s) times Leaders'
// rounds: with no deadline and the bound set to 1.5 s, the read ends
// partial after about 1.5 s, naming the hung broker and the bound.
func TestConsumeBoundsAHungLeader(t *testing.T) {
	f := waitFake(t)
	f.sess.cl.SetLeaderWait(1500 * time.Millisecond)
	leader := hangPartitionOneLeaderOnce(t, f)
	b := startConsume(t, f, context.Background())
	b.wait(t, 8*time.Second)
	require.Less(t, b.took, 5*time.Second, "the hung leader held the read past its bound")
	require.True(t, result.IsPartial(b.err), "want a partial result, got %v", b.err)
	msg := b.err.Error()
	for _, want := range []string{"partition t/1", fmt.Sprintf("broker %d (", leader), "no leader answered for 1.", "kql waits up to 1.5s", "went unanswered"} {
		require.Contains(t, msg, want)
	}
	got := offsetsOf(t, b.rows)
	requireExactlyOnce(t, got, 0, waitTotal)
	requireExactlyOnce(t, got, 2, waitTotal)
	requireExactlyOnce(t, got, 1, len(got[1]))
}

// The start of a read waits too: partition 1's leader answers ListOffsets
// (the read's bounds) with NOT_LEADER_OR_FOLLOWER eight times, more than
// Leaders' own rounds for the two bounds; the read waits it out and is
// complete.
func TestConsumeBoundsWaitForALeader(t *testing.T) {
	f := waitFake(t)
	fault := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: 8})
	b := startConsume(t, f, ctxT(t))
	b.wait(t, 20*time.Second)
	require.NoError(t, b.err)
	require.Equal(t, 8, fault.Hits())
	got := offsetsOf(t, b.rows)
	requireEveryRecordOnce(t, got)
}

// A hung leader whose partition moves (what the controller does once it
// fences a SIGSTOPped broker): the unanswered Fetch is cut off after
// fetchAnswerBound, not kgo's read timeout, progress says the read waits,
// and the partition is read from its new leader: every record once.
func TestConsumeLeavesAHungLeaderForTheNewOne(t *testing.T) {
	f := waitFake(t)
	leader := hangPartitionOneLeaderOnce(t, f)
	b := startConsume(t, f, context.Background())
	w := b.waitUntilWaiting(t, 1)
	require.Equal(t, leader, w.Broker)
	require.NoError(t, f.MoveTopicPartition(waitTopic, 1, (leader+1)%3))
	b.wait(t, 20*time.Second)
	require.NoError(t, b.err)
	require.Less(t, b.took, 15*time.Second, "the hung Fetch held the read for kgo's read timeout")
	got := offsetsOf(t, b.rows)
	requireEveryRecordOnce(t, got)
}

// FOLLOW waits for a lost leader like any read, says so, and never gives
// the partition up: records written while partition 1's leader answered
// NOT_LEADER_OR_FOLLOWER come, each once, when a leader answers again.
func TestFollowWaitsForALeaderAndMissesNothing(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	fl := follow(t, f.sess, "CONSUME t FOLLOW")
	want := produceKeys(t, cl, "t", []int32{0, 1, 2}, "before")
	require.ElementsMatch(t, want, fl.take(t, 3, 10*time.Second))

	leader := f.LeaderFor("t", 1)
	fault := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "t", Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1})
	during := produceKeys(t, cl, "t", []int32{0, 1, 1, 2}, "during")
	require.Eventually(t, func() bool {
		for _, w := range fl.res.Stats().Waiting() {
			if w.Partition == "t/1" && w.Broker == leader {
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "FOLLOW never said it waits for partition 1's leader")
	require.ElementsMatch(t, []string{during[0], during[3]}, fl.take(t, 2, 10*time.Second), "the other partitions go on")
	require.NoError(t, f.MoveTopicPartition("t", 1, (leader+1)%3))
	fault.Remove()
	require.ElementsMatch(t, during[1:3], fl.take(t, 2, 10*time.Second), "partition 1 resumes where it was")
	select {
	case row := <-fl.rows:
		t.Fatalf("a row more than was written: %v", row)
	case <-time.After(1500 * time.Millisecond):
	}
}

// A leader that hangs on the read's first request (ListOffsets, for the
// bounds) costs the read its bound too: with the bound at 1.5 s, the read
// ends partial within a few seconds, naming the hung broker, with every
// record of the other partitions.
func TestConsumeBoundsOfAHungLeaderAreBounded(t *testing.T) {
	f := waitFake(t)
	f.sess.cl.SetLeaderWait(1500 * time.Millisecond)
	leader := f.LeaderFor(waitTopic, 1)
	hangLeader(t, f, kmsg.ListOffsets, leader, func(kmsg.Request) bool { return true })
	b := startConsume(t, f, context.Background())
	b.wait(t, 10*time.Second)
	require.Less(t, b.took, 5*time.Second, "the hung leader held the read past its bound")
	require.True(t, result.IsPartial(b.err), "want a partial result, got %v", b.err)
	msg := b.err.Error()
	for _, want := range []string{"partition t/1", fmt.Sprintf("broker %d (", leader), "no leader answered for", "kql waits up to 1.5s"} {
		require.Contains(t, msg, want)
	}
	got := offsetsOf(t, b.rows)
	requireExactlyOnce(t, got, 0, waitTotal)
	requireExactlyOnce(t, got, 2, waitTotal)
	require.Empty(t, got[1])
}

// A read whose partition was given up for want of a leader, cut off by the
// statement's deadline while the other partitions are still being handed
// out (a slow link, a loaded machine: here a consumer that takes nothing
// once partition 1 was given up until the deadline passed), ends partial
// with the rows it read: partition
// 1 named with its broker and how long kql waited, partitions 0 and 2
// named as cut off by --timeout exactly where their rows stop, and not as
// a bare timeout that hides the leaderless partition.
func TestConsumeCutOffAfterAGiveUpEndsPartial(t *testing.T) {
	f := waitFake(t)
	// Far more in partitions 0 and 2 than the read budget holds, after
	// partition 1's records: what is left of them once partition 1 is
	// given up takes Fetches the deadline cuts off.
	const extraRounds, extraPerRound = 40, 100
	base := time.Now().Add(-30 * time.Minute)
	for r := range extraRounds {
		var recs []*kgo.Record
		for _, p := range []int32{0, 2} {
			for i := range extraPerRound {
				recs = append(recs, &kgo.Record{Topic: waitTopic, Partition: p, Value: []byte(strings.Repeat("y", 100)),
					Timestamp: base.Add(time.Duration(r*extraPerRound+i) * time.Millisecond)})
			}
		}
		require.NoError(t, produceManual(t, f, recs))
	}
	const healthyTotal = waitTotal + extraRounds*extraPerRound
	leader := f.LeaderFor(waitTopic, 1)
	f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1,
		When: pastFirstFetch(1)})
	ctx, cancel := context.WithTimeoutCause(ctxT(t), 3*time.Second, errors.New("cancelled after --timeout 3s"))
	defer cancel()
	res, err := f.sess.Execute(ctx, &lang.Consume{Topic: waitTopic, LimitAll: true})
	require.NoError(t, err)
	defer res.Close()
	// The rows come interleaved, partition 0, 1, 2, 0, ... (waitFake's
	// timestamps): the merge waits for partition 1 until it is given up,
	// and a row of partition 2 straight after one of partition 0 is the
	// first row after that.
	var rows []result.Row
	held := false
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		if !held && len(rows) > 0 && fmt.Sprint(rows[len(rows)-1][0]) == "0" && fmt.Sprint(row[0]) == "2" {
			held = true
			<-ctx.Done()
		}
		rows = append(rows, row)
	}
	require.True(t, held, "partition 1 was never given up")
	err = res.Err()
	require.True(t, result.IsPartial(err), "want a partial result, got %v", err)
	msg := err.Error()
	for _, want := range []string{"partition t/1", fmt.Sprintf("broker %d (", leader), "no leader answered for", "NOT_LEADER_FOR_PARTITION"} {
		require.Contains(t, msg, want)
	}
	got := offsetsOf(t, rows)
	requireExactlyOnce(t, got, 1, len(got[1]))
	require.NotContains(t, msg, "partition t/1: read up to", "the given-up partition is named once, as given up")
	for _, p := range []int32{0, 2} {
		requireExactlyOnce(t, got, p, len(got[p]))
		require.Less(t, len(got[p]), healthyTotal, "partition %d: the budget should have held the read back", p)
		require.Contains(t, msg, fmt.Sprintf("partition t/%d: read up to offset %d (of %d), then cancelled after --timeout 3s", p, len(got[p]), healthyTotal))
	}
}
