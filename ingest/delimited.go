package ingest

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kql-dev/kql/result"
)

// The csv and tsv formats as kql writes them: a header row with the six
// record columns, then partition, offset, timestamp, key, value, headers.
// NULL is an unquoted empty field in csv (the empty string is "") and \N in
// tsv (PostgreSQL's COPY text format).

var recordColumns = []string{"partition", "offset", "timestamp", "key", "value", "headers"}

// field is one delimited field: its text, whether it was NULL, and the
// column it starts at, on the row's first line or line lines after it (a
// csv field before it held a line break).
type field struct {
	text  string
	null  bool
	col   int
	lines int
}

func (r *Reader) nextDelimited(sep byte) (*Record, error) {
	for {
		fields, n, err := r.readFields(sep)
		if err != nil {
			return nil, err
		}
		if len(fields) == 1 && fields[0].null && fields[0].text == "" {
			continue // a blank line
		}
		if !r.head {
			r.head = true
			if len(fields) > 0 && fields[0].text == "partition" {
				for i, want := range recordColumns {
					if i >= len(fields) || fields[i].text != want {
						return nil, &Error{File: r.name, Line: n, Column: 1, Msg: "the header row must be " + strings.Join(recordColumns, string(sep)) + ", as kql writes it"}
					}
				}
				continue
			}
		}
		rec, err := r.delimitedRecord(fields, n)
		if err == nil {
			rec.EndLine = r.line
		}
		return rec, err
	}
}

func (r *Reader) delimitedRecord(fs []field, n int) (*Record, error) {
	if len(fs) != len(recordColumns) {
		col := 1
		if len(fs) > 0 {
			col = fs[len(fs)-1].col
		}
		line := n
		if len(fs) > 0 {
			col, line = fs[len(fs)-1].col, n+fs[len(fs)-1].lines
		}
		return nil, &Error{File: r.name, Line: line, Column: col, Msg: fmt.Sprintf("%d fields, want 6 (%s)", len(fs), strings.Join(recordColumns, ", "))}
	}
	fail := func(i int, msg string) error {
		return &Error{File: r.name, Line: n + fs[i].lines, Column: fs[i].col, Field: recordColumns[i], Msg: msg}
	}
	rec := &Record{Line: n, Partition: -1, Cols: Columns{
		Partition: int32(fs[0].col), Timestamp: int32(fs[2].col), Key: int32(fs[3].col), Value: int32(fs[4].col),
		PartitionLine: int32(fs[0].lines), TimestampLine: int32(fs[2].lines), KeyLine: int32(fs[3].lines), ValueLine: int32(fs[4].lines),
	}}
	if !fs[0].null && fs[0].text != "" {
		p, err := strconv.ParseInt(fs[0].text, 10, 32)
		if err != nil || p < 0 {
			return nil, fail(0, fmt.Sprintf("%q is not a partition number", fs[0].text))
		}
		rec.Partition = int32(p)
	}
	if t := fs[2].text; !fs[2].null && t != "" {
		if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
			rec.Timestamp = time.UnixMilli(ms)
		} else {
			ts, err := parseTime(t)
			if err != nil {
				return nil, fail(2, err.Error())
			}
			rec.Timestamp = ts
		}
	}
	for i, dst := range []*[]byte{&rec.Key, &rec.Value} {
		f := fs[3+i]
		if f.null {
			continue
		}
		b, err := decodeText(f.text)
		if err != nil {
			return nil, fail(3+i, err.Error())
		}
		*dst = b
	}
	hs, err := parseHeadersText(fs[5].text)
	if err != nil {
		return nil, fail(5, err.Error())
	}
	rec.Headers = hs
	return rec, nil
}

// readFields reads one row. TSV rows are one line; a CSV row may span
// lines inside quotes.
func (r *Reader) readFields(sep byte) ([]field, int, error) {
	line, n, err := r.readLine()
	if err != nil {
		return nil, 0, err
	}
	if sep == '\t' {
		return tsvFields(string(line)), n, nil
	}
	var out []field
	s := string(line)
	i := 0
	lines := 0 // the line breaks inside quoted fields so far
	for {
		start, startLines := i, lines
		if i < len(s) && s[i] == '"' {
			var b strings.Builder
			i++
			for {
				if i >= len(s) {
					// The line break is part of the field, as it was
					// written: \r\n stays \r\n.
					eol := "\n"
					if r.crlf {
						eol = "\r\n"
					}
					more, _, err := r.readLine()
					if err == io.EOF {
						return nil, 0, &Error{File: r.name, Line: n + startLines, Column: start + 1, Msg: "a quoted field is not closed before the end of the input"}
					}
					if err != nil {
						return nil, 0, err
					}
					b.WriteString(eol)
					s, i = string(more), 0
					lines++
					continue
				}
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			out = append(out, field{text: b.String(), col: start + 1, lines: startLines})
			if i < len(s) && s[i] != sep {
				return nil, 0, &Error{File: r.name, Line: r.line, Column: i + 1, Msg: fmt.Sprintf("%q after a closing quote: a quote inside a field is written twice (\"\")", s[i])}
			}
		} else {
			j := strings.IndexByte(s[i:], sep)
			if j < 0 {
				j = len(s) - i
			}
			text := s[i : i+j]
			out = append(out, field{text: text, null: text == "", col: start + 1, lines: lines})
			i += j
		}
		if i >= len(s) {
			return out, n, nil
		}
		i++ // the separator
		if i == len(s) {
			return append(out, field{null: true, col: i + 1, lines: lines}), n, nil
		}
	}
}

func tsvFields(s string) []field {
	var out []field
	col := 1
	for _, part := range strings.Split(s, "\t") {
		f := field{col: col}
		if part == `\N` {
			f.null = true
		} else {
			f.text = unescapeTSV(part)
		}
		out = append(out, f)
		col += len(part) + 1
	}
	if len(out) == 1 && s == "" {
		out[0].null = true
	}
	return out
}

func unescapeTSV(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 't':
				b.WriteByte('\t')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseHeadersText reads the headers text form (render's
// appendHeadersText): entries "k=v" joined by ", ", "k" alone for a NULL
// value, \\ \, \= escapes, x'…' hex for bytes that are not text.
func parseHeadersText(s string) ([]result.Header, error) {
	if s == "" {
		return nil, nil
	}
	var out []result.Header
	var cur strings.Builder
	var key string
	haveKey := false
	flush := func() error {
		text := cur.String()
		cur.Reset()
		if !haveKey {
			k, err := decodeText(text)
			if err != nil {
				return err
			}
			out = append(out, result.Header{Key: string(k)})
			return nil
		}
		v, err := decodeText(text)
		if err != nil {
			return err
		}
		out = append(out, result.Header{Key: key, Value: v})
		haveKey = false
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '=' && !haveKey:
			k, err := decodeText(cur.String())
			if err != nil {
				return nil, err
			}
			key, haveKey = string(k), true
			cur.Reset()
		case c == ',' && i+1 < len(s) && s[i+1] == ' ':
			if err := flush(); err != nil {
				return nil, err
			}
			i++
		default:
			cur.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}
