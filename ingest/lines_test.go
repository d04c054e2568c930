package ingest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readLines reads every record of in as FORMAT lines with delimiter d, as
// "line key value" strings, a NULL key written as NULL.
func readLines(t *testing.T, in, d string) []string {
	t.Helper()
	r := NewReader(strings.NewReader(in), "in.txt", Lines, Options{KeyDelimiter: d})
	var out []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err, "%q with delimiter %q", in, d)
		key := "NULL"
		if rec.Key != nil {
			key = fmt.Sprintf("%q", rec.Key)
		}
		out = append(out, fmt.Sprintf("%d %s %q", rec.Line, key, rec.Value))
	}
}

// TestLinesReadAsKcatP pins FORMAT lines to what kcat -P (1.7.1, librdkafka
// 2.0.2) wrote for the same standard input, read back with kcat -C -J:
// an empty line is skipped; a line without the key delimiter is its value
// with a NULL key; the text before the first delimiter is the key, an
// empty one included (not NULL), and the rest is the value, empty or not;
// a multi-byte delimiter is matched whole; the last line counts without
// its newline. One difference is kql's, on purpose (README): a \r before
// the \n ends the line with it (kcat keeps it in the value), so a CRLF
// file reads as its LF twin, and "\r\n" alone is an empty line.
// Record lines are input lines, skipped ones counted.
func TestLinesReadAsKcatP(t *testing.T) {
	in1 := "a:1\r\nb:2:3\n\nnodelim\n:emptykey\nlast:x"
	in2 := "k:\n:\n \n\r\n\n\nx::y::z\na→b→c\n::lead\nend::"
	for _, c := range []struct {
		in, d string
		want  []string
	}{
		// kcat -P -K: wrote a/"1\r", b/"2:3", NULL/"nodelim", ""/"emptykey", last/"x".
		{in1, ":", []string{`1 "a" "1"`, `2 "b" "2:3"`, `4 NULL "nodelim"`, `5 "" "emptykey"`, `6 "last" "x"`}},
		// kcat -P wrote the five non-empty lines with NULL keys.
		{in1, "", []string{`1 NULL "a:1"`, `2 NULL "b:2:3"`, `4 NULL "nodelim"`, `5 NULL ":emptykey"`, `6 NULL "last:x"`}},
		// kcat -P -K: wrote k/"", ""/"", NULL/" ", NULL/"\r", x/":y::z", NULL/"a→b→c", ""/":lead", end/":".
		{in2, ":", []string{`1 "k" ""`, `2 "" ""`, `3 NULL " "`, `7 "x" ":y::z"`, `8 NULL "a→b→c"`, `9 "" ":lead"`, `10 "end" ":"`}},
		// kcat -P -K '::'.
		{in2, "::", []string{`1 NULL "k:"`, `2 NULL ":"`, `3 NULL " "`, `7 "x" "y::z"`, `8 NULL "a→b→c"`, `9 "" "lead"`, `10 "end" ""`}},
		// kcat -P -K '→' (three bytes).
		{in2, "→", []string{`1 NULL "k:"`, `2 NULL ":"`, `3 NULL " "`, `7 NULL "x::y::z"`, `8 "a" "b→c"`, `9 NULL "::lead"`, `10 NULL "end::"`}},
		// Nothing but empty lines is no record.
		{"\n\r\n\n", ":", nil},
	} {
		require.Equal(t, c.want, readLines(t, c.in, c.d), "%q with delimiter %q", c.in, c.d)
	}
}

// A record's columns are where its key and value start in the line, so a
// field error after the read (a schema that refuses the value) points
// there: the value of a line without the delimiter is the whole line.
func TestLinesColumnsWithoutTheDelimiter(t *testing.T) {
	var got []string
	err := Scan(context.Background(), strings.NewReader("\nk:v\nnokey\n"), "in.lines", Lines, Options{KeyDelimiter: ":"}, ScanConfig{}, func(b *Batch) error {
		for i := range b.Records {
			got = append(got, FieldError("in.lines", &b.Records[i], "value", "boom").Error())
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"in.lines:2:3: value: boom", "in.lines:3:1: value: boom"}, got)
}
