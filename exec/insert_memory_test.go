package exec

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/result"
)

// An INSERT hands its producer at most insertBufferedRecords records that
// no leader has acknowledged yet: each keeps its bytes alive, and with them
// the source record, record slab and fetch response they point into, so
// the bound is what keeps its memory flat on a cluster that acknowledges
// slowly (without it the producer held up to 50,000 records). Here every
// Produce is held on kfake's hooks until the test releases it: the copy
// stops at the bound, and finishes once the leaders answer.
func TestInsertHoldsAtMostItsBoundOfUnacknowledgedRecords(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "dst", 3)
	f.produce(t, "src", 3, 400)
	old := insertBufferedRecords
	insertBufferedRecords = 100
	t.Cleanup(func() { insertBufferedRecords = old })

	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	sent := make(chan struct{}, 1)
	f.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		select {
		case sent <- struct{}{}:
		default:
		}
		f.SleepControl(func() { <-release })
		return nil, nil, false
	})

	p := &result.MoveProgress{}
	ctx := result.WithMoveProgress(ctxT(t), p)
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Execute(ctx, parse(t, "INSERT INTO dst SELECT * FROM src EXECUTE"))
		done <- err
	}()
	select {
	case <-sent:
	case err := <-done:
		t.Fatalf("the INSERT ended (%v) before it produced", err)
	}
	require.Eventually(t, func() bool { return p.Snapshot().Records >= 100 }, 10*time.Second, time.Millisecond,
		"the producer takes records up to its bound")
	// With the bound, more can never be handed over while no Produce is
	// answered: a pause cannot make this pass by luck.
	require.Never(t, func() bool { return p.Snapshot().Records > 100 }, 300*time.Millisecond, time.Millisecond,
		"records handed to the producer while none was acknowledged")

	once.Do(func() { close(release) })
	require.NoError(t, <-done)
	require.Len(t, committedEventually(t, f.sess, "dst", 1200), 1200, "every record copied once the leaders answer")
}

// The INSERT's read budget lowers the session's, never raises it.
func TestReadBudgetIsTheLowerOfSessionAndStatement(t *testing.T) {
	ctx := ctxT(t)
	require.Equal(t, int64(0), readBudget(ctx, 0), "no bound: the session's (the default)")
	require.Equal(t, int64(1<<20), readBudget(ctx, 1<<20))
	in := withReadBudget(ctx, insertReadBudget)
	require.Equal(t, int64(insertReadBudget), readBudget(in, 0), "the default lowered")
	require.Equal(t, int64(1<<20), readBudget(in, 1<<20), "a smaller session budget stays")
	require.Equal(t, int64(insertReadBudget), readBudget(in, 64<<20))
}
