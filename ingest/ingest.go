// Package ingest reads records back from the formats kql writes (jsonl,
// json, csv, tsv) and from plain lines, so that an export imported again
// is the same records: the six record columns, bytes under kql's bytes
// rule (text, x'…' hex, NULL), headers as kql writes them, timestamps as
// RFC 3339 or epoch milliseconds. It is the inverse of render's record
// writers and knows nothing of Kafka.
package ingest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kql-dev/kql/result"
)

// Format is an input format.
type Format int

const (
	JSONL Format = iota
	JSON
	CSV
	TSV
	Lines
)

// ParseFormat maps a FORMAT name to its Format.
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(name) {
	case "jsonl", "":
		return JSONL, nil
	case "json":
		return JSON, nil
	case "csv":
		return CSV, nil
	case "tsv":
		return TSV, nil
	case "lines":
		return Lines, nil
	}
	return 0, fmt.Errorf("unknown import format %q: use jsonl, json, csv, tsv or lines", name)
}

func (f Format) String() string {
	return [...]string{"jsonl", "json", "csv", "tsv", "lines"}[f]
}

// Record is one record read from the input. Partition is -1 and Timestamp
// zero when the input does not give them.
type Record struct {
	Line      int // the input line the record starts on, from 1
	EndLine   int // the line it ends on, when after Line (0: Line)
	Partition int32
	Timestamp time.Time
	Key       []byte // nil: NULL
	Value     []byte // nil: NULL (a tombstone)
	Headers   []result.Header
	Cols      Columns // where its fields are in the line
	Span      Span    // FORMAT json: where its bytes are
}

// Span is where a FORMAT json record's bytes are in the input, for an
// import's resume after it: the rest of an array is an array again with a
// [ before it, from the next record's first byte (or line, when only
// whitespace comes before the record on it) on.
type Span struct {
	Offset    int64 // its first byte, from 0, a byte order mark counted (as tail -c counts)
	End       int64 // the byte after its last
	Col       int32 // the column of its first byte, on its Line
	EndCol    int32 // the column of its last byte, on its LastLine
	LineStart bool  // only whitespace comes before it on its first line
}

// LastLine is the input line the record ends on: after Line for a csv
// record with a quoted line break or a json record that spans lines. The
// input after it holds none of the record.
func (r *Record) LastLine() int { return max(r.Line, r.EndLine) }

// Columns is where each of a record's fields starts in its input line, from
// 1 (0: the input does not give the field): a mistake found only after the
// record was read (a partition the target lacks, a value its schema
// refuses) is reported there. A record that spans lines (a csv field with
// a line break, a pretty-printed json record) may have a field on a later
// line than its first: its *Line is how many lines later.
type Columns struct {
	Partition, Timestamp, Key, Value                 int32
	PartitionLine, TimestampLine, KeyLine, ValueLine int32
}

// FieldError is a mistake in field ("partition", "timestamp", "key" or
// "value") of rec, found after it was read from the input called name: it
// names the line, and the column when the input has one.
func FieldError(name string, rec *Record, field, msg string) *Error {
	var col, line int32
	switch field {
	case "partition":
		col, line = rec.Cols.Partition, rec.Cols.PartitionLine
	case "timestamp":
		col, line = rec.Cols.Timestamp, rec.Cols.TimestampLine
	case "key":
		col, line = rec.Cols.Key, rec.Cols.KeyLine
	case "value":
		col, line = rec.Cols.Value, rec.Cols.ValueLine
	}
	return &Error{File: name, Line: rec.Line + int(line), Column: int(col), Field: field, Msg: msg}
}

// Error is a record the input holds that cannot be read: where it is and
// which field is wrong.
type Error struct {
	File   string
	Line   int
	Column int    // from 1; 0 when unknown
	Field  string // "key", "value", "headers", "timestamp", "partition", or "" for the line itself
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	fmt.Fprintf(&b, ":%d", e.Line)
	if e.Column > 0 {
		fmt.Fprintf(&b, ":%d", e.Column)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Options tune a reader.
type Options struct {
	// KeyDelimiter splits a lines-format line into key and value at its
	// first occurrence (kcat -K); empty: the whole line is the value and
	// the key is NULL.
	KeyDelimiter string
}

// Reader reads records one at a time.
type Reader struct {
	name string
	f    Format
	opt  Options
	br   *bufio.Reader
	line int // lines consumed so far

	head   bool       // csv/tsv: header row read
	bom    bool       // the start was looked at for a byte order mark
	bomLen int        // the bytes of the one skipped there
	crlf   bool       // the last line read ended in \r\n, not \n
	arr    *jsonArray // FORMAT json
}

// NewReader reads r in format f; name is what errors call the input (a
// file name, or "stdin").
func NewReader(r io.Reader, name string, f Format, opt Options) *Reader {
	return &Reader{name: name, f: f, opt: opt, br: bufio.NewReaderSize(r, 1<<16)}
}

// Name is what errors call the input.
func (r *Reader) Name() string { return r.name }

// Line is the last input line consumed.
func (r *Reader) Line() int { return r.line }

// Next returns the next record, or io.EOF at the end. An *Error says
// which line and field could not be read.
func (r *Reader) Next() (*Record, error) {
	if !r.bom {
		r.bom = true
		r.bomLen = skipBOM(r.br)
	}
	switch r.f {
	case JSONL:
		for {
			line, n, err := r.readLine()
			if err != nil {
				return nil, err
			}
			if strings.TrimSpace(string(line)) == "" {
				continue // a blank line (a trailing newline, say) holds no record
			}
			return r.jsonRecord(line, origin{n, 1})
		}
	case JSON:
		return r.nextJSON()
	case CSV:
		return r.nextDelimited(',')
	case TSV:
		return r.nextDelimited('\t')
	default:
		return r.nextLine()
	}
}

// readLine reads one line without its line break.
func (r *Reader) readLine() ([]byte, int, error) {
	line, err := r.br.ReadBytes('\n')
	if err == io.EOF && len(line) == 0 {
		return nil, 0, io.EOF
	}
	if err != nil && err != io.EOF {
		return nil, 0, fmt.Errorf("%s: reading line %d: %w", r.name, r.line+1, err)
	}
	r.line++
	r.crlf = bytes.HasSuffix(line, []byte("\r\n"))
	line = trimEOL(line)
	return line, r.line, nil
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// nextLine reads a record of FORMAT lines as kcat -P reads its standard
// input: an empty line holds no record; with a key delimiter, the text
// before its first occurrence is the key (an empty one too) and the rest
// the value, and a line without it is its value with a NULL key. Unlike
// kcat, a \r before the \n goes with the line break (readLine), so a CRLF
// file reads as its LF twin.
func (r *Reader) nextLine() (*Record, error) {
	for {
		line, n, err := r.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			continue
		}
		rec := &Record{Line: n, Partition: -1, Cols: Columns{Value: 1}}
		if i := indexDelim(line, r.opt.KeyDelimiter); i >= 0 {
			d := len(r.opt.KeyDelimiter)
			rec.Key = append(make([]byte, 0, i), line[:i]...)
			line = line[i+d:]
			rec.Cols = Columns{Key: 1, Value: int32(i + d + 1)}
		}
		rec.Value = append([]byte{}, line...)
		return rec, nil
	}
}

// indexDelim is the byte offset of d's first occurrence in line, or -1
// (always, for no delimiter).
func indexDelim(line []byte, d string) int {
	if d == "" {
		return -1
	}
	return bytes.Index(line, []byte(d))
}

// decodeText maps a field's text back to its bytes under the bytes rule:
// x'…' is hex, anything else is the text itself.
func decodeText(s string) ([]byte, error) {
	if !looksHex(s) {
		return []byte(s), nil
	}
	if len(s)%2 == 0 {
		return nil, fmt.Errorf("%s is not a hex literal: x'…' holds an even number of hex digits (kql writes the text x'…' itself in hex)", s)
	}
	return hex.DecodeString(s[2 : len(s)-1])
}

// looksHex reports whether s matches ^[xX]'[0-9a-fA-F]*'$, as render's
// bytes rule does: kql never writes such text as itself.
func looksHex(s string) bool {
	if len(s) < 3 || (s[0] != 'x' && s[0] != 'X') || s[1] != '\'' || s[len(s)-1] != '\'' {
		return false
	}
	for i := 2; i < len(s)-1; i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// parseTime reads an RFC 3339 timestamp, or epoch milliseconds as text
// (a quoted "1700000000000" in jsonl reads as the csv field 1700000000000
// does).
func parseTime(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q is neither RFC 3339 (2026-01-02T15:04:05.000Z) nor epoch milliseconds", s)
	}
	return t, nil
}
