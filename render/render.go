// Package render writes a statement's result in one of the output formats:
// table, expanded, json, jsonl, csv and tsv. Every format reads the result as
// a stream: jsonl, csv, tsv and json write each row as it arrives, and table
// and expanded hold at most one batch of rows, so a million-record CONSUME
// never sits in memory.
//
// Keys, values and header values follow one rule in every format (see Value):
// valid UTF-8 is shown as text, anything else as the hex literal x'…'.
package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/kql-dev/kql/result"
)

// Format names an output format.
type Format string

const (
	Table    Format = "table"
	Expanded Format = "expanded"
	JSON     Format = "json"
	JSONL    Format = "jsonl"
	CSV      Format = "csv"
	TSV      Format = "tsv"
)

// Formats lists every format, in the order help text shows them.
var Formats = []Format{Table, Expanded, JSON, JSONL, CSV, TSV}

// ParseFormat returns the format named s (case and surrounding space ignored).
func ParseFormat(s string) (Format, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, f := range Formats {
		if string(f) == name {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown output format %q: valid formats are %s", s, strings.Join(names, ", "))
}

// DefaultBatchSize is how many rows table and expanded hold at once, and how
// often every format flushes, when Options.BatchSize is not set.
const DefaultBatchSize = 1000

// Options says how to render one result.
type Options struct {
	Format Format // "" means Table
	// Width is the terminal width: table cells are cut with an ellipsis so a
	// line fits it. 0 means no cutting (output is not a terminal).
	Width int
	// Color allows colour on this stream (NULLs are dimmed). The caller
	// decides per stream; the global fatih/color setting is never consulted.
	Color bool
	// BatchSize is how many rows table and expanded format at once (like
	// psql's FETCH_COUNT) and how many rows any format writes between flushes.
	// 0 means DefaultBatchSize.
	BatchSize int
	// Footer adds a "(N rows)" line after a table or expanded result.
	Footer bool
}

// Render writes the whole result to w and returns how many rows it wrote.
// Rows are written as they come; after the last one Render returns res.Err(),
// so a partial result keeps its rows and still reports its error. A failure
// to write stops rendering and is returned instead. Render does not close res.
func Render(w io.Writer, res result.Result, opt Options) (int64, error) {
	if opt.Format == "" {
		opt.Format = Table
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = DefaultBatchSize
	}
	var write func(*output, result.Result, Options) (int64, error)
	switch opt.Format {
	case Table:
		write = writeTable
	case Expanded:
		write = writeExpanded
	case JSON:
		write = writeJSON
	case JSONL:
		write = writeJSONL
	case CSV:
		write = writeCSV
	case TSV:
		write = writeTSV
	default:
		_, err := ParseFormat(string(opt.Format))
		return 0, err
	}

	if rs, ok := recordStream(res); ok {
		switch opt.Format {
		case JSON:
			write = func(o *output, _ result.Result, _ Options) (int64, error) { return writeJSONRecords(o, rs) }
		case JSONL:
			write = func(o *output, _ result.Result, _ Options) (int64, error) { return writeJSONLRecords(o, rs) }
		case CSV:
			write = func(o *output, _ result.Result, _ Options) (int64, error) { return writeCSVRecords(o, rs) }
		case TSV:
			write = func(o *output, _ result.Result, _ Options) (int64, error) { return writeTSVRecords(o, rs) }
		}
	}
	out := newOutput(w)
	n, err := write(out, res, opt)
	if ferr := out.close(); err == nil {
		err = ferr
	}
	if err != nil {
		return n, fmt.Errorf("writing %s output: %w", opt.Format, err)
	}
	return n, res.Err()
}

// rowError reports a row that does not match its columns: a bug in the
// statement that produced it, shown rather than papered over.
func rowError(n int64, row result.Row, cols []result.Column) error {
	return fmt.Errorf("row %d has %d values for %d columns", n+1, len(row), len(cols))
}
