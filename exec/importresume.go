package exec

import (
	"fmt"
	"strings"

	"github.com/kql-dev/kql/ingest"
)

// What an import that failed while it wrote (a refused record or commit,
// Ctrl-C) says about its input: which part is committed, and how to feed
// the rest so that nothing is written twice. For line formats that is the
// lines after the last line of the last record committed. FORMAT json's
// rest is not an array by itself (it lacks the [, and may begin with the ,
// after the last record committed): the advice makes it one again, from the
// first byte (or, when only whitespace is before it, the line) of the first
// record not committed, a shell command that works as printed.

// importPos is where a record was in the input: the lines it starts and
// ends on (a csv value with a line break, a pretty-printed json record span
// several) and, for FORMAT json, its bytes.
type importPos struct {
	line, endLine int
	span          ingest.Span
}

func importPosOf(in *ingest.Record) importPos { return importPos{in.Line, in.LastLine(), in.Span} }

// importCommitted is how far an import's input is committed.
type importCommitted struct {
	written importPos // the last record given to the writer
	last    importPos // the last record committed; line 0: none
	next    importPos // the first record written after it; line 0: none yet
}

// wrote notes the record at given to the writer; committed: its Write
// committed the transaction, the record in it.
func (c *importCommitted) wrote(at importPos, committed bool) {
	if c.next.line == 0 {
		c.next = at
	}
	c.written = at
	if committed {
		c.commit()
	}
}

// commit notes a commit of everything written so far.
func (c *importCommitted) commit() { c.last, c.next = c.written, importPos{} }

// resumeText says what of the input is committed (txns: how many
// transactions) and how to feed the rest; unknown: the last commit got no
// answer, so the transaction after that may be in the topic too. file is
// the input's path ("" for stdin); stream: it is read once (stdin, a pipe),
// so the rest is the same input fed again, filtered.
func (c *importCommitted) resumeText(format ingest.Format, file string, stream bool, txns string, unknown bool) string {
	if c.last.line == 0 {
		if unknown {
			return "nothing was committed before that transaction, which may be committed or not: read the topic (read_committed), and import the whole input again only if it is not there"
		}
		return "nothing was committed"
	}
	n := c.last.endLine
	if format != ingest.JSON {
		if unknown {
			return fmt.Sprintf("input lines 1-%d were committed (%s); the transaction after them may be committed or not: read the topic (read_committed), and resume with the lines after %d only if it is not there", n, txns, n)
		}
		return fmt.Sprintf("input lines 1-%d were committed (%s); resume with the lines after %d", n, txns, n)
	}
	done := fmt.Sprintf("input lines 1-%d were committed (%s)", n, txns)
	if c.next.line == 0 || c.next.line == n {
		// Line n may hold more than the committed record.
		done = fmt.Sprintf("the input up to line %d, column %d was committed (%s)", n, c.last.span.EndCol, txns)
	}
	in := "'" + strings.ReplaceAll(file, "'", `'\''`) + "'" // quoted for the shell
	how := func(tail string) string {
		if stream {
			return "pipe the input through (echo '['; " + tail + ")"
		}
		return "(echo '['; " + tail + " " + in + ")"
	}
	var rest string
	switch next := c.next; {
	case next.line > 0 && next.span.LineStart:
		rest = fmt.Sprintf("resume with the lines from %d on, made an array again: %s", next.line, how(fmt.Sprintf("tail -n +%d", next.line)))
	case next.line > 0:
		rest = fmt.Sprintf("resume with the input from line %d, column %d (byte %d) on, made an array again: %s", next.line, next.span.Col, next.span.Offset+1, how(fmt.Sprintf("tail -c +%d", next.span.Offset+1)))
	default:
		// No record after it was read: what follows may begin with the
		// comma after it.
		rest = fmt.Sprintf("resume with the input from byte %d on (after line %d, column %d), made an array again: a [ before it, and the , that follows the committed record left out", c.last.span.End+1, n, c.last.span.EndCol)
	}
	if unknown {
		return fmt.Sprintf("%s; the transaction after that may be committed or not: read the topic (read_committed), and only if it is not there, %s", done, rest)
	}
	return done + "; " + rest
}
