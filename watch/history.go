// Package watch keeps what \watch saw over its refreshes: per row (by the
// result's key columns) and numeric column a bounded history, from which it
// draws a sparkline and a rate of change per second for every number and,
// for consumer groups, a status in Burrow's sense. It knows results, not
// statements: a new numeric column gets its trend without a change here.
package watch

import (
	"strconv"
	"strings"
	"time"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

const (
	// Depth is how many refreshes a row's history keeps.
	Depth = 60
	// Window is how many of the latest refreshes the rates and the group
	// statuses look at (Burrow's default window is 10 offsets too).
	Window = 10
	// markFor is for how many refreshes a row that appeared stays marked
	// "+", and a row that disappeared stays on screen marked "-".
	markFor = 5
	// MaxRows is how many rows of a refresh are tracked; the rest are
	// only counted.
	MaxRows = 1000
)

// sample is one refresh's value of one number; ok is false for NULL.
type sample struct {
	at time.Time
	v  float64
	ok bool
}

type rowHistory struct {
	key     string
	row     result.Row // the latest values
	series  [][]sample // per column index, oldest first; nil for non-numeric columns
	group   []groupSample
	born    int // the refresh it first appeared in
	goneAt  int // the refresh it was first missing from; 0 while present
	present bool
}

// Tracker is the history of one \watch. The zero value is not usable:
// call NewTracker.
type Tracker struct {
	cols    []result.Column
	rows    map[string]*rowHistory
	order   []string // keys in the latest result's order
	refresh int      // refreshes observed
	first   time.Time
	last    time.Time
	more    int // rows of the latest result past maxRows
}

func NewTracker() *Tracker { return &Tracker{rows: map[string]*rowHistory{}} }

// numeric reports whether a column gets a trend: numbers that are not part
// of the row's identity.
func numeric(c result.Column) bool {
	return !c.Key && (c.Type == result.Int || c.Type == result.Number)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// keyOf identifies a row: its key columns when the result declares them,
// otherwise every column that is not a number (a number is what moves).
func keyOf(cols []result.Column, row result.Row) string {
	declared := false
	for _, c := range cols {
		declared = declared || c.Key
	}
	var b strings.Builder
	for i, c := range cols {
		if declared && !c.Key || !declared && (c.Type == result.Int || c.Type == result.Number) {
			continue
		}
		if i < len(row) {
			b.WriteString(render.Value(row[i], c.Type))
		}
		b.WriteByte(0)
	}
	return b.String()
}

func sameColumns(a, b []result.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Observe adds one refresh's rows, taken at at; more is how many further
// rows it had that were not kept (past MaxRows). A result with other
// columns than the last one starts a new history.
func (t *Tracker) Observe(at time.Time, cols []result.Column, rows []result.Row, more int) {
	if !sameColumns(t.cols, cols) {
		*t = Tracker{cols: cols, rows: map[string]*rowHistory{}}
	}
	t.refresh++
	if t.first.IsZero() {
		t.first = at
	}
	t.last = at
	t.more = more
	if len(rows) > MaxRows {
		t.more += len(rows) - MaxRows
		rows = rows[:MaxRows]
	}
	gc := groupColumnsOf(cols)
	seen := make(map[string]int, len(rows))
	t.order = t.order[:0]
	for _, row := range rows {
		key := keyOf(cols, row)
		if n := seen[key]; n > 0 {
			key += "#" + strconv.Itoa(n) // rows alike in their key: told apart by order
		}
		seen[keyOf(cols, row)]++
		h := t.rows[key]
		if h == nil {
			h = &rowHistory{key: key, series: make([][]sample, len(cols)), born: t.refresh}
			t.rows[key] = h
		}
		h.row, h.present, h.goneAt = row, true, 0
		for i, c := range cols {
			if !numeric(c) || i >= len(row) {
				continue
			}
			v, ok := number(row[i])
			h.series[i] = keep(h.series[i], sample{at, v, ok})
		}
		if gc.lag >= 0 {
			h.group = keep(h.group, gc.sample(at, row))
		}
		t.order = append(t.order, key)
	}
	now := make(map[string]bool, len(t.order))
	for _, key := range t.order {
		now[key] = true
	}
	for key, h := range t.rows {
		if now[key] {
			continue
		}
		if h.present {
			h.present, h.goneAt = false, t.refresh
		}
		if t.refresh-h.goneAt >= markFor {
			delete(t.rows, key)
		}
	}
}

// keep appends s and drops what is older than Depth samples.
func keep[T any](s []T, v T) []T {
	s = append(s, v)
	if len(s) > Depth {
		s = append(s[:0], s[len(s)-Depth:]...)
	}
	return s
}

// groupColumns says where a result keeps what a group status is made of;
// -1 for a column it does not have. A result with a lag column is a group's.
type groupColumns struct {
	lag, committed, lagMs, members, memberID, state int
}

func groupColumnsOf(cols []result.Column) groupColumns {
	g := groupColumns{-1, -1, -1, -1, -1, -1}
	for i, c := range cols {
		switch c.Name {
		case "lag":
			g.lag = i
		case "committed_offset":
			g.committed = i
		case "lag_ms", "max_lag_ms":
			g.lagMs = i
		case "members":
			g.members = i
		case "member_id":
			g.memberID = i
		case "state":
			g.state = i
		}
	}
	if g.lag >= 0 && !numeric(cols[g.lag]) {
		g.lag = -1
	}
	return g
}

func (g groupColumns) sample(at time.Time, row result.Row) groupSample {
	s := groupSample{at: at, members: -1}
	get := func(i int) (float64, bool) {
		if i < 0 || i >= len(row) {
			return 0, false
		}
		return number(row[i])
	}
	s.lag, s.hasLag = get(g.lag)
	s.committed, s.hasCommitted = get(g.committed)
	s.lagMs, s.hasLagMs = get(g.lagMs)
	if n, ok := get(g.members); ok {
		s.members = int(n)
	} else if g.memberID >= 0 && g.memberID < len(row) {
		s.members = 0
		if id, _ := row[g.memberID].(string); id != "" {
			s.members = 1 // a partition's owner
		}
	} else if g.state >= 0 && g.state < len(row) {
		if st, _ := row[g.state].(string); st == "Empty" {
			s.members = 0
		}
	}
	return s
}
