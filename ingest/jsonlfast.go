package ingest

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"time"
	"unicode/utf8"

	"github.com/kql-dev/kql/result"
)

// The fast path of a jsonl line: one pass over the bytes that decodes the
// JSON kql's own jsonl writer produces (any field order and whitespace;
// strings, null, integers and header lists) straight into a batch's memory,
// with no allocation per record. It gives up on anything else (a value that
// is JSON other than a string, a surrogate escape, bytes that are not
// UTF-8, a number with a fraction, any error), and the line goes to
// jsonRecord, the general reader, which decodes it or says what is wrong.
// So it accepts only lines jsonRecord accepts, and reads them as it does
// (TestFastJSONLAgreesWithGeneral holds it to that): a rule of the format
// lives in jsonRecord, never only here. jsonRecord took 3.4 us a line of
// the bench's export (gjson's validation, then its walk, then a string per
// field); this takes a tenth of that.

// slab is the memory a batch's records point into: bytes for keys, values
// and header values, and header lists. A record's slices are carved with
// their capacity capped, so appending to one never writes over another.
type slab struct {
	bytes   []byte
	headers []result.Header
	keys    map[string]string // header keys seen, so that a repeated key is one string
}

func (s *slab) reset() {
	s.bytes = s.bytes[:0]
	s.headers = s.headers[:0]
}

// intern is k as a string, allocated once per distinct header key.
func (s *slab) intern(k []byte) string {
	if v, ok := s.keys[string(k)]; ok {
		return v
	}
	v := string(k)
	if s.keys == nil {
		s.keys = map[string]string{}
	}
	if len(s.keys) < 4096 {
		s.keys[v] = v
	}
	return v
}

// fastParser walks one line.
type fastParser struct {
	b []byte
	i int
	s *slab
}

// fastJSONL decodes line into rec, or reports false (rec is then garbage
// and s may hold bytes nobody points to).
func fastJSONL(line []byte, s *slab, rec *Record) bool {
	p := fastParser{b: line, s: s}
	*rec = Record{Line: rec.Line, Partition: -1}
	if !p.ws() || p.b[p.i] != '{' {
		return false
	}
	p.i++
	if !p.ws() {
		return false
	}
	if p.b[p.i] == '}' {
		p.i++
		return p.end()
	}
	for {
		at := int32(p.i + 1) // the field's column, as jsonRecord gives it
		name, ok := p.name()
		if !ok || !p.ws() || p.b[p.i] != ':' {
			return false
		}
		p.i++
		if !p.ws() {
			return false
		}
		switch string(name) {
		case "partition":
			rec.Cols.Partition = at
			if p.null() {
				break
			}
			n, ok := p.uint31()
			if !ok {
				return false
			}
			rec.Partition = int32(n)
		case "offset":
			if !p.null() {
				if _, ok := p.int53(); !ok {
					return false
				}
			}
		case "timestamp":
			rec.Cols.Timestamp = at
			if p.null() {
				rec.Timestamp = time.Time{}
				break
			}
			if p.b[p.i] == '"' {
				ts, ok := p.time()
				if !ok {
					return false
				}
				rec.Timestamp = ts
				break
			}
			ms, ok := p.int53()
			if !ok {
				return false
			}
			rec.Timestamp = time.UnixMilli(ms)
		case "key", "value":
			b, ok := p.bytesField()
			if !ok {
				return false
			}
			if name[0] == 'k' {
				rec.Key, rec.Cols.Key = b, at
			} else {
				rec.Value, rec.Cols.Value = b, at
			}
		case "headers":
			hs, ok := p.headers()
			if !ok {
				return false
			}
			rec.Headers = hs
		default:
			return false // jsonRecord names the unknown field
		}
		if !p.ws() {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			if !p.ws() {
				return false
			}
		case '}':
			p.i++
			return p.end()
		default:
			return false
		}
	}
}

// ws skips JSON whitespace and reports whether a byte follows.
func (p *fastParser) ws() bool {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return true
		}
	}
	return false
}

// end: nothing but whitespace after the object.
func (p *fastParser) end() bool {
	return !p.ws()
}

func (p *fastParser) null() bool {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// name is a field name without escapes.
func (p *fastParser) name() ([]byte, bool) {
	if p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch strClass[p.b[j]] {
		case 0:
			continue
		case classQuote:
			p.i = j + 1
			return p.b[start:j], true
		}
		return nil, false
	}
	return nil, false
}

// strClass sorts the bytes of a JSON string: 0 is a byte that stands for
// itself, the rest end a run of them.
var strClass = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c == '"':
			t[c] = classQuote
		case c == '\\':
			t[c] = classEscape
		case c < ' ':
			t[c] = classControl
		case c >= 0x80:
			t[c] = classNonASCII
		}
	}
	return t
}()

const (
	classQuote = 1 + iota
	classEscape
	classControl
	classNonASCII
)

// digits reads -?(0|[1-9][0-9]*) of at most max digits, not followed by a
// fraction or exponent.
func (p *fastParser) digits(neg bool, max int) (int64, bool) {
	j := p.i
	minus := false
	if neg && j < len(p.b) && p.b[j] == '-' {
		minus = true
		j++
	}
	start := j
	var n int64
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		n = n*10 + int64(p.b[j]-'0')
		j++
	}
	d := j - start
	if d == 0 || d > max || (d > 1 && p.b[start] == '0') {
		return 0, false
	}
	if j < len(p.b) && (p.b[j] == '.' || p.b[j] == 'e' || p.b[j] == 'E') {
		return 0, false
	}
	p.i = j
	if minus {
		n = -n
	}
	return n, true
}

func (p *fastParser) uint31() (int64, bool) {
	n, ok := p.digits(false, 10)
	return n, ok && n <= math.MaxInt32
}

// int53: an integer a float64 holds exactly, as jsonRecord reads numbers.
func (p *fastParser) int53() (int64, bool) {
	return p.digits(true, 15)
}

// str decodes a JSON string into the slab and returns its bytes there
// (non-nil, even when empty).
func (p *fastParser) str() ([]byte, bool) {
	if p.b[p.i] != '"' {
		return nil, false
	}
	s := p.s
	if s.bytes == nil {
		s.bytes = make([]byte, 0, 256) // an empty string is not NULL
	}
	start := len(s.bytes)
	ascii := true
	j := p.i + 1
	for {
		// The unescaped run up to the next quote, backslash or control byte.
		k := skipPlain(p.b, j)
		for k < len(p.b) {
			if cl := strClass[p.b[k]]; cl != 0 {
				if cl != classNonASCII {
					break
				}
				ascii = false
			}
			k++
		}
		s.bytes = append(s.bytes, p.b[j:k]...)
		if k >= len(p.b) || p.b[k] < ' ' {
			return nil, false
		}
		if p.b[k] == '"' {
			p.i = k + 1
			break
		}
		// An escape.
		if k+1 >= len(p.b) {
			return nil, false
		}
		switch e := p.b[k+1]; e {
		case '"', '\\', '/':
			s.bytes = append(s.bytes, e)
		case 'b':
			s.bytes = append(s.bytes, '\b')
		case 'f':
			s.bytes = append(s.bytes, '\f')
		case 'n':
			s.bytes = append(s.bytes, '\n')
		case 'r':
			s.bytes = append(s.bytes, '\r')
		case 't':
			s.bytes = append(s.bytes, '\t')
		case 'u':
			if k+6 > len(p.b) {
				return nil, false
			}
			var r rune
			for _, h := range p.b[k+2 : k+6] {
				v, ok := unhex(h)
				if !ok {
					return nil, false
				}
				r = r<<4 | rune(v)
			}
			if r >= 0xD800 && r < 0xE000 {
				return nil, false // a surrogate: jsonRecord pairs them
			}
			s.bytes = utf8.AppendRune(s.bytes, r)
			j = k + 6
			continue
		default:
			return nil, false
		}
		j = k + 2
	}
	out := s.bytes[start:len(s.bytes):len(s.bytes)]
	if !ascii && !utf8.Valid(out) {
		return nil, false // jsonRecord keeps such bytes, encoding/json (headers) replaces them
	}
	return out, true
}

// skipPlain returns the index of the first byte at or after j of b that
// is not plain ASCII in a JSON string (a quote, a backslash, a control
// byte or a non-ASCII byte), or a point before it: it skips 8 bytes at a
// time while none of them is, which is most of a value's bytes (a third
// of an import's CPU went to the byte-by-byte table lookup).
func skipPlain(b []byte, j int) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for j+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[j:])
		q := x ^ ('"' * ones)   // a zero byte where b has a quote
		bs := x ^ ('\\' * ones) // ... a backslash
		// A byte has its high bit set by (v - 1) &^ v when it is zero,
		// and x's own high bit is a non-ASCII byte; x - 0x20 per byte
		// borrows (high bit) for a control byte below 0x20.
		special := ((q - ones) &^ q) | ((bs - ones) &^ bs) | ((x - ' '*ones) &^ x) | x
		if special&highs != 0 {
			return j
		}
		j += 8
	}
	return j
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// bytesField reads a key, value or header value: null, or a string under
// the bytes rule (x'…' is hex).
func (p *fastParser) bytesField() ([]byte, bool) {
	if p.null() {
		return nil, true
	}
	start := len(p.s.bytes)
	b, ok := p.str()
	if !ok {
		return nil, false
	}
	if !looksHexBytes(b) {
		return b, true
	}
	if len(b)%2 == 0 {
		return nil, false // not a hex literal: jsonRecord says so
	}
	n, err := hex.Decode(p.s.bytes[start:], b[2:len(b)-1])
	if err != nil {
		return nil, false
	}
	p.s.bytes = p.s.bytes[:start+n]
	return p.s.bytes[start : start+n : start+n], true
}

func looksHexBytes(s []byte) bool {
	if len(s) < 3 || (s[0] != 'x' && s[0] != 'X') || s[1] != '\'' || s[len(s)-1] != '\'' {
		return false
	}
	for _, c := range s[2 : len(s)-1] {
		if _, ok := unhex(c); !ok {
			return false
		}
	}
	return true
}

// headers reads null or a list of {"key": string, "value": string|null}
// objects, each field at most once.
func (p *fastParser) headers() ([]result.Header, bool) {
	if p.null() {
		return nil, true
	}
	if p.b[p.i] != '[' {
		return nil, false
	}
	p.i++
	if !p.ws() {
		return nil, false
	}
	if p.b[p.i] == ']' {
		p.i++
		return nil, true
	}
	s := p.s
	start := len(s.headers)
	for {
		if p.b[p.i] != '{' {
			return nil, false
		}
		p.i++
		var h result.Header
		var haveKey, haveValue bool
		for {
			if !p.ws() {
				return nil, false
			}
			name, ok := p.name()
			if !ok || !p.ws() || p.b[p.i] != ':' {
				return nil, false
			}
			p.i++
			if !p.ws() {
				return nil, false
			}
			switch string(name) {
			case "key":
				if haveKey || p.b[p.i] != '"' {
					return nil, false
				}
				k, ok := p.bytesField()
				if !ok {
					return nil, false
				}
				h.Key, haveKey = s.intern(k), true
			case "value":
				if haveValue {
					return nil, false
				}
				v, ok := p.bytesField()
				if !ok {
					return nil, false
				}
				h.Value, haveValue = v, true
			default:
				return nil, false
			}
			if !p.ws() {
				return nil, false
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.b[p.i] != '}' {
				return nil, false
			}
			p.i++
			break
		}
		if !haveKey {
			return nil, false
		}
		s.headers = append(s.headers, h)
		if !p.ws() {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			if !p.ws() {
				return nil, false
			}
		case ']':
			p.i++
			return s.headers[start:len(s.headers):len(s.headers)], true
		default:
			return nil, false
		}
	}
}

// time reads a quoted RFC 3339 timestamp in UTC as kql writes it
// (2026-01-02T15:04:05Z, with 3 fraction digits or none); any other form
// goes to time.Parse in jsonRecord.
func (p *fastParser) time() (time.Time, bool) {
	b := p.b[p.i:]
	var n int
	switch {
	case len(b) >= 26 && b[25] == '"' && b[20] == '.' && b[24] == 'Z':
		n = 26
	case len(b) >= 22 && b[21] == '"' && b[20] == 'Z':
		n = 22
	default:
		return time.Time{}, false
	}
	if b[5] != '-' || b[8] != '-' || b[11] != 'T' || b[14] != ':' || b[17] != ':' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		v := 0
		for _, c := range b[from:to] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := num(1, 5)
	month, ok2 := num(6, 8)
	day, ok3 := num(9, 11)
	hour, ok4 := num(12, 14)
	minute, ok5 := num(15, 17)
	sec, ok6 := num(18, 20)
	ms, ok7 := 0, true
	if n == 26 {
		ms, ok7 = num(21, 24)
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) ||
		month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	p.i += n
	return time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), time.UTC), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
