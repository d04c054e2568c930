package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// fastLines are jsonl lines at the corners of what the fast path reads or
// gives up on: each must read as jsonRecord reads it.
var fastLines = []string{
	`{}`, ` { } `, `{"key":null,"value":null,"headers":null,"timestamp":null,"partition":null,"offset":null}`,
	`{"partition":0,"offset":0,"timestamp":"2026-12-01T14:50:22.154Z","key":"k0","value":"{\"id\":0}","headers":[]}`,
	`{"headers":[{"key":"a","value":"1"},{"value":null,"key":"a"},{"key":"b"}],"value":"v"}`,
	`{"headers":[{"key":"x'61'","value":"x'00ff'"}]}`, `{"headers":[{"key":"a","value":"1","x":2}]}`,
	`{"headers":[{"key":"a","key":"b"}]}`, `{"headers":[{"value":"1"}]}`, `{"headers":[null]}`, `{"headers":[{"key":null}]}`,
	`{"headers":[{"key":1}]}`, `{"headers":[{"key":"a","value":{"b":1}}]}`, `{"headers":{}}`, `{"headers":[{"key":"\ud83d\ude00"}]}`,
	`{"key":"","value":"","headers":[{"key":"","value":""}]}`, `{"key":"x'0'"}`, `{"key":"x'zz'"}`, `{"key":"X'AB'"}`, `{"key":"x''"}`, `{"key":"\u0078'ab'"}`, `{"value":{"a":[1,2]}}`,
	`{"value":12.5}`, `{"value":true}`, `{"value":"tab\there\nnl \"q\" \\ \/ \b\f\r \u00e9\u20ac\u0000"}`, `{"value":"\ud800"}`,
	`{"value":"\x"}`, `{"value":"caf` + "\xc3\xa9" + `"}`, `{"value":"bad` + "\xff" + `"}`, `{"value":"ctl` + "\x01" + `"}`,
	`{"partition":01}`, `{"partition":-1}`, `{"partition":1.0}`, `{"partition":1e2}`, `{"partition":2147483647}`, `{"partition":2147483648}`,
	`{"partition":"1"}`, `{"offset":-5}`, `{"offset":1.5}`, `{"offset":{"a":1}}`, `{"offset":99999999999999999999}`,
	`{"timestamp":1767225600123}`, `{"timestamp":-1500}`, `{"timestamp":1.5}`, `{"timestamp":12345678901234567890}`,
	`{"timestamp":"2026-02-29T00:00:00Z"}`, `{"timestamp":"2028-02-29T23:59:59.999Z"}`, `{"timestamp":"2026-13-01T00:00:00Z"}`,
	`{"timestamp":"2026-01-01T24:00:00Z"}`, `{"timestamp":"2026-01-01T00:00:60Z"}`, `{"timestamp":"2026-01-01T00:00:00.5Z"}`,
	`{"timestamp":"2026-01-01T00:00:00.123456789Z"}`, `{"timestamp":"2026-01-01T00:00:00+02:00"}`, `{"timestamp":"yesterday"}`,
	`{"timestamp":"0000-01-01T00:00:00.000Z"}`, `{"valeu":"a"}`, `{"key":"a",}`, `{"key":"a"} x`, `{"key":"a"}}`, `[1]`, `"s"`, `{"key"`,
	`{"key":"a","key":"b"}`, `{"headers":[{"key":"a"}],"headers":[]}`, "{\t\"key\" :\r\n\"a\" , \"value\":\"b\"}", `{"k\u0065y":"a"}`,
}

// The fast path reads every line it accepts exactly as jsonRecord does, and
// gives up on every line jsonRecord refuses.
func TestFastJSONLAgreesWithGeneral(t *testing.T) {
	lines := append([]string{}, fastLines...)
	// And kql's own export of the awkward records and of random ones.
	recs := append([]result.Record{}, awkward...)
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func() []byte {
		if rng.IntN(8) == 0 {
			return nil
		}
		b := make([]byte, rng.IntN(12))
		for i := range b {
			switch rng.IntN(4) {
			case 0:
				b[i] = byte(rng.IntN(256))
			case 1:
				b[i] = `"\x'{}`[rng.IntN(6)]
			default:
				b[i] = byte('a' + rng.IntN(26))
			}
		}
		return b
	}
	for i := range 2000 {
		r := result.Record{Partition: int32(rng.IntN(100)), Offset: int64(i), Timestamp: rng.Int64N(4e12) - 1e12, Key: randBytes(), Value: randBytes()}
		for range rng.IntN(3) {
			r.Headers = append(r.Headers, result.Header{Key: string(randBytes()), Value: randBytes()})
		}
		recs = append(recs, r)
	}
	var out bytes.Buffer
	_, err := render.Render(&out, &recordSlice{recs: recs}, render.Options{Format: render.JSONL})
	require.NoError(t, err)
	lines = append(lines, strings.Split(strings.TrimSpace(out.String()), "\n")...)
	fast := 0
	for i, line := range lines {
		if agreeFastGeneral(t, line) {
			fast++
		}
		if i >= len(fastLines) { // kql's own order: both name the same columns
			var s slab
			got := Record{Line: 1}
			require.True(t, fastJSONL([]byte(line), &s, &got), "%q", line)
			want, err := (&Reader{name: "in.jsonl"}).jsonRecord([]byte(line), origin{1, 1})
			require.NoError(t, err)
			require.Equal(t, want.Cols, got.Cols, "%q", line)
			require.Equal(t, Columns{Partition: 2, Timestamp: int32(strings.Index(line, `"timestamp"`) + 1), Key: int32(strings.Index(line, `"key"`) + 1), Value: int32(strings.Index(line, `"value"`) + 1)}, got.Cols)
		}
	}
	require.Greater(t, fast, len(lines)/2, "the fast path reads kql's own export")
}

func agreeFastGeneral(t *testing.T, line string) bool {
	t.Helper()
	gen := &Reader{name: "in.jsonl", f: JSONL}
	want, werr := gen.jsonRecord([]byte(line), origin{1, 1})
	var s slab
	got := Record{Line: 1}
	if !fastJSONL([]byte(line), &s, &got) {
		return false
	}
	require.NoError(t, werr, "the fast path accepts %q, which jsonRecord refuses", line)
	require.Equal(t, want.Partition, got.Partition, "%q", line)
	require.True(t, want.Timestamp.Equal(got.Timestamp), "%q: %v vs %v", line, want.Timestamp, got.Timestamp)
	require.Equal(t, want.Timestamp.Location(), got.Timestamp.Location(), "%q", line)
	require.Equal(t, want.Key, got.Key, "%q key", line)
	require.Equal(t, want.Value, got.Value, "%q value", line)
	// require.Equal holds nil and empty bytes equal; Kafka does not (NULL
	// is a tombstone, "" an empty value).
	require.Equal(t, want.Key == nil, got.Key == nil, "%q: key NULL in one reader only", line)
	require.Equal(t, want.Value == nil, got.Value == nil, "%q: value NULL in one reader only", line)
	require.Equal(t, want.Headers, got.Headers, "%q headers", line)
	return true
}

func FuzzFastJSONLAgreesWithGeneral(f *testing.F) {
	for _, l := range fastLines {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		agreeFastGeneral(t, line)
	})
}

// Scan in lanes hands over every record in input order with its line, and
// stops at the first bad line, after the records before it.
func TestParallelScanKeepsOrderAndTheFirstBadLine(t *testing.T) {
	var in bytes.Buffer
	const n = 30000
	long := strings.Repeat("v", 3*chunkSize) // a line longer than a chunk
	for i := range n {
		v := fmt.Sprint(i)
		if i == 7777 {
			v = long
		}
		if i%1000 == 0 {
			in.WriteString("\r\n   \n") // blank lines count as lines
		}
		fmt.Fprintf(&in, `{"key":"k%d","value":"%s","timestamp":%d}`+"\r\n", i, v, i)
	}
	data := in.Bytes()
	for _, keep := range []bool{false, true} {
		var got []Record
		err := Scan(context.Background(), bytes.NewReader(data), "in.jsonl", JSONL, Options{}, ScanConfig{Parallel: true, KeepBytes: keep}, func(b *Batch) error {
			for _, r := range b.Records {
				if keep {
					got = append(got, r)
				} else {
					got = append(got, Record{Line: r.Line, Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value), Timestamp: r.Timestamp})
				}
			}
			return nil
		})
		require.NoError(t, err)
		require.Len(t, got, n)
		line := 0
		for i, r := range got {
			line++
			if i%1000 == 0 {
				line += 2
			}
			require.Equal(t, fmt.Sprintf("k%d", i), string(r.Key))
			require.Equal(t, line, r.Line, "record %d", i)
			require.Equal(t, time.UnixMilli(int64(i)), r.Timestamp)
			if i == 7777 {
				require.Equal(t, long, string(r.Value))
			}
		}
	}
	// A bad line late in the input: the error is that line's, after every
	// record before it; a bad line that comes later too does not win.
	bad := bytes.Replace(data, []byte(`"k20000"`), []byte(`"x'0'"`), 1)
	bad = bytes.Replace(bad, []byte(`"k29000"`), []byte(`"k29000",`), 1)
	count := 0
	err := Scan(context.Background(), bytes.NewReader(bad), "in.jsonl", JSONL, Options{}, ScanConfig{Parallel: true}, func(b *Batch) error {
		count += len(b.Records)
		return nil
	})
	var ie *Error
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, 20001+2*21, ie.Line, "%v", err)
	require.Equal(t, "key", ie.Field)
	require.Equal(t, 20000, count)
	// fn's error stops the scan.
	stop := errors.New("stop")
	err = Scan(context.Background(), bytes.NewReader(data), "in.jsonl", JSONL, Options{}, ScanConfig{Parallel: true}, func(b *Batch) error { return stop })
	require.ErrorIs(t, err, stop)
}

// The fast path skips a string's plain bytes 8 at a time: a quote, an
// escape, a control byte or a non-ASCII byte at any place of a long
// string, and a string that ends at any place of a word, must read as
// jsonRecord reads it.
func TestFastJSONLStringsAtEveryWordOffset(t *testing.T) {
	specials := []string{`\"`, `\\`, `\n`, `\u00e9`, "\xc3\xa9", "\xff", "\x01", "\x7f", `"`}
	for n := 0; n <= 24; n++ {
		plain := strings.Repeat("abcdefgh", 4)[:n]
		agreeFastGeneral(t, `{"value":"`+plain+`"}`)
		for _, sp := range specials {
			for at := 0; at <= n; at++ {
				agreeFastGeneral(t, `{"key":"k","value":"`+plain[:at]+sp+plain[at:]+`x"}`)
			}
		}
	}
}
