package exec

import (
	"context"
	"sync"
	"time"

	"github.com/kql-dev/kql/kafka"
)

// streamCommitter commits a streaming import's open transaction once it is
// streamTxnAge old, whether or not another record arrives: a pipe that
// trickles (tail -f app.log | kql -e "PRODUCE ... FROM STDIN") or goes
// quiet after a few records must get them to read_committed readers within
// about a second, not hold them until 10,000 more arrive or the
// coordinator aborts the transaction at its 60 s timeout. The writer's own
// age check (WriterConfig.MaxTxnAge) only runs on a record.
//
// Write and the timer's Commit take mu, so the writer is never used by
// two goroutines at once, and the record last written is known when the
// timer commits.
type streamCommitter struct {
	mu   sync.Mutex
	w    *kafka.Writer
	age  time.Duration
	in   importCommitted // how far the input is committed
	err  error
	fail context.CancelCauseFunc // ends the read when the timer's commit failed
	stop chan struct{}
	done chan struct{}
}

// startStreamCommitter starts the timer; fail is called with the error of
// a commit it made that failed (the open transaction is aborted then, and
// nothing may be written after it).
func startStreamCommitter(ctx context.Context, w *kafka.Writer, age time.Duration, fail context.CancelCauseFunc) *streamCommitter {
	c := &streamCommitter{w: w, age: age, fail: fail, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run(ctx)
	return c
}

func (c *streamCommitter) run(ctx context.Context) {
	defer close(c.done)
	t := time.NewTimer(c.age)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next := c.age
		c.mu.Lock()
		if start, open := c.w.OpenSince(); open && c.err == nil {
			if d := time.Since(start); d >= c.age {
				if err := c.w.Commit(ctx); err != nil {
					c.err = err
					c.fail(err)
				} else {
					c.in.commit()
				}
			} else {
				next = c.age - d
			}
		}
		failed := c.err != nil
		c.mu.Unlock()
		if failed {
			return
		}
		t.Reset(next)
	}
}

// write gives rec, read at at, to the writer.
func (c *streamCommitter) write(ctx context.Context, rec *kafka.OutRecord, at importPos) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err // the timer's commit failed: nothing more is written
	}
	committed, err := c.w.Write(ctx, rec)
	c.in.wrote(at, committed)
	return err
}

// close stops the timer and returns how far the input is committed, and
// the error of a commit of its that failed.
func (c *streamCommitter) close() (importCommitted, error) {
	close(c.stop)
	<-c.done
	return c.in, c.err
}
