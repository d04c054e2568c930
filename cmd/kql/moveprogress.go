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
			el := time.Since(start)
			fmt.Fprintf(a.stderr, "wrote %d %s, %s in %s, %.0f records/s\n", s.Records, plural(int(s.Records), "record", "records"),
				sizeText(s.Bytes), el.Round(time.Millisecond), float64(s.Records)/max(el.Seconds(), 1e-9))
		}
	}
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
