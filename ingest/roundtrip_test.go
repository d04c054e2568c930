package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

type recordSlice struct {
	recs  []result.Record
	i     int
	cur   result.Record
	stats result.Stats
}

func (s *recordSlice) Stats() *result.Stats     { return &s.stats }
func (s *recordSlice) Columns() []result.Column { return result.RecordColumns }
func (s *recordSlice) Err() error               { return nil }
func (s *recordSlice) Close()                   {}
func (s *recordSlice) NextRecord() (*result.Record, bool) {
	if s.i >= len(s.recs) {
		return nil, false
	}
	s.cur = s.recs[s.i]
	s.i++
	return &s.cur, true
}
func (s *recordSlice) Next() (result.Row, bool) {
	r, ok := s.NextRecord()
	if !ok {
		return nil, false
	}
	return r.Row(), true
}

// awkward are records whose every field is a corner of the bytes rule.
var awkward = []result.Record{
	{Partition: 0, Offset: 0, Timestamp: 1767225600123, Key: []byte("k1"), Value: []byte(`{"a":1}`)},
	{Partition: 1, Offset: 7, Timestamp: 0, Key: nil, Value: nil}, // NULL key, tombstone
	{Partition: 2, Offset: 9, Timestamp: -1500, Key: []byte{}, Value: []byte{}},
	{Partition: 3, Offset: 1, Timestamp: 1767225600000, Key: []byte{0xff, 0x00, 0xfe}, Value: []byte("x'ab'"),
		Headers: []result.Header{{Key: "h", Value: nil}, {Key: "h", Value: []byte{}}, {Key: "h", Value: []byte("a=b, c\\d")}, {Key: "", Value: nil}, {Key: "bin", Value: []byte{0x80}}}},
	{Partition: 4, Offset: 2, Timestamp: 1767225600001, Key: []byte("tab\there\nnew \"line\", comma"), Value: []byte(" leading space"),
		Headers: []result.Header{{Key: "k=1,2", Value: []byte("x'zz'")}}},
	{Partition: 5, Offset: 3, Timestamp: 1767225600002, Key: []byte(`\.`), Value: []byte(`\N`)},
}

// Every format kql writes reads back to the same records (less the
// offset, which a new topic assigns).
func TestExportThenImportIsLossless(t *testing.T) {
	for _, f := range []Format{JSONL, JSON, CSV, TSV} {
		t.Run(f.String(), func(t *testing.T) {
			var out bytes.Buffer
			rf, err := render.ParseFormat(f.String())
			require.NoError(t, err)
			_, err = render.Render(&out, &recordSlice{recs: awkward}, render.Options{Format: rf})
			require.NoError(t, err)
			r := NewReader(&out, "export."+f.String(), f, Options{})
			for i, want := range awkward {
				got, err := r.Next()
				require.NoError(t, err, "record %d", i)
				require.Equal(t, want.Partition, got.Partition, "record %d", i)
				require.Equal(t, time.UnixMilli(want.Timestamp).UTC(), got.Timestamp.UTC(), "record %d", i)
				require.Equal(t, want.Key, got.Key, "record %d key", i)
				require.Equal(t, want.Value, got.Value, "record %d value", i)
				require.Equal(t, want.Headers, got.Headers, "record %d headers", i)
			}
			_, err = r.Next()
			require.ErrorIs(t, err, io.EOF)
		})
	}
}

func TestBadInputNamesLineColumnAndField(t *testing.T) {
	for _, c := range []struct {
		f    Format
		in   string
		want string
	}{
		{JSONL, "{\"value\":\"a\"}\n{\"value\":\"b\",\n", `in.jsonl:2:13: not a JSON object`},
		{JSONL, "{\"value\":\"a\"}\n\n{\"key\":\"x'0'\"}\n", `in.jsonl:3:2: key: x'0' is not a hex literal`},
		{JSONL, `{"value":"a","timestamp":"yesterday"}`, `in.jsonl:1:14: timestamp: timestamp "yesterday" is neither RFC 3339`},
		{JSONL, `{"valeu":"a"}`, `in.jsonl:1:2: valeu: unknown field "valeu"`},
		{JSONL, `{"partition":-1}`, `in.jsonl:1:2: partition: -1 is not a partition number`},
		{JSONL, `{"headers":[{"k":"a"}]}`, `in.jsonl:1:2: headers: header 1`},
		{CSV, "partition,offset,timestamp,key,value,headers\n0,0,2026-01-01T00:00:00Z,a,b\n", `in.csv:2:28: 5 fields, want 6`},
		{CSV, "0,0,2026-01-01T00:00:00Z,\"a\"x,b,\n", `in.csv:1:29: 'x' after a closing quote`},
		{TSV, "0\t0\tsoon\ta\tb\t\n", `in.tsv:1:5: timestamp:`},
		{JSON, "[\n{\"value\":\"a\"},\n\n  {\"valeu\":\"b\"}\n]\n", `in.json:4:4: valeu: unknown field`},
		{JSON, "{\"value\":\"a\"}\n", `in.json:1:1: FORMAT json is one array`},
		{JSON, "[{\"value\":\"a\"},\n{\"value\":", `in.json:2:1: the input ends inside the record that starts here`},
	} {
		r := NewReader(strings.NewReader(c.in), "in."+c.f.String(), c.f, Options{KeyDelimiter: ":"})
		var err error
		for err == nil {
			_, err = r.Next()
		}
		var ie *Error
		require.True(t, errors.As(err, &ie), "%s %q: %v", c.f, c.in, err)
		require.Contains(t, err.Error(), c.want, "%s %q", c.f, c.in)
	}
}

func TestLinesAreValuesWithAnOptionalKey(t *testing.T) {
	r := NewReader(strings.NewReader("a\r\n\nb:c:d\n"), "stdin", Lines, Options{})
	var vals []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Nil(t, rec.Key)
		vals = append(vals, string(rec.Value))
	}
	require.Equal(t, []string{"a", "b:c:d"}, vals, "every line is a value; an empty one holds none (kcat -P skips it)")
	r = NewReader(strings.NewReader("b:c:d"), "stdin", Lines, Options{KeyDelimiter: ":"})
	rec, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, "b", string(rec.Key))
	require.Equal(t, "c:d", string(rec.Value))
	require.Equal(t, 1, rec.Line)
}

// A mistake found after a record was read (a partition the target lacks, a
// value its schema refuses) names the line, the field and its column, in
// every format that has columns.
func TestFieldErrorsNameTheColumn(t *testing.T) {
	for _, c := range []struct {
		f     Format
		in    string
		field string
		want  string
	}{
		{JSONL, "{\"value\":\"a\"}\n{\"partition\":7,\"key\":\"k\",\"value\":\"v\"}\n", "partition", "in.jsonl:2:2: partition: boom"},
		{JSONL, "{\"partition\":7,\"key\":\"k\",\"value\":\"v\"}\n", "value", "in.jsonl:1:26: value: boom"},
		{JSONL, `{"partition":7, "timestamp": "2026-01-01T00:00:00+01:00", "key":"k"}`, "timestamp", "in.jsonl:1:17: timestamp: boom"},
		{JSONL, `{"key":"k"}`, "partition", "in.jsonl:1: partition: boom"},
		{CSV, "7,0,2026-01-01T00:00:00Z,k,v,\n", "value", "in.csv:1:28: value: boom"},
		{TSV, "7\t0\t2026-01-01T00:00:00Z\tk\tv\t\n", "key", "in.tsv:1:26: key: boom"},
		{Lines, "k1:v1\n", "value", "in.lines:1:4: value: boom"},
		// A record that spans lines: the field's own line and column.
		{JSON, "[{\"key\":\"a\"},\n  {\"partition\": 7,\n   \"key\": \"k\",\n   \"value\": \"v\"}]", "value", "in.json:4:4: value: boom"},
		{JSON, "[{\"key\":\"a\"}, {\"partition\": 7, \"key\": \"k\"}]", "partition", "in.json:1:16: partition: boom"},
		{CSV, "7,0,2026-01-01T00:00:00Z,\"k\n1\",v,\n", "value", "in.csv:2:4: value: boom"},
		{CSV, "7,0,2026-01-01T00:00:00Z,\"k\n1\",v,\n", "key", "in.csv:1:26: key: boom"},
	} {
		var rec *Record
		err := Scan(context.Background(), strings.NewReader(c.in), "in."+c.f.String(), c.f, Options{KeyDelimiter: ":"}, ScanConfig{Parallel: true}, func(b *Batch) error {
			rec = &b.Records[len(b.Records)-1]
			return FieldError("in."+c.f.String(), rec, c.field, "boom")
		})
		require.EqualError(t, err, c.want, "%s %q", c.f, c.in)
	}
}
