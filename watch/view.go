package watch

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/clipperhouse/displaywidth"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// Options is how the trend table is drawn.
type Options struct {
	Width  int  // terminal columns; 0: no limit
	Height int  // terminal lines for the table; 0: no limit
	Color  bool // ANSI colours for directions and statuses
}

const sparkRunes = "▁▂▃▄▅▆▇█"

// sparkWidths are the sparkline lengths tried, longest first, before
// sparklines are dropped for a narrow terminal.
var sparkWidths = []int{Depth, 30, 20, 10}

const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
)

type kind int

const (
	kindMark kind = iota
	kindValue
	kindSpark
	kindRate
	kindStatus
)

type gridCol struct {
	header string
	kind   kind
	src    int  // the result column
	right  bool // right-aligned
	joined bool // follows the previous column after a space, not a "|"
	width  int
}

type gridCell struct {
	text  string
	color string
}

// Render draws the latest refresh with its trends. It fits the width by
// dropping, in order: long sparklines, all sparklines, rates, and then by
// cutting the widest text cells; rows past the height are counted, not drawn.
func (t *Tracker) Render(w io.Writer, opt Options) error {
	layouts := t.layouts()
	for i, layout := range layouts {
		cells := t.cells(layout)
		if opt.Width <= 0 || lineWidth(layout, cells) <= opt.Width {
			return t.write(w, layout, cells, opt)
		}
		// Before the rates go, long text (a group's topics) is cut.
		if i == len(layouts)-2 && cutToFit(layout, cells, opt.Width, textCutFloor) {
			return t.write(w, layout, cells, opt)
		}
	}
	layout := layouts[len(layouts)-1]
	cells := t.cells(layout)
	cutToFit(layout, cells, opt.Width, minCut)
	return t.write(w, layout, cells, opt)
}

const (
	// textCutFloor is how far text is cut before the rates are dropped.
	textCutFloor = 12
	// minCut is the narrowest a cut cell gets; "NULL" still fits.
	minCut = 4
)

// layouts lists the candidate layouts, widest first: long sparklines,
// shorter ones, sparklines only for numbers that moved, no sparklines, no
// rates.
func (t *Tracker) layouts() [][]gridCol {
	var out [][]gridCol
	for _, sw := range sparkWidths {
		out = append(out, t.layout(min(sw, t.refresh), false, true))
	}
	last := sparkWidths[len(sparkWidths)-1]
	return append(out, t.layout(min(last, t.refresh), true, true), t.layout(0, false, true), t.layout(0, false, false))
}

func (t *Tracker) layout(spark int, movingOnly, rates bool) []gridCol {
	cols := []gridCol{{kind: kindMark}}
	for i, c := range t.cols {
		right := c.Type == result.Int || c.Type == result.Number
		cols = append(cols, gridCol{header: c.Name, kind: kindValue, src: i, right: right})
		if !numeric(c) {
			continue
		}
		if spark > 0 && (!movingOnly || t.moved(i)) {
			cols = append(cols, gridCol{kind: kindSpark, src: i, joined: true, width: spark})
		}
		if rates {
			cols = append(cols, gridCol{kind: kindRate, src: i, joined: true, right: true})
		}
	}
	if groupColumnsOf(t.cols).lag >= 0 {
		cols = append(cols, gridCol{header: "status", kind: kindStatus})
	}
	return cols
}

// moved reports whether column i changed in any row's history.
func (t *Tracker) moved(i int) bool {
	for _, h := range t.rows {
		s := h.series[i]
		for j := 1; j < len(s); j++ {
			if s[j] != (sample{at: s[j].at, v: s[0].v, ok: s[0].ok}) {
				return true
			}
		}
	}
	return false
}

// rows returns the rows to draw: the latest result's, then those that
// went away.
func (t *Tracker) drawn() []*rowHistory {
	var out []*rowHistory
	for _, k := range t.order {
		out = append(out, t.rows[k])
	}
	for _, h := range t.rows {
		if !h.present {
			out = append(out, h)
		}
	}
	// Gone rows in a stable order: by key.
	gone := out[len(t.order):]
	for i := 1; i < len(gone); i++ {
		for j := i; j > 0 && gone[j].key < gone[j-1].key; j-- {
			gone[j], gone[j-1] = gone[j-1], gone[j]
		}
	}
	return out
}

func (t *Tracker) cells(layout []gridCol) [][]gridCell {
	var out [][]gridCell
	for _, h := range t.drawn() {
		row := make([]gridCell, len(layout))
		for j, gc := range layout {
			row[j] = t.cell(h, gc)
		}
		out = append(out, row)
	}
	return out
}

func (t *Tracker) cell(h *rowHistory, gc gridCol) gridCell {
	dim := ""
	if !h.present {
		dim = ansiDim
	}
	switch gc.kind {
	case kindMark:
		switch {
		case !h.present:
			return gridCell{"-", ansiRed}
		case h.born > 1 && t.refresh-h.born < markFor:
			return gridCell{"+", ansiGreen}
		}
		return gridCell{}
	case kindValue:
		var v any
		if gc.src < len(h.row) {
			v = h.row[gc.src]
		}
		c := gridCell{text: oneLine(render.Value(v, t.cols[gc.src].Type)), color: dim}
		if v == nil && dim == "" {
			c.color = ansiDim
		}
		return c
	case kindSpark:
		s := h.series[gc.src]
		return gridCell{sparkline(s, gc.width), directionColor(t.cols[gc.src].Name, rate(s))}
	case kindRate:
		s := h.series[gc.src]
		r := rate(s)
		// A NULL now has no rate: the one of the numbers before it
		// would read as this NULL's.
		if math.IsNaN(r) || len(s) > 0 && !s[len(s)-1].ok {
			return gridCell{}
		}
		return gridCell{formatRate(r), directionColor(t.cols[gc.src].Name, r)}
	case kindStatus:
		if !h.present {
			return gridCell{"gone", ansiDim}
		}
		st, eta := groupStatus(lastN(h.group, Window))
		return gridCell{statusText(st, eta), statusColor(st)}
	}
	return gridCell{}
}

func oneLine(s string) string {
	if strings.ContainsAny(s, "\n\r\t") {
		s = strconv.Quote(s)
		s = s[1 : len(s)-1]
	}
	return s
}

func lastN[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// rate is the change per second over the last Window samples with a
// value; NaN when fewer than two have one.
func rate(s []sample) float64 {
	var first, last *sample
	for i := range lastN(s, Window) {
		x := &lastN(s, Window)[i]
		if !x.ok {
			continue
		}
		if first == nil {
			first = x
		}
		last = x
	}
	if first == nil || first == last {
		return math.NaN()
	}
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 {
		return math.NaN()
	}
	return (last.v - first.v) / secs
}

// sparkline draws the last width samples, scaled from their minimum to
// their maximum; NULL is a blank, and a flat line sits at the bottom for
// zero and in the middle otherwise.
func sparkline(s []sample, width int) string {
	s = lastN(s, width)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range s {
		if x.ok {
			lo, hi = math.Min(lo, x.v), math.Max(hi, x.v)
		}
	}
	runes := []rune(sparkRunes)
	var b strings.Builder
	for i := len(s); i < width; i++ {
		b.WriteByte(' ')
	}
	for _, x := range s {
		switch {
		case !x.ok:
			b.WriteByte(' ')
		case hi == lo && x.v == 0:
			b.WriteRune(runes[0])
		case hi == lo:
			b.WriteRune(runes[3])
		default:
			i := int(math.Round((x.v - lo) / (hi - lo) * float64(len(runes)-1)))
			b.WriteRune(runes[i])
		}
	}
	return b.String()
}

// formatRate writes a rate per second with a sign and a unit prefix:
// +12/s, -3.5/s, +1.2k/s, 0/s.
func formatRate(r float64) string {
	if r == 0 || math.Abs(r) < 0.05 {
		return "0/s"
	}
	sign := "+"
	if r < 0 {
		sign = "-"
	}
	a := math.Abs(r)
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if a >= u.div {
			return sign + trimFloat(a/u.div) + u.unit + "/s"
		}
	}
	return sign + trimFloat(a) + "/s"
}

func trimFloat(f float64) string {
	if f >= 100 {
		return strconv.FormatFloat(math.Round(f), 'f', 0, 64)
	}
	return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0")
}

// directionColor: green when the number moves the good way, red the bad
// way. For lag (a column whose name says lag) more is worse; for anything
// else, more is shown as good.
func directionColor(name string, r float64) string {
	if math.IsNaN(r) || math.Abs(r) < 0.05 {
		return ""
	}
	up := r > 0
	if strings.Contains(name, "lag") {
		up = !up
	}
	if up {
		return ansiGreen
	}
	return ansiRed
}

func statusColor(st string) string {
	switch st {
	case StatusOK:
		return ansiGreen
	case StatusCatchingUp:
		return ansiCyan
	case StatusFallingBehind:
		return ansiYellow
	case StatusStalled, StatusStopped, StatusRewound:
		return ansiRed
	case StatusMeasuring:
		return ansiDim
	}
	return ""
}

var widthOpts = displaywidth.Options{}

func textWidth(s string) int { return widthOpts.String(s) }

// widths sets each column's width to its widest cell (and header).
func widths(layout []gridCol, cells [][]gridCell) []int {
	ws := make([]int, len(layout))
	for j, gc := range layout {
		ws[j] = textWidth(gc.header)
		for _, row := range cells {
			ws[j] = max(ws[j], textWidth(row[j].text))
		}
	}
	return ws
}

func lineWidth(layout []gridCol, cells [][]gridCell) int {
	n := 0
	for j, w := range widths(layout, cells) {
		n += w
		if j > 0 {
			if layout[j].joined {
				n++
			} else {
				n += 3
			}
		}
	}
	return n + 2 // the leading space, and the rule's last dash
}

// cutToFit shortens the widest value cells, down to floor, until a line
// fits width; it reports whether it does.
func cutToFit(layout []gridCol, cells [][]gridCell, width, floor int) bool {
	for lineWidth(layout, cells) > width {
		ws := widths(layout, cells)
		widest := -1
		for j, gc := range layout {
			if gc.kind == kindValue && ws[j] > floor && (widest < 0 || ws[j] > ws[widest]) {
				widest = j
			}
		}
		if widest < 0 {
			return false // nothing left to cut: the terminal wraps
		}
		to := ws[widest] - 1
		if textWidth(layout[widest].header) > to {
			layout[widest].header = cut(layout[widest].header, to)
		}
		for _, row := range cells {
			if textWidth(row[widest].text) > to {
				row[widest].text = cut(row[widest].text, to)
			}
		}
	}
	return true
}

func cut(s string, w int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		rw := textWidth(string(r))
		if n+rw > w-1 {
			break
		}
		b.WriteRune(r)
		n += rw
	}
	return b.String() + "…"
}

func (t *Tracker) write(w io.Writer, layout []gridCol, cells [][]gridCell, opt Options) error {
	ws := widths(layout, cells)
	var b strings.Builder
	line := func(get func(j int) gridCell, sep string) {
		for j, gc := range layout {
			if j > 0 {
				if gc.joined {
					b.WriteByte(' ')
				} else {
					b.WriteString(sep)
				}
			} else {
				b.WriteByte(' ')
			}
			c := get(j)
			pad := strings.Repeat(" ", ws[j]-textWidth(c.text))
			if gc.right {
				b.WriteString(pad)
			}
			if opt.Color && c.color != "" && c.text != "" {
				b.WriteString(c.color + c.text + ansiReset)
			} else {
				b.WriteString(c.text)
			}
			if !gc.right && j < len(layout)-1 {
				b.WriteString(pad)
			}
		}
		b.WriteByte('\n')
	}
	line(func(j int) gridCell { return gridCell{text: layout[j].header} }, " | ")
	for j, gc := range layout {
		switch {
		case j == 0:
			b.WriteString(strings.Repeat("-", ws[j]+1))
		case gc.joined:
			b.WriteString(strings.Repeat("-", ws[j]+1))
		default:
			b.WriteString("-+-" + strings.Repeat("-", ws[j]))
		}
	}
	b.WriteString("-\n")
	shown := len(cells)
	if opt.Height > 0 && shown > opt.Height-3 {
		shown = max(opt.Height-4, 0) // the header, its rule and the footer
	}
	for _, row := range cells[:shown] {
		line(func(j int) gridCell { return row[j] }, " | ")
	}
	n := len(t.order) + t.more
	b.WriteString("(" + strconv.Itoa(n) + " " + plural(n, "row", "rows"))
	if hidden := len(cells) - shown + t.more; hidden > 0 {
		fmt.Fprintf(&b, ", %d not shown: the terminal is not tall enough", hidden)
	}
	if t.refresh > 1 {
		span := t.last.Sub(t.first)
		if span < 10*time.Second {
			span = span.Round(100 * time.Millisecond)
		} else {
			span = span.Round(time.Second)
		}
		fmt.Fprintf(&b, "; %d refreshes in %s", t.refresh, span)
	}
	b.WriteString(")\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
