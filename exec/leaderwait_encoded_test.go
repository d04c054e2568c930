package exec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// The encoding read (a plain CONSUME written as jsonl, its records encoded
// in the reader's lanes) rides out a lost leader as the record path does:
// the same waits, the same resume, the same partial result. These read
// waitFake's topic through render, as kql -e '... ' --format jsonl does.

// encodeSpy tells whether render took the encoding read.
type encodeSpy struct {
	result.EncodingStream
	took atomic.Bool
}

func (s *encodeSpy) EncodeWith(newEncoder func() result.RecordEncoder) bool {
	ok := s.EncodingStream.EncodeWith(newEncoder)
	s.took.Store(ok)
	return ok
}

// startConsumeJSONL is startConsume written as jsonl: rows are each line's
// partition and offset.
func startConsumeJSONL(t *testing.T, f *fake, ctx context.Context) *backgroundRead {
	t.Helper()
	start := time.Now()
	res, err := f.sess.Execute(ctx, &lang.Consume{Topic: waitTopic, LimitAll: true})
	require.NoError(t, err)
	es, ok := res.(result.EncodingStream)
	require.True(t, ok, "a plain CONSUME offers its records encoded")
	spy := &encodeSpy{EncodingStream: es}
	b := &backgroundRead{res: res, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		defer res.Close()
		var out bytes.Buffer
		_, b.err = render.Render(&out, spy, render.Options{Format: render.JSONL})
		b.took = time.Since(start)
		if !spy.took.Load() {
			b.err = fmt.Errorf("render did not take the encoding read (err %v)", b.err)
			return
		}
		sc := bufio.NewScanner(&out)
		for sc.Scan() {
			var line struct {
				Partition json.Number `json:"partition"`
				Offset    json.Number `json:"offset"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				b.err = fmt.Errorf("line %q: %w", sc.Text(), err)
				return
			}
			b.rows = append(b.rows, result.Row{line.Partition.String(), line.Offset.String()})
		}
	}()
	t.Cleanup(func() { <-b.done })
	return b
}

// Partition 1's leader says NOT_LEADER_OR_FOLLOWER mid-read, then the
// partition moves: the encoding read waits, resumes at the new leader, and
// writes every record once.
func TestEncodedConsumeResumesAtAMovedLeader(t *testing.T) {
	f := waitFake(t)
	old := f.LeaderFor(waitTopic, 1)
	fault := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1,
		When: pastFirstFetch(1)})
	b := startConsumeJSONL(t, f, ctxT(t))
	w := b.waitUntilWaiting(t, 1)
	require.Equal(t, old, w.Broker)
	require.NoError(t, f.MoveTopicPartition(waitTopic, 1, (old+1)%3))
	fault.Remove()
	b.wait(t, 20*time.Second)
	require.NoError(t, b.err)
	requireEveryRecordOnce(t, offsetsOf(t, b.rows))
}

// A hung leader (its Fetch held on a control hook) ends the encoding read
// partial after the bound, naming the partition and the broker, with every
// record of the other partitions and partition 1's rows up to the hang,
// each once.
func TestEncodedConsumeEndsPartialOnAHungLeader(t *testing.T) {
	f := waitFake(t)
	f.sess.cl.SetLeaderWait(1500 * time.Millisecond)
	leader := hangPartitionOneLeaderOnce(t, f)
	b := startConsumeJSONL(t, f, context.Background())
	b.wait(t, 8*time.Second)
	require.True(t, result.IsPartial(b.err), "want a partial result, got %v", b.err)
	msg := b.err.Error()
	for _, want := range []string{"partition t/1", fmt.Sprintf("broker %d (", leader), "kql waits up to 1.5s"} {
		require.Contains(t, msg, want)
	}
	requireOnlyPartitionOneCutShort(t, b.rows)
}

// The statement's deadline cuts the encoding read off while partition 1
// waits for a leader: partial, partition 1 named with its broker, the rows
// before the cut written, each once.
func TestEncodedConsumeCutOffByTheDeadlineEndsPartial(t *testing.T) {
	b := consumeCutOffWhilePartitionOneIsLeaderless(t, 3*time.Second)
	require.Contains(t, b.err.Error(), "NOT_LEADER")
	requireOnlyPartitionOneCutShort(t, b.rows)
}

// A deadline shorter than the rounds Leaders makes inside one Fetch (a
// NOT_LEADER answer asked again after fresh metadata, for seconds): a
// lane's Fetch asks each leader once and the read waits for the leader
// itself, or the read ends with the bare timeout and names no partition.
// On a loaded machine the 3 s test above met the same race.
func TestEncodedConsumeCutOffInsideAFetchEndsPartial(t *testing.T) {
	b := consumeCutOffWhilePartitionOneIsLeaderless(t, 1200*time.Millisecond)
	// With a tenth of the deadline left after partition 1 is given up,
	// the others may be cut off too (the error says where): what came is
	// each partition from its start, each record once.
	got := offsetsOf(t, b.rows)
	for p := int32(0); p < 3; p++ {
		requireExactlyOnce(t, got, p, len(got[p]))
	}
	require.Less(t, len(got[1]), waitTotal, "partition 1 lost its leader after its first Fetch")
}

// consumeCutOffWhilePartitionOneIsLeaderless reads waitFake's topic as
// jsonl under a deadline of timeout while partition 1's leader answers
// NOT_LEADER after the first Fetch, and requires a partial result naming
// partition 1 and that broker.
func consumeCutOffWhilePartitionOneIsLeaderless(t *testing.T, timeout time.Duration) *backgroundRead {
	t.Helper()
	f := waitFake(t)
	leader := f.LeaderFor(waitTopic, 1)
	f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Partitions: []int32{1}, Err: kerr.NotLeaderForPartition, Count: -1,
		When: pastFirstFetch(1)})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	b := startConsumeJSONL(t, f, ctx)
	b.wait(t, 10*time.Second)
	require.True(t, result.IsPartial(b.err), "want a partial result, got %v", b.err)
	for _, want := range []string{"partition t/1", fmt.Sprintf("broker %d (", leader)} {
		require.Contains(t, b.err.Error(), want)
	}
	return b
}
