package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// watchMove shows a progress line on a terminal stderr while an import
// (PRODUCE ... FROM) or an INSERT ... EXECUTE writes: records, bytes, rate
// and, when the end is known (the file's size, the dry run's records), the
// ETA. These statements write everything before they return a result, so
// the counters come through the context (result.MoveProgress), not through
// the result's Stats. stop erases the line and, if anything was written,
// prints a summary line on stderr. Off a terminal, or with --quiet, ctx is
// returned as it is and nothing is shown.
func (a *app) watchMove(ctx context.Context, stmt lang.Statement) (_ context.Context, stop func()) {
	switch st := stmt.(type) {
	case *lang.Produce:
		if st.From == nil {
			return ctx, func() {}
		}
	case *lang.Insert:
		if !st.Execute {
			return ctx, func() {}
		}
	default:
		return ctx, func() {}
	}
	if !a.ios.ErrTTY || a.opts.quiet {
		return ctx, func() {}
	}
	mp := &result.MoveProgress{}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	shown := false
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				s := mp.Snapshot()
				if !s.Writing || now.Sub(start) < progressAfter {
					continue
				}
				fmt.Fprintf(a.stderr, "\r\033[K%s (Ctrl-C aborts the open transaction)", moveLine(s, now.Sub(start)))
				shown = true
			}
		}
	}()
	return result.WithMoveProgress(ctx, mp), func() {
		close(done)
		wg.Wait()
		if shown {
			fmt.Fprint(a.stderr, "\r\033[K")
		}
		if s := mp.Snapshot(); s.Writing {
			fmt.Fprintln(a.stderr, moveSummary(s, time.Since(start)))
		}
	}
}

// moveSummary is the line that ends a move: what it wrote, which is what is
// committed ("wrote 200000 records, 19.1 MiB in 4.2s, 47619 records/s"),
// and what it gave the writer beyond that and did not commit ("; 21758
// more were aborted"). Counting those as written said a Ctrl-C'd import
// wrote records no read_committed reader will ever see.
func moveSummary(s result.MoveSnapshot, el time.Duration) string {
	n, b := s.Records, s.Bytes
	if s.Ended {
		n, b = s.Committed, s.CommittedBytes
	}
	line := fmt.Sprintf("wrote %d %s, %s in %s, %.0f records/s", n, plural(int(n), "record", "records"),
		sizeText(b), el.Round(time.Millisecond), float64(n)/max(el.Seconds(), 1e-9))
	if rest := s.Records - n; s.Ended && rest > 0 {
		if s.Unsure {
			line += fmt.Sprintf("; %d more %s in a transaction whose commit got no answer (committed or not)", rest, plural(int(rest), "is", "are"))
		} else {
			line += fmt.Sprintf("; %d more %s aborted (not committed)", rest, plural(int(rest), "was", "were"))
		}
	}
	return line
}

// moveLine is the progress line: "120000 of 1000000 records, 14.3 MiB,
// 98000 records/s, 12% , ETA 9s".
func moveLine(s result.MoveSnapshot, el time.Duration) string {
	secs := max(el.Seconds(), 1e-9)
	line := fmt.Sprintf("%d", s.Records)
	switch {
	case s.TotalRecords > 0 && s.TotalInput > 0:
		line += fmt.Sprintf(" of at most %d", s.TotalRecords) // a LIMIT: the input may end first
	case s.TotalRecords > 0:
		line += fmt.Sprintf(" of %d", s.TotalRecords)
	}
	line += fmt.Sprintf(" records, %s, %.0f records/s", sizeText(s.Bytes), float64(s.Records)/secs)
	// The fraction done: of the records when the dry run counted them (or
	// a LIMIT bounds them), of the input (an import's file bytes, an
	// INSERT's source offsets); with both, the statement ends at whichever
	// it reaches first.
	var frac float64
	if s.TotalRecords > 0 {
		frac = float64(s.Records) / float64(s.TotalRecords)
	}
	if s.TotalInput > 0 {
		frac = max(frac, float64(s.Input)/float64(s.TotalInput))
	}
	if frac > 0 && frac <= 1 {
		eta := time.Duration(secs*(1-frac)/frac) * time.Second
		line += fmt.Sprintf(", %.0f%%, ETA %s", frac*100, eta.Round(time.Second))
	}
	return line
}

// sizeText is n bytes for a person: "512 B", "14.3 MiB".
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n), 0
	for f >= unit && u < 4 {
		f /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGT"[u-1])
}
