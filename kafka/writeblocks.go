package kafka

import (
	"context"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The records a Writer hands the producer are carved from blocks: one
// allocation per few hundred records rather than two per record. A block
// is carved from again as soon as the producer has answered every record
// of it (the record's promise ran: acknowledged by its leader, or failed
// for good, so kgo will not send it again), not at the transaction's
// commit: the writer's memory is that of the records in flight, bounded by
// the producer's buffer, whatever the size of a transaction.
//
// Answered tells the caller the same about the bytes it gave Write: the
// records it gave before that count are no longer used by the producer,
// so whatever their keys, values and headers point into may be reused
// (the import's spill reads its next block into it).

const (
	blockRecords  = 512 // records per block
	maxFreeBlocks = 32  // answered blocks kept for reuse; more go to the GC
)

// recordBlock is records carved in order, and how many of them the
// producer has not answered yet.
type recordBlock struct {
	recs []kgo.Record
	ctx  blockCtx     // every record's Context: how its promise finds its block
	out  atomic.Int32 // carved and not answered
	full bool         // no record is carved from it any more; guarded by Writer.mu
	span *blockSpan
}

// blockCtx is a carved record's Context. kgo takes a record's Context for
// its cancellation only when Produce's ctx has none, and Produce's is the
// statement's; this one never ends.
type blockCtx struct {
	context.Context
	b *recordBlock
}

// blockSpan is one use of a block, in the order of Write: end is the
// writer's record count after its last record (set when it is full).
type blockSpan struct {
	end  int64
	done bool
}

// newRecord is a record with n headers, carved from the current block.
func (w *Writer) newRecord(n int) *kgo.Record {
	b := w.cur
	if b == nil || len(b.recs) == cap(b.recs) {
		b = w.nextBlock()
	}
	b.recs = b.recs[:len(b.recs)+1]
	r := &b.recs[len(b.recs)-1]
	*r = kgo.Record{Context: &b.ctx} // a reused block holds an answered record
	b.out.Add(1)                     // before Produce, which may run the promise at once
	w.seq++
	if n > 0 {
		if cap(w.hdrs)-len(w.hdrs) < n {
			w.hdrs = make([]kgo.RecordHeader, 0, max(1024, n))
		}
		k := len(w.hdrs)
		w.hdrs = w.hdrs[:k+n]
		r.Headers = w.hdrs[k : k+n : k+n]
	}
	return r
}

// nextBlock ends the current block and starts another, an answered one if
// there is one.
func (w *Writer) nextBlock() *recordBlock {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old := w.cur; old != nil {
		old.full, old.span.end = true, w.seq
		if old.out.Load() == 0 {
			w.blockAnswered(old)
		}
	}
	var b *recordBlock
	if k := len(w.freeBlocks) - 1; k >= 0 {
		b, w.freeBlocks = w.freeBlocks[k], w.freeBlocks[:k]
		b.recs = b.recs[:0]
	} else {
		b = &recordBlock{recs: make([]kgo.Record, 0, blockRecords)}
		w.made++
		b.ctx = blockCtx{Context: context.Background(), b: b}
	}
	b.full, b.span = false, &blockSpan{end: -1}
	w.spans = append(w.spans, b.span)
	w.cur = b
	return b
}

// answered is called (under w.mu) once the producer is done with r: its
// promise ran. r lets go of the bytes it points to (its block may wait for
// its other records a while, and must not keep them alive meanwhile).
func (w *Writer) answered(r *kgo.Record) {
	r.Key, r.Value, r.Headers = nil, nil, nil
	w.promised.Add(1)
	defer w.maybeResume()
	bc, ok := r.Context.(*blockCtx)
	if !ok {
		return // not carved by newRecord: cannot be
	}
	b := bc.b
	if b.out.Add(-1) == 0 && b.full {
		w.blockAnswered(b)
	}
}

// blockAnswered (under w.mu): every record of the full block b is
// answered. Its span is done, and Answered moves past the leading done
// spans.
func (w *Writer) blockAnswered(b *recordBlock) {
	b.span.done, b.span = true, nil
	if len(w.freeBlocks) < maxFreeBlocks {
		w.freeBlocks = append(w.freeBlocks, b)
	}
	for len(w.spans) > 0 && w.spans[0].done {
		w.answeredN.Store(w.spans[0].end)
		w.spans[0] = nil
		w.spans = w.spans[1:]
	}

}

// Answered is how many of the records given to Write, counted from the
// first, the producer is done with: the first Answered() records are
// acknowledged by their leaders or failed for good, and their bytes are
// not read any more. It lags by up to a block's worth of records.
func (w *Writer) Answered() int64 { return w.answeredN.Load() }

// waitForRoom waits until half of the MaxInFlight records the producer
// holds are answered, and the records since the first one not answered
// are at most half of inFlightSpan*MaxInFlight. kgo would block Produce itself at its buffer's
// bound, but while a Produce is blocked it stops lingering: every batch
// goes out at once, a few records each, and the import on kfake took
// half as long again (its producer's CPU a fifth more) with transactions
// of 200,000 records as with 10,000, which flushed before the bound. Here
// the producer never reaches its bound and fills its batches. The
// records' promises run whatever becomes of the statement (a cancelled
// ctx fails the buffered ones), so the wait ends.
func (w *Writer) waitForRoom() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.resumeAt = w.seq - int64(w.cfg.MaxInFlight/2)
	w.resumeAll = w.seq - inFlightSpan*int64(w.cfg.MaxInFlight)/2
	for w.resumeAt > 0 && (w.promised.Load() < w.resumeAt || w.answeredN.Load() < w.resumeAll) {
		w.room.Wait()
	}
	w.resumeAt = 0
}

// maybeResume (under w.mu) wakes a waiting Write once there is room.
func (w *Writer) maybeResume() {
	if w.resumeAt > 0 && w.promised.Load() >= w.resumeAt && w.answeredN.Load() >= w.resumeAll {
		w.resumeAt = 0
		w.room.Signal()
	}
}

// inFlightSpan bounds the records since the first one not answered, in
// MaxInFlights: a window counted from the first one not answered made the
// import on real Kafka wait for its slowest partition (1.59x kcat -P
// against 0.88x), but a partition that is slow to answer must not let
// what Answered holds back grow without bound.
const inFlightSpan = 4
