package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// record is what a consumer should see: nil means NULL.
type record struct {
	Key, Value []byte
	Headers    []kgo.RecordHeader
}

// awkward records: every kind of byte string the formats must keep apart.
var awkward = []record{
	{Key: []byte("plain"), Value: []byte(`{"a":1}`), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("1")}, {Key: "h", Value: []byte("2")}}},
	{Key: nil, Value: nil},                            // null key, tombstone
	{Key: []byte{}, Value: []byte{}},                  // empty, not null
	{Key: []byte{0x00, 0xff}, Value: []byte("x'ab'")}, // binary; text that looks like a hex literal
	{Key: []byte(`comma,"quote"`), Value: []byte("line1\nline2\ttab, \\ back\r\n"),
		Headers: []kgo.RecordHeader{{Key: "", Value: nil}, {Key: "k=v,", Value: []byte(`a,b=c\`)}, {Key: "empty", Value: []byte{}}}},
	{Key: []byte("ünïcode ✓"), Value: []byte{0xc3, 0x28}}, // invalid UTF-8
	{Key: []byte("NULL"), Value: []byte("null")},          // the words, not the values
}

func startAwkwardCluster(t *testing.T) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.CreateTopic("awkward", 1, nil); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("awkward"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, r := range awkward {
		rec := &kgo.Record{Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: scriptBase.Add(time.Duration(i) * time.Second)}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return strings.Join(c.ListenAddrs(), ",")
}

func runKQL(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main(args, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("kql %q exited %d:\n%s", args, code, errOut.String())
	}
	return out.String()
}

// fromText undoes the bytes rule: x'…' is hex, anything else is the text.
func fromText(t *testing.T, s string) []byte {
	t.Helper()
	if looksHexLiteral(s) {
		b, err := hex.DecodeString(s[2 : len(s)-1])
		if err != nil {
			t.Fatalf("bad hex literal %q: %v", s, err)
		}
		return b
	}
	return []byte(s)
}

func looksHexLiteral(s string) bool {
	if len(s) < 3 || (s[0] != 'x' && s[0] != 'X') || s[1] != '\'' || s[len(s)-1] != '\'' {
		return false
	}
	_, err := hex.DecodeString(s[2 : len(s)-1])
	return err == nil
}

func TestJSONLParsesBackToTheProducedBytes(t *testing.T) {
	boot := startAwkwardCluster(t)
	out := runKQL(t, "-b", boot, "--format", "jsonl", "-e", "CONSUME awkward LIMIT 100;")
	var got []record
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var row struct {
			Partition *int64
			Offset    *int64
			Timestamp string
			Key       *string
			Value     *string
			Headers   []struct {
				Key   string
				Value *string
			}
		}
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if row.Partition == nil || row.Offset == nil || row.Timestamp == "" {
			t.Fatalf("missing partition, offset or timestamp: %s", sc.Text())
		}
		want := scriptBase.Add(time.Duration(*row.Offset) * time.Second).Format("2006-01-02T15:04:05.000Z")
		if row.Timestamp != want {
			t.Errorf("offset %d: timestamp %s, want %s", *row.Offset, row.Timestamp, want)
		}
		r := record{}
		if row.Key != nil {
			r.Key = fromText(t, *row.Key)
		}
		if row.Value != nil {
			r.Value = fromText(t, *row.Value)
		}
		for _, h := range row.Headers {
			hh := kgo.RecordHeader{Key: string(fromText(t, h.Key))}
			if h.Value != nil {
				hh.Value = fromText(t, *h.Value)
			}
			r.Headers = append(r.Headers, hh)
		}
		got = append(got, r)
	}
	compareRecords(t, got)
}

func TestCSVParsesBackToTheProducedBytes(t *testing.T) {
	boot := startAwkwardCluster(t)
	out := runKQL(t, "-b", boot, "--format", "csv", "-e", "CONSUME awkward LIMIT 100;")
	rows := parseCSV(t, out)
	if len(rows) == 0 || strings.Join(rows[0].text(), ",") != "partition,offset,timestamp,key,value,headers" {
		t.Fatalf("header row: %v", rows)
	}
	var got []record
	for _, row := range rows[1:] {
		if len(row) != 6 {
			t.Fatalf("row with %d fields: %v", len(row), row)
		}
		r := record{Key: row[3].bytes(t), Value: row[4].bytes(t)}
		if !row[5].null() {
			r.Headers = parseHeadersText(t, row[5].s)
		}
		got = append(got, r)
	}
	compareRecords(t, got)
}

func compareRecords(t *testing.T, got []record) {
	t.Helper()
	if len(got) != len(awkward) {
		t.Fatalf("got %d records, want %d", len(got), len(awkward))
	}
	for i := range awkward {
		w, g := awkward[i], got[i]
		if !sameBytes(w.Key, g.Key) || !sameBytes(w.Value, g.Value) || !sameHeaders(w.Headers, g.Headers) {
			t.Errorf("record %d:\n got  %s\n want %s", i, show(g), show(w))
		}
	}
}

// sameBytes tells nil (NULL) from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func sameHeaders(a, b []kgo.RecordHeader) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || !sameBytes(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

func show(r record) string {
	q := func(b []byte) string {
		if b == nil {
			return "NULL"
		}
		return fmt.Sprintf("%q", b)
	}
	var hs []string
	for _, h := range r.Headers {
		hs = append(hs, fmt.Sprintf("%q=%s", h.Key, q(h.Value)))
	}
	return fmt.Sprintf("key %s value %s headers [%s]", q(r.Key), q(r.Value), strings.Join(hs, " "))
}

// csvField is one field and whether it was quoted: RFC 4180 readers such as
// encoding/csv lose that, and it is what tells NULL (empty, unquoted) from
// the empty string ("").
type csvField struct {
	s      string
	quoted bool
}

func (f csvField) null() bool { return f.s == "" && !f.quoted }

func (f csvField) bytes(t *testing.T) []byte {
	if f.null() {
		return nil
	}
	return fromText(t, f.s)
}

type csvRow []csvField

func (r csvRow) text() []string {
	var out []string
	for _, f := range r {
		out = append(out, f.s)
	}
	return out
}

func parseCSV(t *testing.T, s string) []csvRow {
	t.Helper()
	var rows []csvRow
	var row csvRow
	i := 0
	for i < len(s) {
		var f csvField
		if s[i] == '"' {
			f.quoted = true
			i++
			var b strings.Builder
			for {
				if i >= len(s) {
					t.Fatalf("unterminated quoted field in %q", s)
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
			f.s = b.String()
		} else {
			j := i
			for j < len(s) && s[j] != ',' && s[j] != '\n' {
				j++
			}
			f.s = strings.TrimSuffix(s[i:j], "\r")
			i = j
		}
		row = append(row, f)
		if i >= len(s) {
			rows = append(rows, row)
			break
		}
		switch s[i] {
		case ',':
			i++
		case '\n':
			rows = append(rows, row)
			row = nil
			i++
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				rows = append(rows, row)
				row = nil
				i += 2
			}
		default:
			t.Fatalf("junk after quoted field at %d: %q", i, s[i:])
		}
	}
	return rows
}

// parseHeadersText reads the headers text form back: entries split on ", ",
// key=value or key alone (null value), \\ \, \= escapes, x” an empty key.
func parseHeadersText(t *testing.T, s string) []kgo.RecordHeader {
	t.Helper()
	var out []kgo.RecordHeader
	if s == "" {
		return nil
	}
	var entries []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			cur.WriteByte(s[i])
			cur.WriteByte(s[i+1])
			i++
		case s[i] == ',' && i+1 < len(s) && s[i+1] == ' ':
			entries = append(entries, cur.String())
			cur.Reset()
			i++
		default:
			cur.WriteByte(s[i])
		}
	}
	entries = append(entries, cur.String())
	for _, e := range entries {
		// split on the first unescaped '='
		key, val, hasVal := "", "", false
		for i := 0; i < len(e); i++ {
			if e[i] == '\\' {
				i++
				continue
			}
			if e[i] == '=' {
				key, val, hasVal = e[:i], e[i+1:], true
				break
			}
		}
		if !hasVal {
			key = e
		}
		h := kgo.RecordHeader{Key: string(fromText(t, unescapeHeader(key)))}
		if hasVal {
			h.Value = fromText(t, unescapeHeader(val))
			if h.Value == nil {
				h.Value = []byte{}
			}
		}
		out = append(out, h)
	}
	return out
}

func unescapeHeader(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
