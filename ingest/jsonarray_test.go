package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// readJSON reads every record of in as FORMAT json, through Scan as the
// import does, and returns the keys read and the error that ended it.
func readJSON(t *testing.T, in string) ([]string, error) {
	t.Helper()
	var keys []string
	err := Scan(context.Background(), strings.NewReader(in), "in.json", JSON, Options{}, ScanConfig{Parallel: true, KeepBytes: true}, func(b *Batch) error {
		for _, r := range b.Records {
			keys = append(keys, string(r.Key))
		}
		return nil
	})
	return keys, err
}

// kql --format json writes one array per statement, so the output of
// several SELECTs is several arrays one after the other: every one of them
// is read, whatever whitespace is between and after them.
func TestJSONSuccessiveArraysAreAllRead(t *testing.T) {
	var two bytes.Buffer
	for _, recs := range [][]result.Record{awkward[:2], awkward[2:]} {
		_, err := render.Render(&two, &recordSlice{recs: recs}, render.Options{Format: render.JSON})
		require.NoError(t, err)
	}
	require.Equal(t, 2, strings.Count(two.String(), "\n]\n"), "two arrays: %s", two.String())
	keys, err := readJSON(t, two.String())
	require.NoError(t, err)
	require.Len(t, keys, len(awkward), "the records of both arrays")

	for in, want := range map[string][]string{
		`[{"key":"a"}][{"key":"b"}]`:                                         {"a", "b"},
		"[{\"key\":\"a\"}]\n\n  [ {\"key\":\"b\"} ,{\"key\":\"c\"}]\n\t\r\n": {"a", "b", "c"},
		"[]\n[{\"key\":\"a\"}]\n[]":                                          {"a"},
		"[]":                                                                 nil,
		"":                                                                   nil,
		" \n":                                                                nil,
	} {
		keys, err := readJSON(t, in)
		require.NoError(t, err, "%q", in)
		require.Equal(t, want, keys, "%q", in)
	}
}

// Anything but whitespace or another array after a closing ] is an error
// naming where it is and what it is: it used to be ignored, and the
// records it held were lost with exit 0.
func TestJSONAnythingElseAfterTheArrayIsAnError(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[{"key":"a","value":"1"}] junk`, `in.json:1:27: "junk" after the array that ends at 1:25`},
		{"[{\"key\":\"a\"}]\n{\"key\":\"b\"}\n", `in.json:2:1: "{\"key\":\"b\"}" after the array that ends at 1:13`},
		{`[{"key":"a"}],[{"key":"b"}]`, `in.json:1:14: ",[{\"key\":\"b\"}]" after the array that ends at 1:13`},
		{`[{"key":"a"}]]`, `in.json:1:14: "]" after the array that ends at 1:13`},
		{"[{\"key\":\"a\"}]\n[{\"key\":\"b\"}", `in.json:2:13: the input ends inside the array that starts at 2:1`},
		{`[{"key":"a"}] [`, `in.json:1:16: the input ends inside the array that starts at 1:15`},
		{`[{"key":"a"} {"key":"b"}]`, `in.json:1:14: "{\"key\":\"b\"}]" where a , or the ] that closes the array belongs, after the record at 1:2`},
		{`[{"key":"a"},]`, `in.json:1:14: a ] right after a , (JSON has no trailing comma): a record was expected`},
		{`[{"key":"a"},`, `in.json:1:14: the input ends inside the array that starts at 1:1`},
		{"[{\"key\":\"a\"},\n{\"key\":", `in.json:2:1: the input ends inside the record that starts here`},
	} {
		keys, err := readJSON(t, c.in)
		var ie *Error
		require.True(t, errors.As(err, &ie), "%q: %v", c.in, err)
		require.Contains(t, err.Error(), c.want, "%q", c.in)
		require.Contains(t, err.Error(), "FORMAT json", "%q: the error says what the format is", c.in)
		_ = keys
	}
	// A Reader stops there too.
	r := NewReader(strings.NewReader(`[{"key":"a"}] junk`), "in.json", JSON, Options{})
	_, err := r.Next()
	require.NoError(t, err)
	_, err = r.Next()
	require.ErrorContains(t, err, `in.json:1:15: "junk"`)
	_, err = r.Next()
	require.Error(t, err, "the error is not forgotten")
	require.NotErrorIs(t, err, io.EOF)
}

// Positions in FORMAT json are the input's line and column: they used to
// be counted from the start of the record, so a record that did not start
// at column 1, or spanned lines (pretty-printed), was misplaced.
func TestJSONErrorPositionsAreTheInputs(t *testing.T) {
	pretty := `[
  {
    "key": "a"
  },
  {
    "key": "b",
    "vaue": "1"
  }
]
`
	for _, c := range []struct{ in, want string }{
		{"[{\"key\":\"a\"}, {\"key\":\"b\",\"vaue\":\"1\"}]\n", `in.json:1:26: vaue: unknown field "vaue"`},
		{pretty, `in.json:7:5: vaue: unknown field "vaue"`},
		{"[{\"key\":\"a\"},\n  {\"key\":\n \"b\",,}]", `in.json:3:6: not a JSON object: invalid character ','`},
		{"[\n  {\"key\":\"a\"},\n  {\"key\":\"b\",\n   \"value\":\"x'0'\"}]", `in.json:4:4: value: x'0' is not a hex literal`},
		{"[\n  {\"key\":\"a\"},\n  1]", `in.json:3:3: not a JSON object of a record`},
		{"\xEF\xBB\xBF[{\"key\":\"a\"}, {\"vaue\":\"1\"}]", `in.json:1:16: vaue:`}, // a byte order mark is no column
	} {
		_, err := readJSON(t, c.in)
		require.ErrorContains(t, err, c.want, "%q", c.in)
	}
}

// A record knows the line it ends on as well as the one it starts on: an
// import's "input lines 1-N were committed" needs N to be the last line of
// the last record committed, or the resume starts inside it.
func TestRecordsKnowTheirLastLine(t *testing.T) {
	for _, c := range []struct {
		f     Format
		in    string
		lines [][2]int // first and last line of each record
	}{
		{JSON, "[\n  {\n    \"key\": \"a\"\n  },\n  {\"key\": \"b\"},\n  {\n\"key\": \"c\"}\n]\n", [][2]int{{2, 4}, {5, 5}, {6, 7}}},
		{CSV, "partition,offset,timestamp,key,value,headers\n,,,a,\"1\n2\n3\",\n,,,b,2,\n,,,c,\"x\r\ny\",\n", [][2]int{{2, 4}, {5, 5}, {6, 7}}},
		{JSONL, "{\"key\":\"a\"}\n\n{\"key\":\"b\"}\n", [][2]int{{1, 1}, {3, 3}}},
		{TSV, "\\N\t\\N\t\\N\ta\t1\t\n", [][2]int{{1, 1}}},
		{Lines, "a\nb\n", [][2]int{{1, 1}, {2, 2}}},
	} {
		for _, parallel := range []bool{false, true} {
			var got [][2]int
			err := Scan(context.Background(), strings.NewReader(c.in), "in", c.f, Options{}, ScanConfig{Parallel: parallel}, func(b *Batch) error {
				for _, r := range b.Records {
					got = append(got, [2]int{r.Line, r.LastLine()})
				}
				return nil
			})
			require.NoError(t, err, "%s %q", c.f, c.in)
			require.Equal(t, c.lines, got, "%s %q parallel=%v", c.f, c.in, parallel)
		}
	}
}

// A FORMAT json record knows its bytes in the input (a byte order mark
// counted, as tail -c counts it), the column its last byte is at, and
// whether it starts its line: what an import's resume after it needs,
// since the rest of an array is an array again only with a [ before it.
func TestJSONRecordsKnowTheirSpan(t *testing.T) {
	in := "\xEF\xBB\xBF[\n  {\"key\":\"a\"},\n  {\"key\":\"b\"}, {\"key\":\n\"c\"}\n]\n[ {\"key\":\"d\"}\n]"
	var got []Span
	err := Scan(context.Background(), strings.NewReader(in), "in.json", JSON, Options{}, ScanConfig{}, func(b *Batch) error {
		for _, r := range b.Records {
			got = append(got, r.Span)
			require.Equal(t, "{", in[r.Span.Offset:r.Span.Offset+1], "%s starts at its offset", r.Key)
			require.Equal(t, "}", in[r.Span.End-1:r.Span.End], "%s ends before its end", r.Key)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []Span{
		{Offset: 7, End: 18, Col: 3, EndCol: 13, LineStart: true},
		{Offset: 22, End: 33, Col: 3, EndCol: 13, LineStart: true},
		{Offset: 35, End: 47, Col: 16, EndCol: 4, LineStart: false},
		{Offset: 52, End: 63, Col: 3, EndCol: 13, LineStart: false},
	}, got)
}
