package exec

import (
	"context"
	"sync"

	"github.com/kql-dev/kql/result"
)

// A pass-through INSERT's read and its writes run on two goroutines: one
// takes the source's records from the merge and maps them (destination
// partition, key hash), a batch at a time, while the statement's own
// goroutine hands the batch before to the producer. Run one after the
// other on one goroutine they were most of the CPU an INSERT spends beyond
// the import's, whose parsing is parallel too.

// pipeBatch is a batch of mapped rows, and how the read ended after them
// (done: no more batches; err: the read's or the mapping's failure).
type pipeBatch struct {
	rows []insertRow
	done bool
	err  error
}

// pipeRows is how many rows a batch holds: enough to make the hand-over
// cheap, few enough that the rows' headers stay small.
const pipeRows = 256

// pipelinedRecordRows is rows for a pass-through INSERT: rs's records,
// mapped onto insertRows that are reused from batch to batch (fn must not
// keep one; the writer copies what it needs), with the read and mapping
// on a goroutine of their own. cancel ends the read (rs's context): it is
// called before returning, so that a write that failed does not wait for
// a Fetch.
func (p *insertPlan) pipelinedRecordRows(ctx context.Context, cancel context.CancelFunc, rs result.RecordStream, fn func(*insertRow) error) error {
	full := make(chan *pipeBatch, 2)
	free := make(chan *pipeBatch, 4)
	for range cap(free) {
		free <- &pipeBatch{rows: make([]insertRow, 0, pipeRows)}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		cancel()
		wg.Wait()
	}()
	wg.Go(func() {
		for {
			var b *pipeBatch
			select {
			case b = <-free:
			case <-stop:
				return
			}
			b.rows, b.done, b.err = b.rows[:0], false, nil
			for len(b.rows) < pipeRows {
				rec, ok := rs.NextRecord()
				if !ok {
					b.done, b.err = true, rs.Err()
					break
				}
				if p.upTo != nil {
					if last, seen := p.upTo[rec.Partition]; !seen || rec.Offset > last {
						continue // arrived after the check (see insertPlan.upTo)
					}
				}
				b.rows = b.rows[:len(b.rows)+1]
				if err := p.mapRecord(ctx, rec, &b.rows[len(b.rows)-1]); err != nil {
					b.rows = b.rows[:len(b.rows)-1]
					b.done, b.err = true, err
					break
				}
			}
			select {
			case full <- b:
			case <-stop:
				return
			}
			if b.done {
				return
			}
		}
	})
	for {
		b := <-full
		for i := range b.rows {
			if err := fn(&b.rows[i]); err != nil {
				return err
			}
		}
		if b.done {
			return b.err
		}
		free <- b
	}
}
