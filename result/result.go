// Package result holds the shape of a statement's answer: named, typed
// columns and a stream of rows. The executor produces results and the
// renderers consume them; neither imports the other.
package result

import (
	"errors"
	"fmt"
	"strings"
)

// Type is a column's value type. It tells a renderer how to show a value
// (right-align numbers, quote strings in JSON, show bytes losslessly).
type Type int

const (
	Int     Type = iota + 1 // int64 (and int32 widened by the executor)
	String                  // string
	Bool                    // bool
	Bytes                   // []byte: keys and values; valid UTF-8 is shown as text
	Time                    // time.Time; a record timestamp
	Ints                    // []int32: replica lists
	Headers                 // []Header: record headers, in order, duplicates kept
	Number                  // string: a computed number's exact text (12, 9.5, 1e+21): JSON writes it as a number
)

// JSON is valid, compact JSON text held in a Bytes column (a record value
// decoded through the schema registry, an object a JSON path picked): text
// formats show the text, json and jsonl nest it as a JSON value rather than
// a string holding JSON.
type JSON []byte

// Column is one named output column. Names are a documented contract: JSON
// output uses them as keys.
type Column struct {
	Name string
	Type Type
	// Key marks the columns that identify a row from one run of the
	// statement to the next (SHOW GROUPS: group; DESCRIBE GROUP: topic and
	// partition): \watch follows each row's numbers over time by them.
	Key bool
}

// Header is one record header. A nil Value is a null header value.
type Header struct {
	Key   string
	Value []byte
}

// Row holds one value per column, in column order. A nil element is NULL;
// otherwise the element's Go type matches the column Type (int64, string,
// bool, []byte, time.Time, []int32, []Header). A nil []byte is NULL too
// (franz-go hands over a null key or value that way); renderers treat both alike.
type Row []any

// Result is a statement's answer, read as a stream so that a million-record
// CONSUME never sits in memory. Next returns false at the end or on failure;
// Err then says which. Close releases whatever the statement still holds and
// may be called at any time, more than once.
//
// Stats is everything else a caller asks of a result (records read, live,
// notices, warnings, the next page): one value per statement, never nil,
// that an operator over another result returns from its child, so a wrapper
// cannot hide any of it.
type Result interface {
	Columns() []Column
	Next() (Row, bool)
	Err() error
	Close()
	Stats() *Stats
}

// Slice is a Result over rows already in memory, for small answers
// (metadata, groups, a produced record).
type Slice struct {
	Cols    []Column
	Rows    []Row
	Failure error    // returned by Err after the last row: a partial answer's error
	Notes   []string // the Stats' notices
	Warns   []string // the Stats' warnings
	i       int
	stats   *Stats
}

// NewSlice returns a Result over rows.
func NewSlice(cols []Column, rows []Row) *Slice { return &Slice{Cols: cols, Rows: rows} }

func (s *Slice) Columns() []Column { return s.Cols }

func (s *Slice) Next() (Row, bool) {
	if s.i >= len(s.Rows) {
		return nil, false
	}
	s.i++
	return s.Rows[s.i-1], true
}

func (s *Slice) Err() error {
	if s.i < len(s.Rows) {
		return nil
	}
	return s.Failure
}

func (s *Slice) Close() {}

// Stats reads Notes and Warns as they are when asked.
func (s *Slice) Stats() *Stats {
	if s.stats == nil {
		s.stats = &Stats{}
		s.stats.NoticesFrom(func() []string { return s.Notes })
		s.stats.WarningsFrom(func() []string { return s.Warns })
	}
	return s.stats
}

// PartialError says that the rows that came were true but incomplete: some
// brokers or partitions did not answer. Renderers print the rows, then the
// error; the shell exits 1.
type PartialError struct {
	What    string  // what was incomplete, e.g. "SHOW GROUPS"
	Missing []error // one per broker or partition that did not answer
}

func (e *PartialError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "partial result: %s is missing what %d %s would have answered", e.What, len(e.Missing), plural(len(e.Missing), "source", "sources"))
	for _, m := range e.Missing {
		b.WriteString("\n  ")
		b.WriteString(m.Error())
	}
	return b.String()
}

func (e *PartialError) Unwrap() []error { return e.Missing }

// IsPartial reports whether err says the result was partial.
func IsPartial(err error) bool {
	var p *PartialError
	return errors.As(err, &p)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
