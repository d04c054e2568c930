package exec

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/result"
)

// INSERT INTO TOPIC expr ... LIMIT n EXECUTE checks every record's
// destination in a dry run, then reads the source again to write. Records
// that arrive between the two reads, in a partition that was empty, with
// older timestamps (a producer sets CreateTime), come first in the second
// read's merge: the write must still copy exactly the records the check
// saw, not LIMIT rows of which it drops those the check never saw. The
// records arrive while the test holds the writer's InitProducerId (the step
// between the two reads) on kfake's hooks.
func TestInsertToTopicExprWithLimitWritesWhatTheDryRunChecked(t *testing.T) {
	ls := newLateSource(t, 10)
	f := ls.f
	stmt := "INSERT INTO TOPIC header('to') SELECT * FROM src LIMIT 5"
	dry, _ := mustRun(t, f.sess, parse(t, stmt))
	require.Equal(t, int64(5), sumRecords(dry), "the dry run checks 5 records")
	for _, r := range dry {
		require.Regexp(t, `^0:[0-4]$`, r[4], "the oldest 5: partition 0's first")
		require.Regexp(t, `^0:[0-4]$`, r[5], "the oldest 5: partition 0's first")
	}

	ls.lateWhenTheWriterStarts(t)
	rows, _ := mustRun(t, f.sess, parse(t, stmt+" EXECUTE"))
	require.Equal(t, int64(5), sumRecords(rows), "EXECUTE writes the 5 records its check saw: %v", rows)
	require.Equal(t, int64(15), sumEnds(t, f.sess, "src"), "the late records arrived")
	got := committedEventually(t, f.sess, "dst", 5)
	for _, r := range got {
		require.Regexp(t, `^k-0-[0-4]$`, string(r[3].([]byte)), "a record the check saw")
	}
}

// lateSource is a source topic "src" of 2 partitions whose partition 0
// holds n records k-0-<i> (value "v", header to=dst) an hour old, 1 ms
// apart, and a destination "dst" of 3 partitions, on kfake's 3 brokers.
type lateSource struct {
	f    *fake
	cl   *kgo.Client // the manual partitioner
	base time.Time
}

func newLateSource(t *testing.T, n int) *lateSource {
	t.Helper()
	f := newFake(t)
	f.spread(t, "src", 2)
	f.spread(t, "dst", 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	ls := &lateSource{f: f, cl: cl, base: time.Now().Add(-time.Hour).Truncate(time.Millisecond)}
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, ls.rec(0, i, ls.base.Add(time.Duration(i)*time.Millisecond)))
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	return ls
}

func (ls *lateSource) rec(p int32, i int, ts time.Time) *kgo.Record {
	return &kgo.Record{Topic: "src", Partition: p, Key: []byte(fmt.Sprintf("k-%d-%d", p, i)), Value: []byte("v"), Timestamp: ts,
		Headers: []kgo.RecordHeader{{Key: "to", Value: []byte("dst")}}}
}

// lateWhenTheWriterStarts writes 5 records k-1-<i> to the empty partition
// 1, older than every record of partition 0 (so they come first in a
// merge), while it holds the writer's first InitProducerId on kfake's
// hooks: after an INSERT's dry run, before its write.
func (ls *lateSource) lateWhenTheWriterStarts(t *testing.T) {
	var once sync.Once
	ls.f.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		ls.f.KeepControl()
		once.Do(func() {
			ls.f.SleepControl(func() {
				var late []*kgo.Record
				for i := range 5 {
					late = append(late, ls.rec(1, i, ls.base.Add(-time.Duration(10-i)*time.Second)))
				}
				require.NoError(t, ls.cl.ProduceSync(ctxT(t), late...).FirstErr())
			})
		})
		return nil, nil, false
	})
}

// sumRecords adds up the records column of an INSERT's table.
func sumRecords(rows []result.Row) int64 {
	var n int64
	for _, r := range rows {
		n += r[2].(int64)
	}
	return n
}

// INSERT INTO TOPIC expr ... EXECUTE writes what its check saw, and only
// that: a record that arrives in a checked partition between the check and
// the write, with no destination (a DLQ still receiving while it is
// redriven), is not part of the INSERT and does not fail it.
func TestInsertToTopicExprIgnoresRecordsArrivingAfterTheCheck(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 2)
	f.spread(t, "dst", 3)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range 3 {
			recs = append(recs, &kgo.Record{Topic: "src", Partition: p, Key: []byte(fmt.Sprintf("k-%d-%d", p, i)), Value: []byte("v"),
				Headers: []kgo.RecordHeader{{Key: "to", Value: []byte("dst")}}})
		}
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())

	var once sync.Once
	f.ControlKey(int16(kmsg.InitProducerID), func(kmsg.Request) (kmsg.Response, error, bool) {
		once.Do(func() {
			f.SleepControl(func() {
				late := []*kgo.Record{
					{Topic: "src", Partition: 0, Key: []byte("late-no-header"), Value: []byte("v")},
					{Topic: "src", Partition: 1, Key: []byte("late-no-topic"), Value: []byte("v"), Headers: []kgo.RecordHeader{{Key: "to", Value: []byte("nowhere")}}},
				}
				require.NoError(t, cl.ProduceSync(ctxT(t), late...).FirstErr())
			})
		})
		return nil, nil, false
	})
	rows, _ := mustRun(t, f.sess, parse(t, "INSERT INTO TOPIC header('to') SELECT * FROM src EXECUTE"))
	require.Equal(t, int64(6), sumRecords(rows), "the 6 records checked: %v", rows)
	require.Equal(t, int64(8), sumEnds(t, f.sess, "src"), "the late records arrived")
	require.Len(t, committedEventually(t, f.sess, "dst", 6), 6)
}

// INSERT INTO TOPIC expr ... EXECUTE, whose write reads again the range its
// check saw, copies exactly the records the SELECT returns, whatever its
// shape: FROM NEWEST, SKIP, WHERE, PARTITION, FROM OFFSET, across
// partitions led by all three brokers.
func TestInsertToTopicExprCopiesWhatTheSelectReturns(t *testing.T) {
	for _, c := range []struct {
		sel  string
		want int
	}{
		{"SELECT * FROM src FROM NEWEST LIMIT 4", 4},
		{"SELECT * FROM src SKIP 3 LIMIT 5", 5},
		{"SELECT * FROM src WHERE value LIKE 'v-%-1%' SKIP 1 LIMIT 3", 2},
		{"SELECT * FROM src PARTITION (1, 2) WHERE value NOT LIKE 'v-%-3' SKIP 2 LIMIT 7", 7},
		{"SELECT * FROM src FROM OFFSET 4 WHERE value NOT LIKE 'v-1-%' LIMIT 9", 9},
	} {
		t.Run(c.sel, func(t *testing.T) {
			f := newFake(t)
			f.spread(t, "src", 3)
			f.spread(t, "dst", 3)
			f.produce(t, "src", 3, 10)
			stmt := "INSERT INTO TOPIC 'dst' " + c.sel
			dry, _ := mustRun(t, f.sess, parse(t, stmt))
			require.Equal(t, int64(c.want), sumRecords(dry), "the check: %v", dry)
			rows, _ := mustRun(t, f.sess, parse(t, stmt+" EXECUTE"))
			require.Equal(t, int64(c.want), sumRecords(rows), "written: %v", rows)
			sel, _ := mustRun(t, f.sess, parse(t, c.sel))
			var want, got []string
			for _, r := range sel {
				want = append(want, string(r[4].([]byte)))
			}
			for _, r := range committedEventually(t, f.sess, "dst", c.want) {
				got = append(got, string(r[4].([]byte)))
			}
			require.ElementsMatch(t, want, got)
		})
	}
}
