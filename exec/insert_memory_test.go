package exec

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
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
	f := boundedInsertFake(t)

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

// heldProduces holds every Produce on kfake's hooks until release is
// called; sent is signalled when the first one arrives.
type heldProduces struct {
	sent    chan struct{}
	release func()
}

// boundedInsertFake is a fake with 1200 records in src's 3 partitions, an
// empty dst of 3, and INSERT's producer bound lowered to 100 records for
// the test.
func boundedInsertFake(t *testing.T) *fake {
	t.Helper()
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "dst", 3)
	f.produce(t, "src", 3, 400)
	old := insertBufferedRecords
	insertBufferedRecords = 100
	t.Cleanup(func() { insertBufferedRecords = old })
	return f
}

func holdProduces(t *testing.T, f *fake) *heldProduces {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	h := &heldProduces{sent: make(chan struct{}, 1), release: func() { once.Do(func() { close(ch) }) }}
	t.Cleanup(h.release)
	f.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		select {
		case h.sent <- struct{}{}:
		default:
		}
		f.SleepControl(func() { <-ch })
		return nil, nil, false
	})
	return h
}

// Every form of INSERT goes through the same bound: a destination per
// record (the check pass, then the write) and ORDER BY (the row path).
func TestInsertEveryFormHoldsTheBound(t *testing.T) {
	for _, stmt := range []string{
		"INSERT INTO TOPIC 'dst' SELECT * FROM src EXECUTE",
		"INSERT INTO dst SELECT key, value FROM src ORDER BY key DESC LIMIT 1200 EXECUTE",
	} {
		t.Run(stmt, func(t *testing.T) {
			f := boundedInsertFake(t)
			h := holdProduces(t, f)

			p := &result.MoveProgress{}
			ctx := result.WithMoveProgress(ctxT(t), p)
			done := make(chan error, 1)
			go func() { done <- drain(f.sess.Execute(ctx, parse(t, stmt))) }()
			select {
			case <-h.sent:
			case err := <-done:
				t.Fatalf("the INSERT ended (%v) before it produced", err)
			}
			require.Eventually(t, func() bool { return p.Snapshot().Records >= 100 }, 10*time.Second, time.Millisecond)
			require.Never(t, func() bool { return p.Snapshot().Records > 100 }, 300*time.Millisecond, time.Millisecond,
				"records handed to the producer while none was acknowledged")
			h.release()
			require.NoError(t, <-done)
			require.Len(t, committedEventually(t, f.sess, "dst", 1200), 1200)
		})
	}
}

// Ctrl-C while the INSERT waits for room under the bound: the wait ends
// with the cancel (it does not wait for the leaders to answer), the open
// transaction is aborted, the error says nothing was committed and gives
// the resume, and the resume copies every record exactly once.
func TestInsertCancelledWhileBlockedOnTheBound(t *testing.T) {
	f := boundedInsertFake(t)
	h := holdProduces(t, f)

	p := &result.MoveProgress{}
	ctx, cancel := context.WithCancel(result.WithMoveProgress(context.Background(), p))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- drain(f.sess.Execute(ctx, parse(t, "INSERT INTO dst SELECT * FROM src EXECUTE"))) }()
	select {
	case <-h.sent:
	case err := <-done:
		t.Fatalf("the INSERT ended (%v) before it produced", err)
	}
	require.Eventually(t, func() bool { return p.Snapshot().Records >= 100 }, 10*time.Second, time.Millisecond)
	cancel()
	// The Write blocked on the bound returns with the cancel, while no
	// leader has answered (the progress counts every Write that returned).
	require.Eventually(t, func() bool { return p.Snapshot().Records > 100 }, 10*time.Second, time.Millisecond,
		"the wait for room under the bound did not end with the cancel")
	// The records in flight must be answered before the abort (kgo waits
	// for them: their sequence numbers); the blocked one was never sent.
	h.release()
	var err error
	select {
	case err = <-done:
	case <-time.After(25 * time.Second): // under the abort's own 30 s bound
		t.Fatal("the cancelled INSERT did not end")
	}
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "cancelled")
	require.Contains(t, msg, "nothing was committed")
	require.NotContains(t, msg, "the abort failed too")
	require.Empty(t, committedRows(t, f.sess, "dst"), "nothing of the aborted transaction is visible")

	mustRun(t, f.sess, parse(t, resumeIfNotCommitted(t, msg)))
	seen := map[string]bool{}
	for _, r := range committedEventually(t, f.sess, "dst", 1200) {
		k := string(r[3].([]byte))
		require.False(t, seen[k], "%s copied twice", k)
		seen[k] = true
	}
	require.Len(t, seen, 1200, "every source record exactly once")
}

// firstFetchAsks records the PartitionMaxBytes of the first Fetch after
// each reset: what the read's budget makes it ask for. (Fetch names topics
// by id from v13, so the test reads one topic only.)
type firstFetchAsks struct {
	mu  sync.Mutex
	ask int32 // 0: none seen since the reset
}

func (a *firstFetchAsks) reset() { a.mu.Lock(); a.ask = 0; a.mu.Unlock() }

func (a *firstFetchAsks) get() int32 { a.mu.Lock(); defer a.mu.Unlock(); return a.ask }

func watchFetchAsks(f *fake) *firstFetchAsks {
	a := &firstFetchAsks{}
	f.ControlKey(int16(kmsg.Fetch), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		for _, rt := range req.(*kmsg.FetchRequest).Topics {
			if len(rt.Partitions) > 0 {
				a.mu.Lock()
				if a.ask == 0 {
					a.ask = rt.Partitions[0].PartitionMaxBytes
				}
				a.mu.Unlock()
			}
		}
		return nil, nil, false
	})
	return a
}

// An INSERT's source read asks for half of what a plain read of the same
// range asks for (its budget is half the default), a session budget
// smaller than that is kept, and a plain read's budget is the session's,
// whatever an INSERT did before it. Each Fetch asks every partition for
// its share of the budget (kafka.Reader.askBytes), so the first Fetch's
// PartitionMaxBytes shows the budget the read runs under.
func TestInsertReadBudgetShowsInItsFetches(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "dst", 3)
	f.produce(t, "src", 3, 10)
	a := watchFetchAsks(f)
	ask := func(stmt string) int32 {
		t.Helper()
		a.reset()
		require.NoError(t, drain(f.sess.Execute(ctxT(t), parse(t, stmt))))
		require.NotZero(t, a.get(), "no Fetch for %s", stmt)
		return a.get()
	}
	const (
		plain  = "SELECT * FROM src LIMIT ALL"
		insert = "INSERT INTO dst SELECT * FROM src EXECUTE"
	)
	full := ask(plain)
	require.Equal(t, full/2, ask(insert), "an INSERT reads under half the default budget")
	require.Equal(t, full, ask(plain), "a plain read after an INSERT keeps the full budget")

	f.sess.ReadBudget = kafka.DefaultReadBudget / 8
	t.Cleanup(func() { f.sess.ReadBudget = 0 })
	small := ask(plain)
	require.Equal(t, full/8, small, "a plain read runs under the session's budget")
	require.Equal(t, small, ask(insert), "an INSERT keeps a session budget under its own")

	f.sess.ReadBudget = 4 * kafka.DefaultReadBudget
	require.Equal(t, full/2, ask(insert), "an INSERT lowers a larger session budget to its own")
}
