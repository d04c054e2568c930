package render

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kql-dev/kql/jsontext"
	"github.com/kql-dev/kql/result"
)

// eachRow reads res to the end and writes encode's bytes for every row,
// flushing every opt.BatchSize rows. Memory stays at one row's bytes.
func eachRow(o *output, res result.Result, opt Options, cols []result.Column, encode func(buf []byte, n int64, row result.Row) []byte) (int64, error) {
	var buf []byte
	var n int64
	for {
		row, ok := res.Next()
		if !ok {
			return n, nil
		}
		if len(row) != len(cols) {
			return n, rowError(n, row, cols)
		}
		buf = encode(buf[:0], n, row)
		if err := o.write(buf); err != nil {
			return n, err
		}
		n++
		if n%int64(opt.BatchSize) == 0 {
			if err := o.flush(); err != nil {
				return n, err
			}
		}
	}
}

// JSON and JSON Lines. A row is an object whose keys are the column names in
// column order; numbers are numbers, NULL is null, a time is an RFC 3339 UTC
// string with milliseconds, Ints an array of numbers, Headers an array of
// {"key":…,"value":…} objects. Keys, values and strings follow the bytes
// rule, so a JSON string holds exactly the text the other formats show.

func writeJSONL(o *output, res result.Result, opt Options) (int64, error) {
	enc := newJSONEncoder(res.Columns())
	return eachRow(o, res, opt, enc.cols, func(buf []byte, _ int64, row result.Row) []byte {
		buf = enc.appendObject(buf, row)
		return append(buf, '\n')
	})
}

// writeJSON writes one array, one object per line, streamed: "[" first, each
// object as it comes, "]" last, also after a failure, so the rows that came
// are a valid document.
func writeJSON(o *output, res result.Result, opt Options) (int64, error) {
	enc := newJSONEncoder(res.Columns())
	n, err := eachRow(o, res, opt, enc.cols, func(buf []byte, n int64, row result.Row) []byte {
		return enc.appendObject(appendArraySeparator(buf, n), row)
	})
	return n, endArray(o, n, err)
}

// appendArraySeparator opens the JSON array before its first element and
// separates the others, one element per line.
func appendArraySeparator(buf []byte, n int64) []byte {
	if n == 0 {
		return append(buf, "[\n"...)
	}
	return append(buf, ",\n"...)
}

// endArray closes a JSON array of n elements, also after err, so the
// elements that came are a valid document; it returns err, else the
// write's error.
func endArray(o *output, n int64, err error) error {
	end := "\n]\n"
	if n == 0 {
		end = "[]\n"
	}
	if werr := o.write([]byte(end)); err == nil {
		err = werr
	}
	return err
}

type jsonEncoder struct {
	cols    []result.Column
	keys    [][]byte // `{"name":` for the first column, `,"name":` for the others
	scratch []byte
}

func newJSONEncoder(cols []result.Column) *jsonEncoder {
	e := &jsonEncoder{cols: cols, keys: make([][]byte, len(cols))}
	for i, c := range cols {
		k := []byte{','}
		if i == 0 {
			k[0] = '{'
		}
		k = appendJSONString(k, appendStringText(nil, c.Name))
		e.keys[i] = append(k, ':')
	}
	return e
}

func (e *jsonEncoder) appendObject(buf []byte, row result.Row) []byte {
	if len(row) == 0 {
		return append(buf, "{}"...)
	}
	for i, v := range row {
		buf = append(buf, e.keys[i]...)
		buf = e.appendValue(buf, v, e.cols[i].Type)
	}
	return append(buf, '}')
}

func (e *jsonEncoder) appendValue(buf []byte, v any, t result.Type) []byte {
	if isNull(v) {
		return append(buf, "null"...)
	}
	switch x := v.(type) {
	case int64, int, int32, int16, int8, uint64, uint32, bool:
		// JSON numbers and booleans read as their text form.
		return appendText(buf, v, t)
	case result.JSON:
		return append(buf, x...)
	case string:
		if t == result.Number && isJSONNumber(x) {
			return append(buf, x...)
		}
		e.scratch = appendStringText(e.scratch[:0], x)
		return appendJSONString(buf, e.scratch)
	case time.Time:
		buf = append(buf, '"')
		buf = x.UTC().AppendFormat(buf, TimeLayout)
		return append(buf, '"')
	case []int32:
		buf = append(buf, '[')
		for i, n := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(n), 10)
		}
		return append(buf, ']')
	case []result.Header:
		buf = append(buf, '[')
		for i, h := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, `{"key":`...)
			e.scratch = appendStringText(e.scratch[:0], h.Key)
			buf = appendJSONString(buf, e.scratch)
			buf = append(buf, `,"value":`...)
			if h.Value == nil {
				buf = append(buf, "null"...)
			} else {
				e.scratch = appendBytesText(e.scratch[:0], h.Value)
				buf = appendJSONString(buf, e.scratch)
			}
			buf = append(buf, '}')
		}
		return append(buf, ']')
	default:
		e.scratch = appendText(e.scratch[:0], v, t)
		return appendJSONString(buf, e.scratch)
	}
}

const hexDigits = "0123456789abcdef"

// isJSONNumber reports whether s is a number as JSON writes one (a NaN or
// an infinity is not, and stays a string).
func isJSONNumber(s string) bool {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return false
	}
	return json.Valid([]byte(s))
}

// CSV follows RFC 4180 with "\n" line ends, as encoding/csv writes it. NULL is
// an empty unquoted field and an empty string is "" (as PostgreSQL's COPY
// does), so the two stay apart.

func writeCSV(o *output, res result.Result, opt Options) (int64, error) {
	cols := res.Columns()
	var scratch []byte
	var head []byte
	for i, c := range cols {
		if i > 0 {
			head = append(head, ',')
		}
		scratch = appendStringText(scratch[:0], c.Name)
		head = appendCSVField(head, scratch)
	}
	if err := o.write(append(head, '\n')); err != nil {
		return 0, err
	}
	return eachRow(o, res, opt, cols, func(buf []byte, _ int64, row result.Row) []byte {
		for i, v := range row {
			if i > 0 {
				buf = append(buf, ',')
			}
			if isNull(v) {
				continue
			}
			scratch = appendText(scratch[:0], v, cols[i].Type)
			buf = appendCSVField(buf, scratch)
		}
		return append(buf, '\n')
	})
}

func appendCSVField(buf, s []byte) []byte {
	if !csvNeedsQuotes(s) {
		return append(buf, s...)
	}
	return appendCSVQuoted(buf, s)
}

// appendCSVQuoted appends s quoted, its quotes doubled.
func appendCSVQuoted(buf, s []byte) []byte {
	// Stored into buf's spare capacity eight bytes at a time. A word with
	// quotes is stored once, and its bytes after each quote again one
	// byte further on, with the quote doubled in between: a JSON value has
	// a quote every few bytes and a word often holds two, which took a
	// turn of the loop and a load of the word each. The worst case, all
	// quotes, doubles s; what is stored past the end is overwritten or cut
	// off.
	n := len(buf)
	dst := slices.Grow(buf, 2*len(s)+34)
	dst = dst[:cap(dst)]
	j := n
	dst[j] = '"'
	j++
	i := 0
	for i+8 <= len(s) {
		w := binary.LittleEndian.Uint64(s[i:])
		d := (*[32]byte)(dst[j:]) // j <= n+1+2*i: room for 32 is left
		binary.LittleEndian.PutUint64(d[:], w)
		m := hasByte(w, '"') & hiBits
		extra := 0 // quotes doubled in the word so far
		for m != 0 {
			q := bits.TrailingZeros64(m) >> 3
			m &= m - 1
			if byte(w>>(8*q)) != '"' {
				continue // named after a quote, but not one (see hasByte)
			}
			// The quote is at d[extra+q]: double it, and move the bytes
			// after it one on. extra+q+1 <= 16: the masks only spare
			// the bounds checks.
			extra++
			d[(extra+q)&31] = '"'
			binary.LittleEndian.PutUint64(d[(extra+q+1)&31:], w>>(8*(q&7))>>8)
		}
		i += 8
		j += 8 + extra
	}
	for ; i < len(s); i++ {
		dst[j] = s[i]
		j++
		if s[i] == '"' {
			dst[j] = '"'
			j++
		}
	}
	dst[j] = '"'
	return dst[:j+1]
}

// csvNeedsQuotes quotes an empty string (so it differs from NULL), anything
// with a separator, quote or line break, a leading space or tab (which some
// readers trim) and `\.` (PostgreSQL's end-of-data marker), as encoding/csv does.
func csvNeedsQuotes(s []byte) bool {
	return csvQuotesLead(s) || csvFind(s, 0, 0) < len(s)
}

// csvQuotesLead is csvNeedsQuotes without the look for separators, quotes
// and line breaks.
func csvQuotesLead(s []byte) bool {
	return len(s) == 0 || s[0] == ' ' || s[0] == '\t' || string(s) == `\.`
}

// csvFind returns the index of the first byte of s from i on that CSV
// quotes for (a comma, quote, newline or carriage return), or above ASCII
// when look is hiBits, else len(s); eight bytes at a time.
func csvFind(s []byte, i int, look uint64) int {
	for i < len(s) {
		var w uint64
		if i+8 <= len(s) {
			w = binary.LittleEndian.Uint64(s[i:])
		} else {
			w = tailWord(s, i)
		}
		// Exact up to the first byte it names (see hasByte).
		m := (hasByte(w, ',') | hasByte(w, '"') | hasByte(w, '\n') | hasByte(w, '\r') | w&look) & hiBits
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	return len(s)
}

// tailWord returns the bytes of s from i on, fewer than eight, as a word
// filled up with 'a's, which no scan here looks for: the end of a key or
// value is looked at as a word too, not byte by byte.
func tailWord(s []byte, i int) uint64 {
	const filler = 0x6161616161616161
	rest := len(s) - i
	var w uint64
	switch {
	case len(s) >= 8:
		// The last eight bytes, shifted down past those done.
		w = binary.LittleEndian.Uint64(s[len(s)-8:]) >> (64 - 8*rest)
	case rest >= 4:
		w = uint64(binary.LittleEndian.Uint32(s[i:])) | uint64(binary.LittleEndian.Uint32(s[len(s)-4:]))<<(8*(rest-4))
	case rest >= 2:
		w = uint64(binary.LittleEndian.Uint16(s[i:])) | uint64(s[len(s)-1])<<(8*(rest-1))
	case rest == 1:
		w = uint64(s[i])
	}
	return w | filler<<(8*rest)
}

const hiBits = 0x8080808080808080

// hasByte has the high bit set of each byte of w that is c, and perhaps of
// some above the first such byte, never below it (the has-byte test of "Bit
// Twiddling Hacks" is exact up to the first byte it finds).
func hasByte(w uint64, c byte) uint64 {
	const lo = 0x0101010101010101
	x := w ^ (lo * uint64(c))
	return (x - lo) &^ x
}

// appendCSVValid is appendCSVField for bytes that may not be UTF-8, with
// the check in the pass that looks for what CSV quotes for: ok is false,
// and buf comes back as given, when s is not valid UTF-8.
func appendCSVValid(buf, s []byte) ([]byte, bool) {
	quote := csvQuotesLead(s)
	i := 0 // s[:i] is ASCII
	if !quote {
		i = csvFind(s, 0, hiBits)
		if i < len(s) && s[i] >= utf8.RuneSelf {
			// Text above ASCII from i on: checked once, and then only
			// what needs quotes is looked for.
			if !utf8.Valid(s[i:]) {
				return buf, false
			}
			quote = csvFind(s, i, 0) < len(s)
			i = len(s)
		} else {
			quote = i < len(s)
		}
	}
	if i < len(s) && !utf8.Valid(s[i:]) { // s[:i] is ASCII
		return buf, false
	}
	if !quote {
		return append(buf, s...), true
	}
	return appendCSVQuoted(buf, s), true
}

// TSV is PostgreSQL's COPY text format: a header row, tab-separated fields,
// NULL written \N, and a backslash, tab, newline or carriage return inside a
// value escaped as \\, \t, \n or \r, so a line is always one row.

func writeTSV(o *output, res result.Result, opt Options) (int64, error) {
	cols := res.Columns()
	var scratch []byte
	var head []byte
	for i, c := range cols {
		if i > 0 {
			head = append(head, '\t')
		}
		scratch = appendStringText(scratch[:0], c.Name)
		head = appendTSVField(head, scratch)
	}
	if err := o.write(append(head, '\n')); err != nil {
		return 0, err
	}
	return eachRow(o, res, opt, cols, func(buf []byte, _ int64, row result.Row) []byte {
		for i, v := range row {
			if i > 0 {
				buf = append(buf, '\t')
			}
			if isNull(v) {
				buf = append(buf, '\\', 'N')
				continue
			}
			scratch = appendText(scratch[:0], v, cols[i].Type)
			buf = appendTSVField(buf, scratch)
		}
		return append(buf, '\n')
	})
}

func appendTSVField(buf, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time up to the first that needs escaping: few
		// values hold one, and a switch per byte was most of a TSV record.
		if i+8 <= len(s) {
			m := tsvEscMask(binary.LittleEndian.Uint64(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		esc := tsvEscape[s[i]]
		if esc == 0 {
			i++
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = append(buf, '\\', esc)
		i++
		start = i
	}
	return append(buf, s[start:]...)
}

// tsvEscape is the letter after the backslash of each byte TSV escapes.
var tsvEscape = [256]byte{'\\': '\\', '\t': 't', '\n': 'n', '\r': 'r'}

// tsvEscMask has the high bit set of each byte of w that TSV escapes, and
// perhaps of some other bytes below 0x0e, and of some above the first such
// byte, never below it (the has-less-than and has-byte tests of "Bit
// Twiddling Hacks" are exact up to the first byte they find): a byte it
// names is looked up in tsvEscape.
func tsvEscMask(w uint64) uint64 {
	const lo = 0x0101010101010101
	return ((w-lo*0x0e)&^w | hasByte(w, '\\')) & hiBits
}

// appendTSVValid is appendTSVField for bytes that may not be UTF-8, with
// the check in the same pass: ok is false, and buf comes back as given,
// when s is not valid UTF-8. The bytes from the first above ASCII on are
// checked in one utf8.Valid call, and from then on only the escapes are
// looked for.
func appendTSVValid(buf, s []byte) ([]byte, bool) {
	n := len(buf)
	look := uint64(hiBits) // the high bits looked at, until the rest is checked
	start := 0
	for i := 0; i < len(s); {
		var w uint64
		if i+8 <= len(s) {
			w = binary.LittleEndian.Uint64(s[i:])
		} else {
			w = tailWord(s, i)
		}
		m := tsvEscMask(w) | w&look
		if m == 0 {
			i += 8 // past the end for a tail: done
			continue
		}
		i += bits.TrailingZeros64(m) >> 3
		c := s[i]
		if c >= utf8.RuneSelf {
			if look != 0 {
				if !utf8.Valid(s[i:]) { // s[:i] is ASCII
					return buf[:n], false
				}
				look = 0
			}
			i++
			continue
		}
		esc := tsvEscape[c]
		if esc == 0 {
			i++
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = append(buf, '\\', esc)
		i++
		start = i
	}
	return append(buf, s[start:]...), true
}

// appendJSONString appends s, which is valid UTF-8 (the bytes rule sees to
// that), as a JSON string.
func appendJSONString(buf, s []byte) []byte { return jsontext.AppendString(buf, s) }
