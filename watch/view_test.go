package watch

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/result"
)

func series(vals ...any) []sample {
	var s []sample
	for i, v := range vals {
		x := sample{at: t0.Add(time.Duration(i) * time.Second)}
		if f, ok := v.(int); ok {
			x.v, x.ok = float64(f), true
		}
		s = append(s, x)
	}
	return s
}

func TestSparkline(t *testing.T) {
	tests := []struct {
		s     []sample
		width int
		want  string
	}{
		{series(0, 1, 2, 3, 4, 5, 6, 7), 8, "▁▂▃▄▅▆▇█"},
		{series(7, 0), 2, "█▁"},
		{series(1, 2), 4, "  ▁█"},                 // short history: right-aligned
		{series(0, 0, 0), 3, "▁▁▁"},               // flat at zero
		{series(5, 5, 5), 3, "▄▄▄"},               // flat elsewhere
		{series(0, nil, 10), 3, "▁ █"},            // NULL is a gap
		{series(0, 1, 2, 3, 4, 5, 6, 7), 2, "▁█"}, // the latest samples, rescaled
	}
	for _, tt := range tests {
		if got := sparkline(tt.s, tt.width); got != tt.want {
			t.Errorf("sparkline(%v, %d) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}

func TestRate(t *testing.T) {
	if r := rate(series(0, 5, 10)); r != 5 {
		t.Errorf("rate = %v, want 5/s", r)
	}
	if r := rate(series(nil, 4, nil, 0)); r != -2 {
		t.Errorf("rate over NULLs = %v, want -2/s", r)
	}
	if r := rate(series(3)); !math.IsNaN(r) {
		t.Errorf("rate of one sample = %v, want none", r)
	}
	// Only the last Window samples count.
	long := series(1000, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9)
	if r := rate(long); r != 1 {
		t.Errorf("rate = %v, want 1/s over the last %d samples", r, Window)
	}
	for r, want := range map[float64]string{0: "0/s", 12: "+12/s", -3.46: "-3.5/s", 1234: "+1.2k/s", 250000: "+250k/s", 0.01: "0/s", 4e6: "+4M/s"} {
		if got := formatRate(r); got != want {
			t.Errorf("formatRate(%v) = %q, want %q", r, got, want)
		}
	}
}

var groupCols = []result.Column{
	{Name: "group", Type: result.String, Key: true}, {Name: "state", Type: result.String},
	{Name: "members", Type: result.Int}, {Name: "topics", Type: result.String}, {Name: "lag", Type: result.Int},
}

func groupRow(name, state string, members, lag int64) result.Row {
	return result.Row{name, state, members, "orders", lag}
}

func draw(t *testing.T, tr *Tracker, opt Options) string {
	t.Helper()
	var b strings.Builder
	if err := tr.Render(&b, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// lineOf returns the drawn line that holds s.
func lineOf(t *testing.T, out, s string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line holds %q:\n%s", s, out)
	return ""
}

func TestTrackerTrendsAndStatuses(t *testing.T) {
	tr := NewTracker()
	for i := int64(0); i < 6; i++ {
		rows := []result.Row{
			groupRow("billing", "Stable", 2, 10+7*i), // falling behind
			groupRow("audit", "Empty", 0, 40),        // stopped
		}
		if i == 5 {
			rows = append(rows, groupRow("fresh", "Stable", 1, 0)) // appears
		}
		tr.Observe(t0.Add(time.Duration(i)*2*time.Second), groupCols, rows, 0)
	}
	out := draw(t, tr, Options{Width: 200})
	t.Logf("\n%s", out)
	billing := lineOf(t, out, "billing")
	if !strings.Contains(billing, "▁▂▄▅▇█") || !strings.Contains(billing, "+3.5/s") || !strings.Contains(billing, "falling behind") {
		t.Errorf("billing: want a rising sparkline, +3.5/s and falling behind:\n%s", billing)
	}
	if audit := lineOf(t, out, "audit"); !strings.Contains(audit, "stopped") {
		t.Errorf("audit: want stopped:\n%s", audit)
	}
	if fresh := lineOf(t, out, "fresh"); !strings.HasPrefix(fresh, " + ") || !strings.Contains(fresh, " ok") {
		t.Errorf("a new row is marked +:\n%s", fresh)
	}
	if !strings.Contains(out, "(3 rows; 6 refreshes in 10s)") {
		t.Errorf("footer:\n%s", out)
	}

	// audit goes away: marked, then dropped after markFor refreshes.
	at := t0.Add(12 * time.Second)
	tr.Observe(at, groupCols, []result.Row{groupRow("billing", "Stable", 2, 52), groupRow("fresh", "Stable", 1, 0)}, 0)
	out = draw(t, tr, Options{Width: 200})
	if audit := lineOf(t, out, "audit"); !strings.HasPrefix(audit, " - ") || !strings.Contains(audit, "gone") {
		t.Errorf("a row that went away is marked -:\n%s", out)
	}
	if !strings.Contains(out, "(2 rows;") {
		t.Errorf("a gone row is not counted:\n%s", out)
	}
	for i := 0; i < markFor; i++ {
		at = at.Add(2 * time.Second)
		tr.Observe(at, groupCols, []result.Row{groupRow("billing", "Stable", 2, 52), groupRow("fresh", "Stable", 1, 0)}, 0)
	}
	out = draw(t, tr, Options{Width: 200})
	if strings.Contains(out, "audit") {
		t.Errorf("a row gone for %d refreshes is still shown:\n%s", markFor, out)
	}
	if strings.Contains(lineOf(t, out, "fresh"), "+") {
		t.Errorf("fresh is still marked new after %d refreshes:\n%s", markFor+1, out)
	}
}

func TestTrackerFitsTheWidth(t *testing.T) {
	tr := NewTracker()
	for i := int64(0); i < 40; i++ {
		tr.Observe(t0.Add(time.Duration(i)*time.Second), groupCols, []result.Row{groupRow("billing-"+strings.Repeat("x", 30), "Stable", 2, 10+i)}, 0)
	}
	wide := draw(t, tr, Options{Width: 300})
	if !strings.Contains(wide, strings.Repeat("▁", 0)+"█ ") || len([]rune(lineOf(t, wide, "billing"))) < 120 {
		t.Errorf("wide terminal: want long sparklines:\n%s", wide)
	}
	for _, w := range []int{120, 90, 80, 70} {
		out := draw(t, tr, Options{Width: w})
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if strings.HasPrefix(l, "(") {
				continue // the footer
			}
			if n := textWidth(l); n > w {
				t.Errorf("width %d: a line is %d wide:\n%s", w, n, out)
			}
		}
		line := lineOf(t, out, "billing")
		if w == 80 {
			if strings.ContainsAny(line, sparkRunes) || !strings.Contains(line, "+1/s") {
				t.Errorf("width %d: sparklines go first, rates stay:\n%s", w, out)
			}
		}
	}
	if out := draw(t, tr, Options{Width: 60}); !strings.Contains(out, "bill…") || textWidth(lineOf(t, out, "bill")) > 60 {
		t.Errorf("width 50: the widest text is cut:\n%s", out)
	}
	if out := draw(t, tr, Options{Width: 300, Height: 5}); !strings.Contains(out, "(1 row; ") {
		t.Errorf("height: %s", out)
	}
}

func TestTrackerRowsPastTheHeightAreCounted(t *testing.T) {
	tr := NewTracker()
	var rows []result.Row
	for i := int64(0); i < 20; i++ {
		rows = append(rows, groupRow(strings.Repeat("g", int(i+1)), "Stable", 1, 0))
	}
	tr.Observe(t0, groupCols, rows, 0)
	out := draw(t, tr, Options{Width: 200, Height: 10})
	if n := strings.Count(out, "\n"); n != 9 {
		t.Errorf("height 10: want 9 lines (room for the cursor), got %d:\n%s", n, out)
	}
	if !strings.Contains(out, "(20 rows, 14 not shown: the terminal is not tall enough)") {
		t.Errorf("footer:\n%s", out)
	}
}

func TestTrackerColours(t *testing.T) {
	tr := NewTracker()
	for i := int64(0); i < 3; i++ {
		tr.Observe(t0.Add(time.Duration(i)*time.Second), groupCols, []result.Row{groupRow("billing", "Stable", 2, 10+5*i)}, 0)
	}
	out := draw(t, tr, Options{Width: 200, Color: true})
	if !strings.Contains(out, ansiRed+"+5/s"+ansiReset) {
		t.Errorf("growing lag is red:\n%q", out)
	}
	if !strings.Contains(out, ansiYellow+"falling behind"+ansiReset) {
		t.Errorf("falling behind is yellow:\n%q", out)
	}
	if plain := draw(t, tr, Options{Width: 200}); strings.Contains(plain, "\x1b[") {
		t.Errorf("colour off: no escapes:\n%q", plain)
	}
}

func TestTrackerWithoutKeyColumnsUsesTheText(t *testing.T) {
	cols := []result.Column{{Name: "name", Type: result.String}, {Name: "n", Type: result.Int}}
	tr := NewTracker()
	tr.Observe(t0, cols, []result.Row{{"a", int64(1)}, {"b", int64(5)}}, 0)
	tr.Observe(t0.Add(time.Second), cols, []result.Row{{"b", int64(7)}, {"a", int64(2)}}, 0)
	out := draw(t, tr, Options{Width: 200})
	if !strings.Contains(lineOf(t, out, " a "), "+1/s") || !strings.Contains(lineOf(t, out, " b "), "+2/s") {
		t.Errorf("rows are followed by their text columns:\n%s", out)
	}
	if strings.Contains(out, "status") {
		t.Errorf("no lag column, no status:\n%s", out)
	}
}

// A number that is NULL now (the group's offsets are gone) is drawn as
// NULL with no rate beside it, not with the rate of the numbers before.
func TestTrackerNullNowHasNoRate(t *testing.T) {
	cols := []result.Column{{Name: "group", Type: result.String, Key: true}, {Name: "lag", Type: result.Int}}
	tr := NewTracker()
	for i, v := range []any{int64(5), int64(9), int64(13), nil} {
		tr.Observe(t0.Add(time.Duration(i)*2*time.Second), cols, []result.Row{{"billing", v}}, 0)
	}
	line := lineOf(t, draw(t, tr, Options{}), "billing")
	if !strings.Contains(line, "NULL") || strings.Contains(line, "/s") {
		t.Fatalf("want NULL with no rate in %q", line)
	}
}
