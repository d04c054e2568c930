package main

import (
	"io"
	"time"

	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/watch"
)

// drawTrends reads one refresh of a \watch into its history and draws the
// table with the trends, fitted to the terminal: the header line above it
// takes one line, and the cursor one more.
func (a *app) drawTrends(w io.Writer, tr *watch.Tracker, at time.Time, res result.Result) (int64, error) {
	var rows []result.Row
	more := 0
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		if len(rows) < watch.MaxRows {
			rows = append(rows, row)
		} else {
			more++ // counted, not kept: a watched CONSUME may be long
		}
	}
	if err := res.Err(); err != nil && !result.IsPartial(err) {
		return int64(len(rows) + more), err
	}
	tr.Observe(at, res.Columns(), rows, more)
	opt := watch.Options{Width: a.ios.Width(), Color: a.colorOut}
	if h := a.ios.height(); h > 0 {
		opt.Height = max(h-2, 4)
	}
	if err := tr.Render(w, opt); err != nil {
		return int64(len(rows) + more), err
	}
	return int64(len(rows) + more), res.Err()
}
