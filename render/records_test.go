package render

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/result"
)

// recordSlice is a RecordStream over records in memory; rowsOnly hides
// NextRecord, so the same records go through the row writers.
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

type rowsOnly struct{ s *recordSlice }

func (r rowsOnly) Columns() []result.Column { return r.s.Columns() }
func (r rowsOnly) Err() error               { return nil }
func (r rowsOnly) Close()                   {}
func (r rowsOnly) Stats() *result.Stats     { return r.s.Stats() }
func (r rowsOnly) Next() (result.Row, bool) { return r.s.Next() }

// trickyRecords covers every case of the bytes rule and of each format's
// quoting: NULL and empty keys and values, invalid UTF-8, text that looks
// like a hex literal, control characters, U+2028, separators and quotes,
// headers with NULL and empty values and an empty key, timestamps before
// 1970 and on a second's boundary.
func trickyRecords() []result.Record {
	return []result.Record{
		{Partition: 0, Offset: 0, Timestamp: 1767322245123, Key: []byte("k1"), Value: []byte(`{"a":1}`)},
		{Partition: 1, Offset: 7, Timestamp: 1767322245000, Key: nil, Value: nil},
		{Partition: 2, Offset: 9, Timestamp: -1, Key: []byte{}, Value: []byte{}},
		{Partition: 3, Offset: 1 << 40, Timestamp: -1001, Key: []byte{0xff, 0x00}, Value: []byte("x'ab'")},
		{Partition: 4, Offset: 5, Timestamp: 0, Key: []byte("a,b\"c"), Value: []byte("line\nbreak\ttab\\ \u2028 \x01 é")},
		{Partition: 5, Offset: 6, Timestamp: 253402300799999, Key: []byte(" lead"), Value: []byte(`\.`),
			Headers: []result.Header{{Key: "h", Value: []byte("v=1,2")}, {Key: "n", Value: nil}, {Key: "", Value: []byte{}}, {Key: "bin", Value: []byte{0x80}}}},
		// Decoded by the schema registry: JSON text, nested in json output.
		{Partition: 0, Offset: 1, Timestamp: 0, Key: []byte(`"k\"1"`), Value: []byte(`{"id":1,"amount":9.50,"note":null}`),
			KeySchema: result.WireSchema{ID: 1, HasID: true, Decoded: true}, ValueSchema: result.WireSchema{ID: 2, HasID: true, Decoded: true}},
	}
}

// A value the schema registry decoded is a JSON value in json and jsonl,
// the JSON text in csv (quoted as any text with quotes and commas).
func TestDecodedValuesNestInJSONAndAreTextElsewhere(t *testing.T) {
	rec := result.Record{Partition: 2, Offset: 3, Timestamp: 0, Key: []byte("k"), Value: []byte(`{"id":1,"amount":9.50}`),
		ValueSchema: result.WireSchema{ID: 7, HasID: true, Decoded: true}}
	for _, c := range []struct {
		f    Format
		want string
	}{
		{JSONL, `{"partition":2,"offset":3,"timestamp":"1970-01-01T00:00:00.000Z","key":"k","value":{"id":1,"amount":9.50},"headers":[]}` + "\n"},
		{CSV, "partition,offset,timestamp,key,value,headers\n2,3,1970-01-01T00:00:00.000Z,k,\"{\"\"id\"\":1,\"\"amount\"\":9.50}\",\"\"\n"},
	} {
		for _, rowPath := range []bool{false, true} {
			var out bytes.Buffer
			var res result.Result = &recordSlice{recs: []result.Record{rec}}
			if rowPath {
				res = rowsOnly{&recordSlice{recs: []result.Record{rec}}}
			}
			_, err := Render(&out, res, Options{Format: c.f})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != c.want {
				t.Fatalf("%s (row path %v):\n got %q\nwant %q", c.f, rowPath, out.String(), c.want)
			}
		}
	}
}

func TestRecordPathWritesWhatTheRowPathWrites(t *testing.T) {
	for _, f := range []Format{Table, JSON, JSONL, CSV, TSV, Expanded} {
		t.Run(string(f), func(t *testing.T) {
			var fast, slow bytes.Buffer
			opt := Options{Format: f, Footer: true}
			n1, err := Render(&fast, &recordSlice{recs: trickyRecords()}, opt)
			if err != nil {
				t.Fatal(err)
			}
			n2, err := Render(&slow, rowsOnly{&recordSlice{recs: trickyRecords()}}, opt)
			if err != nil {
				t.Fatal(err)
			}
			if n1 != n2 || fast.String() != slow.String() {
				t.Fatalf("record path (%d rows):\n%s\nrow path (%d rows):\n%s", n1, fast.String(), n2, slow.String())
			}
		})
	}
}

func TestTimeFormatterMatchesTimeLayout(t *testing.T) {
	var f timeFormatter
	for _, ms := range []int64{0, 1, 999, 1000, -1, -999, -1000, -1001, 1767322245123, 1767322245999, 1767322246000, 253402300799999, -62135596800000} {
		r := result.Record{Timestamp: ms}
		want := r.Time().Format(TimeLayout)
		if got := string(f.append(nil, ms)); got != want {
			t.Errorf("%d: got %s, want %s", ms, got, want)
		}
	}
}

// The record writers allocate nothing per record: a regression here is
// what made CONSUME several times slower than the wire.
func TestRecordWritersDoNotAllocatePerRecord(t *testing.T) {
	recs := make([]result.Record, 2000)
	for i := range recs {
		recs[i] = result.Record{Partition: int32(i % 32), Offset: int64(i), Timestamp: 1767322245000 + int64(i),
			Key: []byte("key-0042"), Value: []byte(`{"id":42,"p":3,"name":"abcdefghijklmnopqrstuvwxyz0123456789"}`),
			Headers: []result.Header{{Key: "trace", Value: []byte("abc")}}}
	}
	for _, f := range []Format{JSONL, JSON, CSV, TSV} {
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := Render(io.Discard, &recordSlice{recs: recs}, Options{Format: f}); err != nil {
				t.Fatal(err)
			}
		})
		// A render has a fixed cost (the output buffer, its flusher, the
		// encoder); per record it must be nothing.
		if per := allocs / float64(len(recs)); per > 0.02 {
			t.Errorf("%s: %.0f allocations for %d records (%.3f per record), want a fixed cost only", f, allocs, len(recs), per)
		}
	}
}

// liveResult is a FOLLOW-like result: a backlog, then rows that arrive
// one at a time through a channel.
type liveResult struct {
	backlog []result.Row
	arrive  chan result.Row
	i       int
	stats   result.Stats
}

func (l *liveResult) Columns() []result.Column {
	return []result.Column{{Name: "partition", Type: result.Int}, {Name: "value", Type: result.String}}
}
func (l *liveResult) Next() (result.Row, bool) {
	if l.i < len(l.backlog) {
		l.i++
		if l.i == len(l.backlog) {
			l.stats.SetLive(true) // known when the last backlog row is handed out
		}
		return l.backlog[l.i-1], true
	}
	l.stats.SetLive(true)
	row, ok := <-l.arrive
	return row, ok
}
func (l *liveResult) Stats() *result.Stats { return &l.stats }
func (l *liveResult) Err() error           { return nil }
func (l *liveResult) Close()               {}

// A table of a live result shows its backlog at once and each new row as
// it comes, in the widths of the first rows (a wider cell is cut).
func TestTableStreamsALiveResult(t *testing.T) {
	out := &syncBuffer{}
	res := &liveResult{backlog: []result.Row{{int64(0), "old-1"}, {int64(1), "old-2"}}, arrive: make(chan result.Row)}
	done := make(chan error, 1)
	go func() {
		_, err := Render(out, res, Options{Format: Table, Footer: true})
		done <- err
	}()
	waitFor := func(s string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), s) {
			if time.Now().After(deadline) {
				t.Fatalf("%q was not written while the result waited; output so far:\n%s", s, out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("old-2")
	res.arrive <- result.Row{int64(2), "new-1"}
	waitFor("new-1")
	res.arrive <- result.Row{int64(3), "a much wider value than the others"}
	close(res.arrive)
	require.NoError(t, <-done)
	require.Contains(t, out.String(), "a mu…", "a later, wider cell is cut to the frozen width:\n%s", out.String())
	require.Contains(t, out.String(), "(4 rows)")
}

// A computed number is a JSON number, and a NaN or infinity stays a
// string: JSON has no such number.
func TestNumberColumnsAreJSONNumbers(t *testing.T) {
	cols := []result.Column{{Name: "n", Type: result.Number}}
	rows := []result.Row{{"9.5"}, {"-12"}, {"1e+21"}, {"NaN"}, {"+Inf"}, {nil}}
	var out bytes.Buffer
	_, err := Render(&out, result.NewSlice(cols, rows), Options{Format: JSONL})
	require.NoError(t, err)
	require.Equal(t, "{\"n\":9.5}\n{\"n\":-12}\n{\"n\":1e+21}\n{\"n\":\"NaN\"}\n{\"n\":\"+Inf\"}\n{\"n\":null}\n", out.String())
}
