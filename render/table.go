package render

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/clipperhouse/displaywidth"
	"github.com/fatih/color"

	"github.com/kql-dev/kql/result"
)

// The table is psql's aligned format:
//
//	 partition | key | value
//	-----------+-----+-------
//	         0 | k1  | hello
//	(1 row)
//
// It is written by this package rather than by tablewriter: for 100k
// CONSUME rows in batches of 1000, tablewriter v1 took 1.3 s and allocated
// 840 MB, this writer 0.09 s and 17 MB (BenchmarkTablewriterBatches100k vs
// BenchmarkRenderTable100k), and a CONSUME can return millions of rows. Rows are formatted one batch at a
// time (Options.BatchSize, like psql's FETCH_COUNT); the header is written
// once, before the first batch, and column widths only grow from batch to
// batch, so a long result stays aligned unless a later batch holds a wider
// value. With Options.Width set, the widest columns are narrowed until a
// line fits and a cut cell ends in "…". Control characters inside a value
// are shown as escapes (\n, \t, \x01, \u{85}) so a value is always one line.

// ellipsis marks a cell that was cut to fit the terminal.
const ellipsis = "…"

// minCutWidth is the narrowest a column is cut to; "NULL" always fits.
const minCutWidth = 4

// widthOpts measures display width the same way on every machine (ambiguous
// East Asian characters are one column wide), so output does not depend on
// the locale.
var widthOpts = displaywidth.Options{}

// cell is one display cell. Its text is in the blocks of the cellMaker
// that made it (see str), named by position rather than by a string: a
// page of cells holds no pointer, so storing a cell costs no GC write
// barrier and the GC has nothing in a page to scan (with a string per
// cell, the barriers were a sixth of a table CONSUME's CPU).
//
// Four fields of at most 32 bytes, so that the compiler keeps a cell in
// registers: the cells are passed and returned by value on every record.
type cell struct {
	block int32 // the text is blocks[block][at:at+n]; -1: own[at]
	at    int32
	n     int32 // the text's length; -1: NULL (shown dim)
	width int   // display width of the text
}

// nullCell is SQL NULL.
var nullCell = cell{n: -1, width: 4}

func (c cell) null() bool { return c.n < 0 }

// styler holds the per-stream colours.
type styler struct {
	null string // "NULL", dim when colour is on
}

func newStyler(opt Options) styler {
	dim := color.New(color.Faint)
	if opt.Color {
		dim.EnableColor()
	} else {
		dim.DisableColor()
	}
	return styler{null: dim.Sprint("NULL")}
}

// cellMaker turns values into display cells, reusing its buffers.
type cellMaker struct {
	limit   int // cut text wider than this; 0 = never
	ts      timeFormatter
	text    []byte
	display []byte
	// blocks hold the cell texts (see intern): blocks[:next] are in use
	// since the last rewind, the last of them filled up to fill. own holds
	// the texts that are not in a block.
	blocks [][]byte
	next   int
	fill   int
	own    []string
}

// arenaChunk is the size of the blocks cell texts are copied into.
const arenaChunk = 64 << 10

// intern copies b into a block shared with the texts before it (one
// allocation per 64 KiB of cells instead of one per cell, six per record)
// and returns the cell that names it. Bytes are only ever appended to a
// block, never overwritten until rewind, so every cell's text stays as it
// was made until then. A text too large for a block is its own string.
func (m *cellMaker) intern(b []byte, width int) cell {
	c := cell{n: int32(len(b)), width: width}
	if len(b) == 0 {
		return c
	}
	if len(b) > arenaChunk/4 {
		return m.keep(string(b), width)
	}
	if m.next == 0 || arenaChunk-m.fill < len(b) {
		if m.next == len(m.blocks) {
			m.blocks = append(m.blocks, make([]byte, arenaChunk))
		}
		m.next++
		m.fill = 0
	}
	c.block, c.at = int32(m.next-1), int32(m.fill)
	m.fill += copy(m.blocks[m.next-1][m.fill:], b)
	return c
}

// keep returns the cell of a text that is not in a block.
func (m *cellMaker) keep(s string, width int) cell {
	m.own = append(m.own, s)
	return cell{block: -1, at: int32(len(m.own) - 1), n: int32(len(s)), width: width}
}

// str is c's text; c must be this maker's, made since its last rewind.
func (m *cellMaker) str(c cell) string {
	switch {
	case c.null():
		return "NULL"
	case c.n == 0:
		return ""
	case c.block < 0:
		return m.own[c.at]
	}
	return unsafe.String(&m.blocks[c.block][c.at], c.n)
}

// rewind lets intern fill its blocks again from the first: every cell made
// before is overwritten by later ones, so the caller must hold none (the
// table rewinds between pages, whose cells are dropped once drawn). A
// table's blocks are then a page's worth, allocated once, instead of a new
// block every 64 KiB of output for the GC to clear and collect.
func (m *cellMaker) rewind() {
	m.next, m.fill = 0, 0
	clear(m.own)
	m.own = m.own[:0]
}

func (m *cellMaker) value(v any, t result.Type) cell {
	if isNull(v) {
		return nullCell
	}
	m.text = appendText(m.text[:0], v, t)
	return m.make(m.text)
}

// The record path's cells: typed values, nothing boxed.

func (m *cellMaker) int(n int64) cell {
	return m.plain(m.scratch(strconv.AppendInt(m.text[:0], n, 10)))
}

func (m *cellMaker) time(ms int64) cell {
	return m.plain(m.scratch(m.ts.append(m.text[:0], ms)))
}

// scratch keeps t, appended to m.text[:0], as m.text only when it grew: a
// store of a slice into the maker is a GC write barrier while a collection
// runs (the read path's allocations keep one running much of the time), and
// the cells are made at several a record.
func (m *cellMaker) scratch(t []byte) []byte {
	if cap(t) != cap(m.text) {
		m.text = t
	}
	return t
}

func (m *cellMaker) bytes(b []byte) cell {
	if b == nil {
		return nullCell
	}
	// Most keys and values are printable ASCII: such text is its own
	// display text (valid UTF-8, nothing to escape, a column a byte), so
	// it is copied once, into the block, instead of through m.text and
	// m.display first.
	if printableASCII(b) && !looksHex(b) {
		return m.plain(b)
	}
	m.text = appendBytesText(m.text[:0], b)
	return m.make(m.text)
}

// plain is make for text known to be printable ASCII (digits, a
// timestamp, a value printableASCII passed): the display text is the text
// and its width its length. Only a cell wider than the terminal takes
// make's way, which cuts it.
func (m *cellMaker) plain(s []byte) cell {
	if m.limit > 0 && len(s) > m.limit {
		return m.make(s)
	}
	return m.intern(s, len(s))
}

// printableASCII reports whether every byte of s is printable ASCII
// (0x20-0x7e), eight bytes at a time.
func printableASCII(s []byte) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if displayLookMask(binary.LittleEndian.Uint64(s[i:])) != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

func (m *cellMaker) headers(hs []result.Header) cell {
	if len(hs) == 0 {
		return cell{} // the empty text: what make makes of it
	}
	return m.make(m.scratch(appendHeadersText(m.text[:0], hs)))
}

// record appends rec's six cells to slab.
func (m *cellMaker) record(slab []cell, rec *result.Record) []cell {
	return append(slab, m.int(int64(rec.Partition)), m.int(rec.Offset), m.time(rec.Timestamp),
		m.bytes(rec.Key), m.bytes(rec.Value), m.headers(rec.Headers))
}

func (m *cellMaker) name(s string) cell {
	m.text = appendStringText(m.text[:0], s)
	return m.make(m.text)
}

func (m *cellMaker) make(s []byte) cell {
	cut := false
	if m.limit > 0 {
		// A cell never needs more than the terminal's width; do not escape
		// and keep a megabyte value to show its first line's worth.
		if max := 8*m.limit + 64; len(s) > max {
			for max > 0 && !utf8.RuneStart(s[max]) {
				max--
			}
			s, cut = s[:max], true
		}
	}
	display, ascii := appendDisplay(m.display[:0], s)
	if cap(display) != cap(m.display) { // see scratch
		m.display = display
	}
	width := len(display) // printable ASCII: one column a byte
	if !ascii {
		width = widthOpts.Bytes(display)
	}
	var c cell
	if m.limit > 0 && width > m.limit {
		text := widthOpts.TruncateString(string(display), m.limit, "")
		c, cut = m.keep(text, widthOpts.String(text)), true
	} else {
		c = m.intern(display, width)
	}
	if cut {
		// Count a cut cell as wider than any column can be, so it is always
		// cut again to its column and shown with the ellipsis.
		c.width = m.limit + 1
	}
	return c
}

// appendDisplay appends s with every character that would break a grid line
// or reorder the terminal's text escaped: C0 and C1 controls, DEL, the
// Unicode line and paragraph separators and the bidirectional controls.
// Backslashes are not doubled: the table is for reading; csv, tsv and json
// are the exact formats. ascii says s was printable ASCII only (the text
// appended as it is, its width its length).
func appendDisplay(buf, s []byte) (out []byte, ascii bool) {
	start := 0
	ascii = true
	for i := 0; i < len(s); {
		// Eight bytes at a time up to the first that is not printable
		// ASCII: most cells are nothing else.
		if i+8 <= len(s) {
			m := displayLookMask(binary.LittleEndian.Uint64(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f {
				i++
				continue
			}
			ascii = false
			buf = append(buf, s[start:i]...)
			switch c {
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		ascii = false
		r, size := utf8.DecodeRune(s[i:])
		if escapedRune(r) {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '{')
			buf = strconv.AppendInt(buf, int64(r), 16)
			buf = append(buf, '}')
			start = i + size
		}
		i += size
	}
	return append(buf, s[start:]...), ascii
}

// displayLookMask has the high bit set of each byte of w that is not
// printable ASCII (a control, DEL, or part of a multi-byte rune), and
// perhaps of some above the first such byte, never below it (the tests of
// "Bit Twiddling Hacks" are exact up to the first byte they find).
func displayLookMask(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	less20 := (w - lo*0x20) &^ w
	del := w ^ (lo * 0x7f)
	return (less20 | (del-lo)&^del | w) & hi
}

func escapedRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f, // bidi marks
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	}
	return false
}

// lineWriter builds the output a line at a time, and hands it to the
// output about every lineChunk bytes rather than a line at a time (a
// table line is short: one write per line was a lock and a copy per
// record). Flush it before the output is flushed.
type lineWriter struct {
	o     *output
	line  []byte // lines not yet written; the current one starts at start
	start int
}

// lineChunk is how much the lineWriter gathers before it writes.
const lineChunk = 32 << 10

// spaces is what pad copies from: a cell's padding in one append, not a
// byte at a time (a grid row pads each of its cells).
const spaces = "                                                                "

func (l *lineWriter) pad(n int) { l.line = appendPad(l.line, n) }

func appendPad(line []byte, n int) []byte {
	for n > len(spaces) {
		line = append(line, spaces...)
		n -= len(spaces)
	}
	if n > 0 {
		line = append(line, spaces[:n]...)
	}
	return line
}

func (l *lineWriter) repeat(s string, n int) {
	for ; n > 0; n-- {
		l.line = append(l.line, s...)
	}
}

// end writes the line without its trailing spaces (padding after the last
// column, or after the bar of an empty last cell).
func (l *lineWriter) end() error {
	for len(l.line) > l.start && l.line[len(l.line)-1] == ' ' {
		l.line = l.line[:len(l.line)-1]
	}
	l.line = append(l.line, '\n')
	l.start = len(l.line)
	if len(l.line) < lineChunk {
		return nil
	}
	return l.flush()
}

// flush writes the lines gathered so far to the output.
func (l *lineWriter) flush() error {
	err := l.o.write(l.line)
	l.line, l.start = l.line[:0], 0
	return err
}

// put writes c, whose text is text, in a field of width w, cutting it with
// the ellipsis when it is wider. align is 'l', 'r' or 'c'; last leaves out
// trailing padding.
func (l *lineWriter) put(text string, c cell, w int, align byte, last bool, st styler) {
	l.line = appendCell(l.line, text, c, w, align, last, &st)
}

// appendCell is put on a line kept in a local variable (a grid row's
// cells are appended so, with no store into the lineWriter per cell: see
// cellMaker.scratch).
func appendCell(line []byte, text string, c cell, w int, align byte, last bool, st *styler) []byte {
	width := c.width
	if width > w {
		text = widthOpts.TruncateString(text, w-1, "") + ellipsis
		width = widthOpts.String(text)
	}
	gap := max(w-width, 0)
	var left int
	switch align {
	case 'r':
		left = gap
	case 'c':
		left = gap / 2
	}
	line = appendPad(line, left)
	if c.null() {
		line = append(line, st.null...)
	} else {
		line = append(line, text...)
	}
	if !last {
		line = appendPad(line, gap-left)
	}
	return line
}

func writeTable(o *output, res result.Result, opt Options) (int64, error) {
	cols := res.Columns()
	st := newStyler(opt)
	maker := &cellMaker{limit: opt.Width}
	lw := &lineWriter{o: o, line: make([]byte, 0, lineChunk+4<<10)}
	// The headers outlive every page: their texts are not in maker's
	// blocks, which each page fills again.
	headMaker := &cellMaker{limit: opt.Width}
	rs, _ := recordStream(res)
	// A live result (FOLLOW) prints each row as it comes once its backlog
	// is shown, in the widths the first rows set: a later, wider cell is
	// cut with the ellipsis rather than shifting the grid.
	stats := res.Stats()
	var frozen []int

	heads := make([]cell, len(cols))
	natural := make([]int, len(cols)) // widest cell so far, per column
	align := make([]byte, len(cols))
	for i, c := range cols {
		heads[i] = headMaker.name(c.Name)
		natural[i] = heads[i].width
		align[i] = 'l'
		if c.Type == result.Int || c.Type == result.Number {
			align[i] = 'r'
		}
	}

	// One batch of cells, reused from batch to batch.
	batch := make([][]cell, 0, min(opt.BatchSize, 4096))
	var slab []cell
	var n int64
	var readErr error
	for first := true; ; first = false {
		batch, slab = batch[:0], slab[:0]
		maker.rewind() // the last page is drawn: no cell of it is held
		for len(batch) < opt.BatchSize {
			if len(batch) > 0 && stats.Live() {
				break
			}
			if rs != nil {
				rec, ok := rs.NextRecord()
				if !ok {
					break
				}
				at := len(slab)
				slab = maker.record(slab, rec)
				for i, c := range slab[at:] {
					natural[i] = max(natural[i], c.width)
				}
				batch = append(batch, slab[at:len(slab):len(slab)])
				continue
			}
			row, ok := res.Next()
			if !ok {
				break
			}
			if len(row) != len(cols) {
				readErr = rowError(n+int64(len(batch)), row, cols)
				break
			}
			at := len(slab)
			for i, v := range row {
				c := maker.value(v, cols[i].Type)
				natural[i] = max(natural[i], c.width)
				slab = append(slab, c)
			}
			batch = append(batch, slab[at:len(slab):len(slab)])
		}
		widths := fitWidths(natural, opt.Width)
		if frozen != nil {
			widths = frozen
		} else if stats.Live() {
			frozen = widths
		}
		if first && len(cols) > 0 {
			for i := range cols {
				if i > 0 {
					lw.line = append(lw.line, " |"...)
				}
				lw.line = append(lw.line, ' ')
				lw.put(headMaker.str(heads[i]), heads[i], widths[i], 'c', i == len(cols)-1, st)
			}
			if err := lw.end(); err != nil {
				return n, err
			}
			for i, w := range widths {
				if i > 0 {
					lw.line = append(lw.line, '+')
				}
				lw.repeat("-", w+2)
			}
			if err := lw.end(); err != nil {
				return n, err
			}
		}
		for _, cells := range batch {
			line := lw.line
			for i, c := range cells {
				if i > 0 {
					line = append(line, " |"...)
				}
				line = append(line, ' ')
				line = appendCell(line, maker.str(c), c, widths[i], align[i], i == len(cells)-1, &st)
			}
			lw.line = line
			if err := lw.end(); err != nil {
				return n, err
			}
			n++
		}
		if err := lw.flush(); err != nil {
			return n, err
		}
		if err := o.flush(); err != nil {
			return n, err
		}
		if readErr != nil {
			return n, readErr
		}
		if len(batch) < opt.BatchSize && (!stats.Live() || len(batch) == 0) {
			break
		}
	}
	if opt.Footer {
		lw.line = appendRowCount(lw.line, n)
		if err := lw.end(); err != nil {
			return n, err
		}
	}
	return n, lw.flush()
}

func appendRowCount(buf []byte, n int64) []byte {
	buf = append(buf, '(')
	buf = strconv.AppendInt(buf, n, 10)
	if n == 1 {
		return append(buf, " row)"...)
	}
	return append(buf, " rows)"...)
}

// fitWidths returns the column widths for a table whose widest cells are
// natural. With a terminal width, the widest columns are narrowed to a common
// cap until a line (" a | b", 3 columns per separator) fits, never below
// minCutWidth; a table with too many columns to fit is left as narrow as that.
func fitWidths(natural []int, width int) []int {
	widths := append([]int(nil), natural...)
	if width <= 0 || len(natural) == 0 {
		return widths
	}
	room := width - (3*len(natural) - 1)
	total := 0
	for _, w := range natural {
		total += w
	}
	if total <= room {
		return widths
	}
	// The largest cap such that the capped widths fit in room.
	limit := func(c int) int {
		sum := 0
		for _, w := range natural {
			sum += min(w, c)
		}
		return sum
	}
	lo, hi := minCutWidth, 0
	for _, w := range natural {
		hi = max(hi, w)
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if limit(mid) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for i, w := range natural {
		widths[i] = min(w, lo)
	}
	return widths
}

// writeExpanded writes psql's expanded (\x) format, one block per row:
//
//	-[ RECORD 1 ]-+------
//	partition     | 0
//	value         | hello
//
// Each record is written as it comes. Values are shown in full (escaped as in
// the table): expanded is where a long value is read. The record's rule is
// as wide as its widest line, up to the terminal width.
func writeExpanded(o *output, res result.Result, opt Options) (int64, error) {
	cols := res.Columns()
	st := newStyler(opt)
	maker := &cellMaker{}
	lw := &lineWriter{o: o}

	names := make([]cell, len(cols))
	nameW := 0
	nameMaker := &cellMaker{} // the names outlive each record's cells
	for i, c := range cols {
		names[i] = nameMaker.name(c.Name)
		nameW = max(nameW, names[i].width)
	}
	cells := make([]cell, len(cols))
	var n int64
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		if len(row) != len(cols) {
			return n, rowError(n, row, cols)
		}
		valW := 0
		maker.rewind() // the last record's cells are written
		for i, v := range row {
			cells[i] = maker.value(v, cols[i].Type)
			valW = max(valW, cells[i].width)
		}
		if opt.Width > 0 {
			valW = min(valW, max(opt.Width-nameW-3, 1))
		}
		// -[ RECORD n ]-+----- with the + over the column separator.
		lw.line = append(lw.line, "-[ RECORD "...)
		lw.line = strconv.AppendInt(lw.line, n+1, 10)
		lw.line = append(lw.line, " ]"...)
		label := len(lw.line) - lw.start
		if label <= nameW+1 {
			lw.repeat("-", nameW+1-label)
			lw.line = append(lw.line, '+')
			lw.repeat("-", valW+1)
		} else {
			lw.repeat("-", nameW+3+valW-label)
		}
		if err := lw.end(); err != nil {
			return n, err
		}
		for i, c := range cells {
			lw.put(nameMaker.str(names[i]), names[i], nameW, 'l', false, st)
			lw.line = append(lw.line, " | "...)
			lw.put(maker.str(c), c, c.width, 'l', true, st)
			if err := lw.end(); err != nil {
				return n, err
			}
		}
		n++
		// A record at a time: a live result's record must reach the
		// output (and its background flush) as it comes.
		if err := lw.flush(); err != nil {
			return n, err
		}
		if n%int64(opt.BatchSize) == 0 {
			if err := o.flush(); err != nil {
				return n, err
			}
		}
	}
	if opt.Footer {
		lw.line = appendRowCount(lw.line, n)
		if err := lw.end(); err != nil {
			return n, err
		}
	}
	return n, lw.flush()
}
