package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// FORMAT json: one array of records, as --format json writes it (one
// record per line) or pretty-printed by hand. The decoder reads ahead, so
// the reader under it notes where each newline is; the line of a record
// is the number of newlines before the offset the decoder reached. Only
// the newlines past that offset are kept: memory stays that of the
// read-ahead buffer however long the input.

type lineTracker struct {
	r        io.Reader
	read     int64   // bytes handed to the decoder
	newlines []int64 // offsets of newlines not yet passed
	passed   int     // newlines before the decoder's offset
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] == '\n' {
			t.newlines = append(t.newlines, t.read+int64(i))
		}
	}
	t.read += int64(n)
	return n, err
}

// lineAt is the 1-based line of byte offset off (off never goes back).
func (t *lineTracker) lineAt(off int64) int {
	i := 0
	for i < len(t.newlines) && t.newlines[i] < off {
		i++
	}
	t.passed += i
	t.newlines = t.newlines[i:]
	return t.passed + 1
}

type jsonArray struct {
	lt  *lineTracker
	dec *json.Decoder
}

func (r *Reader) nextJSON() (*Record, error) {
	if r.arr == nil {
		lt := &lineTracker{r: r.br}
		r.arr = &jsonArray{lt: lt, dec: json.NewDecoder(lt)}
		tok, err := r.arr.dec.Token()
		if err == io.EOF {
			return nil, io.EOF
		}
		if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
			return nil, &Error{File: r.name, Line: lt.lineAt(r.arr.dec.InputOffset()), Column: 1, Msg: "FORMAT json is one array of records, [ {...}, ... ], as --format json writes it (or use FORMAT jsonl)"}
		}
	}
	a := r.arr
	if !a.dec.More() {
		if _, err := a.dec.Token(); err != nil { // the closing ]
			return nil, &Error{File: r.name, Line: a.lt.lineAt(a.dec.InputOffset()), Msg: "the array is not closed: " + err.Error()}
		}
		return nil, io.EOF
	}
	var raw json.RawMessage
	err := a.dec.Decode(&raw)
	// The record starts after the separator and spaces before it.
	line := a.lt.lineAt(a.dec.InputOffset() - int64(len(raw)))
	r.line = line
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			line = a.lt.passed + len(a.lt.newlines) + 1 // the input ended inside the record
			return nil, &Error{File: r.name, Line: line, Msg: "the input ends inside a record (the array is not closed)"}
		}
		var se *json.SyntaxError
		msg := err.Error()
		if errors.As(err, &se) {
			msg = fmt.Sprintf("not JSON: %v", se)
		}
		return nil, &Error{File: r.name, Line: line, Msg: msg}
	}
	return r.jsonRecord(raw, line, 0)
}
