package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// FORMAT json: an array of records, as --format json writes it (one
// record per line) or pretty-printed by hand, or several arrays one after
// the other: kql --format json writes one array per statement, so the
// export of a script of two SELECTs is two arrays. Only whitespace may come
// between and after them; anything else after a ] is an error (it used to
// be ignored, and the records it held were lost).
//
// The reader walks the structure itself (whitespace, [, the commas, ])
// and cuts each element out whole, tracking strings and brackets; the
// element is then read as a jsonl line is (jsonRecord). Reading straight
// from the bufio.Reader keeps its Buffered() true, which is how Scan knows
// not to wait for a quiet pipe, and memory stays one element however long
// the input. It counts lines and the byte offset as it goes, so every
// position it reports is the input's.

// jsonState is where the reader is in the input's structure.
type jsonState int

const (
	jsonOutside jsonState = iota // before the first array, or after one closed
	jsonOpened                   // after [
	jsonAfter                    // after an element
	jsonComma                    // after the , that follows an element
	jsonFailed                   // an error was returned: it stays
)

type jsonArray struct {
	state     jsonState
	err       error
	off       int64 // bytes consumed, a byte order mark included
	line      int   // the line of the next byte, from 1
	lineStart int64 // the offset where that line starts
	blank     bool  // only whitespace so far on that line
	arrays    int   // arrays opened
	openAt    [2]int
	closeAt   [2]int // where the last ] is
	lastAt    [2]int // where the last element starts
	elem      []byte
	stack     []byte // the closers an element still needs
}

func newJSONArray(bomLen int) *jsonArray {
	return &jsonArray{off: int64(bomLen), line: 1, lineStart: int64(bomLen), blank: true}
}

// pos is the line and column of the next byte.
func (a *jsonArray) pos() [2]int { return [2]int{a.line, int(a.off-a.lineStart) + 1} }

// consume moves past the next len(b) bytes of br, whose text is b; space:
// b is whitespace.
func (a *jsonArray) consume(br *bufio.Reader, b []byte, space bool) {
	if k := bytes.LastIndexByte(b, '\n'); k >= 0 {
		a.line += bytes.Count(b, []byte{'\n'})
		a.lineStart = a.off + int64(k) + 1
		a.blank = space || isAllSpace(b[k+1:])
	} else if !space && len(b) > 0 {
		a.blank = false
	}
	a.off += int64(len(b))
	br.Discard(len(b))
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isAllSpace(b []byte) bool {
	for _, c := range b {
		if !isJSONSpace(c) {
			return false
		}
	}
	return true
}

// skipSpace consumes whitespace and returns the next byte, not consumed.
func (a *jsonArray) skipSpace(br *bufio.Reader) (byte, error) {
	for {
		if _, err := br.Peek(1); err != nil {
			return 0, err
		}
		buf, _ := br.Peek(br.Buffered())
		i := 0
		for i < len(buf) && isJSONSpace(buf[i]) {
			i++
		}
		a.consume(br, buf[:i], true)
		if i < len(buf) {
			return buf[i], nil
		}
	}
}

// found is what starts at the next byte, for an error to show: the rest
// of its line, at most 20 bytes of it, quoted.
func found(br *bufio.Reader) string {
	// Only what is buffered: a pipe that goes quiet right after the
	// mistake must not hold the error back.
	b, _ := br.Peek(min(20, br.Buffered()))
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	return strconv.Quote(string(b))
}

// readElement consumes one element and returns its text; io.EOF means the
// input ended inside it. An object or array ends at its closing bracket,
// anything else (a string, a number: not a record, which jsonRecord says)
// at whitespace, a comma or a bracket. A bracket that does not match ends
// the element with it, and jsonRecord names it.
func (a *jsonArray) readElement(br *bufio.Reader) ([]byte, error) {
	a.elem, a.stack = a.elem[:0], a.stack[:0]
	inStr, esc, started, scalar := false, false, false, false
	for {
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF && scalar && !inStr {
				return a.elem, nil // a scalar the input ends with
			}
			return nil, err
		}
		buf, _ := br.Peek(br.Buffered())
		n, done := 0, false
	scan:
		for ; n < len(buf); n++ {
			c := buf[n]
			if !started {
				started = true
				scalar = c != '{' && c != '['
			}
			if inStr {
				switch {
				case esc:
					esc = false
				case c == '\\':
					esc = true
				case c == '"':
					inStr = false
				}
				continue
			}
			switch c {
			case '"':
				inStr = true
			case '{':
				a.stack = append(a.stack, '}')
			case '[':
				a.stack = append(a.stack, ']')
			case '}', ']':
				if len(a.stack) == 0 { // a scalar followed by a closer
					done = true
					break scan
				}
				top := a.stack[len(a.stack)-1]
				a.stack = a.stack[:len(a.stack)-1]
				if c != top || len(a.stack) == 0 {
					n++
					done = true
					break scan
				}
			case ',', ' ', '\t', '\n', '\r':
				if len(a.stack) == 0 {
					done = true
					break scan
				}
			}
		}
		a.elem = append(a.elem, buf[:n]...)
		a.consume(br, buf[:n], false)
		if done {
			return a.elem, nil
		}
	}
}

// jsonError is an error of the input's structure at line:col.
func (r *Reader) jsonError(at [2]int, msg string) error {
	r.arr.state = jsonFailed
	r.arr.err = &Error{File: r.name, Line: at[0], Column: at[1], Msg: msg}
	return r.arr.err
}

const jsonFormatIs = "FORMAT json reads one array of records, [ {...}, ... ], or several one after the other (kql --format json writes one per statement), with only whitespace between and after them"

func (r *Reader) nextJSON() (*Record, error) {
	if r.arr == nil {
		r.arr = newJSONArray(r.bomLen)
	}
	a := r.arr
	for {
		if a.state == jsonFailed {
			return nil, a.err
		}
		c, err := a.skipSpace(r.br)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: reading line %d: %w", r.name, a.line, err)
		}
		eof := err == io.EOF
		switch a.state {
		case jsonOutside:
			if eof {
				return nil, io.EOF
			}
			if c != '[' {
				if a.arrays == 0 {
					return nil, r.jsonError(a.pos(), "FORMAT json is one array of records, [ {...}, ... ], as --format json writes it (or use FORMAT jsonl)")
				}
				return nil, r.jsonError(a.pos(), fmt.Sprintf("%s after the array that ends at %d:%d: %s", found(r.br), a.closeAt[0], a.closeAt[1], jsonFormatIs))
			}
			a.openAt = a.pos()
			a.arrays++
			a.consume(r.br, []byte{c}, false)
			a.state = jsonOpened
			continue
		case jsonAfter:
			switch {
			case eof:
			case c == ',':
				a.consume(r.br, []byte{c}, false)
				a.state = jsonComma
				continue
			case c == ']':
				a.closeAt = a.pos()
				a.consume(r.br, []byte{c}, false)
				a.state = jsonOutside
				continue
			default:
				return nil, r.jsonError(a.pos(), fmt.Sprintf("%s where a , or the ] that closes the array belongs, after the record at %d:%d: %s", found(r.br), a.lastAt[0], a.lastAt[1], jsonFormatIs))
			}
		case jsonOpened, jsonComma:
			switch {
			case eof:
			case c == ']' && a.state == jsonOpened:
				a.closeAt = a.pos()
				a.consume(r.br, []byte{c}, false)
				a.state = jsonOutside
				continue
			case c == ']':
				return nil, r.jsonError(a.pos(), "a ] right after a , (JSON has no trailing comma): a record was expected; "+jsonFormatIs)
			default:
				return r.jsonElement()
			}
		}
		// The input ended inside an array.
		return nil, r.jsonError(a.pos(), fmt.Sprintf("the input ends inside the array that starts at %d:%d (it is not closed): %s", a.openAt[0], a.openAt[1], jsonFormatIs))
	}
}

// jsonElement reads the element that starts at the next byte.
func (r *Reader) jsonElement() (*Record, error) {
	a := r.arr
	start := a.pos()
	a.lastAt = start
	span := Span{Offset: a.off, Col: int32(start[1]), LineStart: a.blank}
	elem, err := a.readElement(r.br)
	if err == io.EOF {
		return nil, r.jsonError(start, "the input ends inside the record that starts here (the array is not closed): "+jsonFormatIs)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: reading line %d: %w", r.name, a.line, err)
	}
	a.state = jsonAfter
	r.line = a.line
	rec, err := r.jsonRecord(elem, origin{start[0], start[1]})
	if err != nil {
		a.state, a.err = jsonFailed, err
		return nil, err
	}
	rec.EndLine = a.line // the element ends with a bracket, not a line break
	span.End = a.off
	span.EndCol = int32(a.off - a.lineStart)
	rec.Span = span
	a.skipBufferedSeparators(r.br)
	return rec, nil
}

// skipBufferedSeparators consumes what follows an element and is already
// buffered, up to the next element or anything else: whitespace, the
// comma, the ] that closes the array and whitespace after it. Scan hands
// a batch on when nothing is buffered; left unread, the ",\n" after a
// record from a pipe that then goes quiet held the record back (and with
// it the commit of a stream import) until more input came. It reads
// nothing that is not buffered, so it never waits; what it leaves (a [, a
// ] after a comma, anything wrong) is nextJSON's to read or to refuse.
func (a *jsonArray) skipBufferedSeparators(br *bufio.Reader) {
	for br.Buffered() > 0 {
		buf, _ := br.Peek(br.Buffered())
		i := 0
		for i < len(buf) && isJSONSpace(buf[i]) {
			i++
		}
		a.consume(br, buf[:i], true)
		if i == len(buf) {
			continue
		}
		switch c := buf[i]; {
		case c == ',' && a.state == jsonAfter:
			a.consume(br, []byte{c}, false)
			a.state = jsonComma
		case c == ']' && a.state == jsonAfter:
			a.closeAt = a.pos()
			a.consume(br, []byte{c}, false)
			a.state = jsonOutside
		default:
			return
		}
	}
}
