package result

import (
	"context"
	"io"
	"sync/atomic"
)

// MoveProgress counts what a statement that writes records (an import, an
// INSERT ... EXECUTE) has written so far, for the shell's progress line.
// Such a statement writes everything before it returns its result, so the
// counters travel in its context (WithMoveProgress) rather than in the
// result's Stats. All methods are safe on a nil *MoveProgress (no one is
// watching) and from any goroutine.
type MoveProgress struct {
	records, bytes atomic.Int64
	input          atomic.Int64 // input consumed: an import's file bytes, an INSERT's source offsets
	totalRecords   atomic.Int64 // 0: unknown
	totalInput     atomic.Int64 // 0: unknown (stdin)
	writing        atomic.Bool
	ended          atomic.Bool
	committed      atomic.Int64
	committedBytes atomic.Int64
	unsure         atomic.Bool
}

// MoveSnapshot is one reading of a MoveProgress.
type MoveSnapshot struct {
	Writing                  bool  // the statement has begun writing
	Records, Bytes           int64 // given to the writer
	Input                    int64
	TotalRecords, TotalInput int64 // 0: unknown
	// Once Ended: what of Records is committed. The rest was aborted, or,
	// Unsure, is in a transaction whose commit got no answer.
	Ended                     bool
	Committed, CommittedBytes int64
	Unsure                    bool
}

type moveProgressKey struct{}

// WithMoveProgress returns ctx carrying p.
func WithMoveProgress(ctx context.Context, p *MoveProgress) context.Context {
	return context.WithValue(ctx, moveProgressKey{}, p)
}

// MoveProgressOf returns the MoveProgress ctx carries, or nil.
func MoveProgressOf(ctx context.Context) *MoveProgress {
	p, _ := ctx.Value(moveProgressKey{}).(*MoveProgress)
	return p
}

// Begin says writing starts, with what is known of its end: the records to
// write (an INSERT after its dry run) and the input's size (an import's
// file); 0 for unknown.
func (p *MoveProgress) Begin(totalRecords, totalInput int64) {
	if p == nil {
		return
	}
	p.totalRecords.Store(totalRecords)
	p.totalInput.Store(totalInput)
	p.writing.Store(true)
}

// Wrote counts one more record of size bytes given to the writer.
func (p *MoveProgress) Wrote(size int64) {
	if p == nil {
		return
	}
	p.records.Add(1)
	p.bytes.Add(size)
}

// Ended says, once the statement is done writing (it succeeded or
// failed), how many of the records given to the writer are committed, and
// their bytes; unsure: the rest is in a transaction whose commit got no
// answer (it may be committed or not), else the rest was aborted.
func (p *MoveProgress) Ended(committed, committedBytes int64, unsure bool) {
	if p == nil {
		return
	}
	p.committed.Store(committed)
	p.committedBytes.Store(committedBytes)
	p.unsure.Store(unsure)
	p.ended.Store(true)
}

// Consumed counts n more input bytes read.
func (p *MoveProgress) Consumed(n int64) {
	if p == nil {
		return
	}
	p.input.Add(n)
}

// Snapshot reads the counters.
func (p *MoveProgress) Snapshot() MoveSnapshot {
	if p == nil {
		return MoveSnapshot{}
	}
	return MoveSnapshot{Writing: p.writing.Load(), Records: p.records.Load(), Bytes: p.bytes.Load(),
		Input: p.input.Load(), TotalRecords: p.totalRecords.Load(), TotalInput: p.totalInput.Load(),
		Ended: p.ended.Load(), Committed: p.committed.Load(), CommittedBytes: p.committedBytes.Load(), Unsure: p.unsure.Load()}
}

// Reader counts what is read through it as input consumed; it is r itself
// when p is nil.
func (p *MoveProgress) Reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return countingReader{p, r}
}

type countingReader struct {
	p *MoveProgress
	r io.Reader
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.Consumed(int64(n))
	return n, err
}
