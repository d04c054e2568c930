package result

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Stats is what a statement reports besides its rows: how many records it
// has read, whether its rows now come as records are written (FOLLOW),
// its notices and warnings, and the statement that reads its next page.
//
// There is one Stats per statement. The operator that knows a figure fills
// it (the scan counts records, FOLLOW turns live), and every operator or
// wrapper above returns its child's Stats from Result.Stats, so nothing a
// caller asks of a result can be hidden by a wrapper that forgot to pass it
// on. The zero value is ready to use; a Stats must not be copied.
//
// The counters and Live are safe to read from another goroutine while the
// statement runs (the shell's progress line); the rest is read after the
// last row.
type Stats struct {
	scanning atomic.Bool
	scanned  atomic.Int64
	live     atomic.Bool

	waiting atomic.Pointer[func() []Waiting]

	mu       sync.Mutex
	notices  []func() []string
	warnings []func() []string
	nextPage func() (any, bool)
}

// Scanning says that the statement reads records (CONSUME, SELECT): the
// progress line then says how many it has read, matching or not.
func (s *Stats) Scanning() { s.scanning.Store(true) }

// AddScanned counts n more records read, matching or not.
func (s *Stats) AddScanned(n int64) { s.scanned.Add(n) }

// Scanned returns how many records the statement has read so far, and
// whether it reads records at all.
func (s *Stats) Scanned() (n int64, scanning bool) {
	return s.scanned.Load(), s.scanning.Load()
}

// SetLive says whether the rows now come as records are written: a table
// stops waiting for a full batch and keeps the widths it has.
func (s *Stats) SetLive(live bool) { s.live.Store(live) }

// Live reports whether the rows now come as records are written.
func (s *Stats) Live() bool { return s.live.Load() }

// Notice adds a notice: something to tell the user on stderr that is not
// data, for example the next-page statement.
func (s *Stats) Notice(msg string) {
	s.NoticesFrom(func() []string { return []string{msg} })
}

// NoticesFrom adds notices that f returns when they are read, after the
// last row.
func (s *Stats) NoticesFrom(f func() []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, f)
}

// Notices returns the notices, in the order they were added.
func (s *Stats) Notices() []string { return s.collect(s.notices) }

// Warn adds a warning: shown on stderr even with --quiet, for example
// values a WHERE could not compare.
func (s *Stats) Warn(msg string) {
	s.WarningsFrom(func() []string { return []string{msg} })
}

// WarningsFrom adds warnings that f returns when they are read, after the
// last row: an operator that collects them while it reads (a WHERE that
// could not compare, a value that did not decode) says them once, at the end.
func (s *Stats) WarningsFrom(f func() []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warnings = append(s.warnings, f)
}

// Warnings returns the warnings, in the order their sources were added; a
// warning two operators both report (FOLLOW and its backlog share a
// decoder) is said once.
func (s *Stats) Warnings() []string { return slices.Compact(s.collect(s.warnings)) }

func (s *Stats) collect(from []func() []string) []string {
	s.mu.Lock()
	fs := slices.Clone(from)
	s.mu.Unlock()
	var out []string
	for _, f := range fs {
		out = append(out, f()...)
	}
	return out
}

// SetNextPage sets what returns the statement that reads the next page (in
// the executor's terms; the result package does not know statements), or
// clears it with nil: a statement that has no pages.
func (s *Stats) SetNextPage(f func() (next any, ok bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextPage = f
}

// Paged reports whether the statement has pages (a next page or not).
func (s *Stats) Paged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextPage != nil
}

// NextPage returns the statement that reads the next page; ok is false
// when there is no further page, or no pages at all.
func (s *Stats) NextPage() (next any, ok bool) {
	s.mu.Lock()
	f := s.nextPage
	s.mu.Unlock()
	if f == nil {
		return nil, false
	}
	return f()
}

// Waiting is a partition whose read waits for a leader to answer (its
// broker died or hangs, and the controller has not moved it yet).
type Waiting struct {
	Partition string    // topic/partition
	Broker    int32     // the broker it was last read from; -1 if none answered yet
	Addr      string    // that broker's address
	Since     time.Time // when the wait began
}

// WaitingFrom sets what returns the partitions the read waits for now. f
// is called from another goroutine (the shell's progress line) while the
// statement runs, so it must be safe for that.
func (s *Stats) WaitingFrom(f func() []Waiting) { s.waiting.Store(&f) }

// Waiting returns the partitions the read waits for a leader for now; nil
// when it waits for none. Safe to call while the statement runs.
func (s *Stats) Waiting() []Waiting {
	if f := s.waiting.Load(); f != nil {
		return (*f)()
	}
	return nil
}
