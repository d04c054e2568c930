package exec

import (
	"context"
	"crypto/rand"
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
// makes 4 rounds, for each of DESCRIBE TOPIC's ListOffsets: earliest,
// latest and the last stable offset) is reported, never dropped; the other
// partitions keep their answers.
func TestFaultOnBothTriesIsReported(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 3)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{2}, Err: kerr.NotLeaderForPartition, Count: -1})
	defer h.Remove()
	rows, _, err := run(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	require.GreaterOrEqual(t, h.Hits(), 4, "every round asked the partition again")
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
	// (Count -1: on every try; a read waits for a new leader until just
	// before its deadline, here 2 s.)
	h2 := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "t", Partitions: []int32{2}, Err: kerr.NotLeaderForPartition, Count: -1})
	defer h2.Remove()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := f.sess.Execute(ctx, &lang.Consume{Topic: "t", Limit: i64(100)})
	require.NoError(t, err)
	rows = nil
	for row, ok := res.Next(); ok; row, ok = res.Next() {
		rows = append(rows, row)
	}
	err = res.Err()
	require.True(t, result.IsPartial(err), "%v", err)
	require.Contains(t, err.Error(), "partition t/2 on broker 2")
	require.Contains(t, err.Error(), "no leader answered for")
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
