package render

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kql-dev/kql/result"
)

// trickyBytes are what a random key, value or header is made of, most of
// them bytes some writer treats apart: quotes, backslashes, separators,
// line breaks, control characters, bytes above ASCII alone (invalid
// UTF-8) and in runes (U+2028 and U+2029 among them), what the SWAR masks
// may name by mistake after a byte they look for ('#' after '"', ']' after
// '\\', '-' after ',', a space after a control character), and the pieces
// of a hex literal.
var trickyBytes = [][]byte{
	{'"'}, {'\\'}, {','}, {'\n'}, {'\r'}, {'\t'}, {0}, {0x01}, {0x0b}, {0x0c}, {0x0e}, {0x1f}, {0x7f},
	{' '}, {'#'}, {']'}, {'-'}, {'.'}, {'='}, {'x'}, {'X'}, {'\''}, {'a'}, {'F'}, {'0'}, {'9'},
	{0x80}, {0xbf}, {0xc0}, {0xc3}, {0xe2}, {0xed}, {0xf0}, {0xf4}, {0xff},
	[]byte("é"), []byte("日"), []byte("😀"), []byte("\u2028"), []byte("\u2029"), []byte("\u2027"), []byte("\u202a"),
	{0xe2, 0x80}, {0xed, 0xa0, 0x80}, {0xf4, 0x90, 0x80, 0x80}, []byte("\uFFFD"),
}

// randomText is a byte string biased toward trickyBytes, now and then a
// long plain run between them so the word loops see both.
func randomText(r *rand.Rand) []byte {
	switch r.IntN(12) {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		return []byte([]string{`x'ab'`, `X'00FF'`, `x''`, `x'g'`, `\.`, " lead", "\tlead", `x'ab`}[r.IntN(8)])
	}
	n := r.IntN(40)
	if r.IntN(10) == 0 {
		n = 100 + r.IntN(400)
	}
	var b []byte
	for len(b) < n {
		if r.IntN(3) == 0 {
			b = append(b, trickyBytes[r.IntN(len(trickyBytes))]...)
		} else {
			run := r.IntN(20)
			for range run {
				b = append(b, byte('a'+r.IntN(26)))
			}
		}
	}
	return b
}

func randomRecord(r *rand.Rand, ts int64) result.Record {
	rec := result.Record{Partition: int32(r.IntN(64)) - 1, Offset: r.Int64N(1 << 40), Timestamp: ts,
		Key: randomText(r), Value: randomText(r)}
	if r.IntN(20) == 0 {
		rec.Offset = math.MinInt64 + r.Int64N(10)
	}
	for range r.IntN(4) {
		h := result.Header{Key: string(randomText(r)), Value: randomText(r)}
		rec.Headers = append(rec.Headers, h)
	}
	if r.IntN(10) == 0 {
		rec.KeySchema.Decoded = true
	}
	if r.IntN(10) == 0 {
		rec.ValueSchema.Decoded = true
	}
	return rec
}

// randomTimestamp walks: mostly a few milliseconds on (the same second,
// or the next), now and then a jump anywhere, to the edges of the years
// TimeLayout writes in four digits, before 1970 or to the ends of int64.
func randomTimestamp(r *rand.Rand, ts int64) int64 {
	switch r.IntN(20) {
	case 0:
		return r.Int64N(1<<45) - 1<<44
	case 1:
		return []int64{math.MinInt64, math.MaxInt64, minTextSec * 1000, minTextSec*1000 - 1, maxTextSec*1000 + 999,
			maxTextSec*1000 + 1000, -1, 0, -1000, -1001, -62135596800000}[r.IntN(11)]
	case 2:
		return int64(r.Uint64())
	}
	return ts + r.Int64N(70) - 5
}

// The new record encoders write, byte for byte, what the old ones wrote
// (oldencoders_test.go), for random records whose keys, values and
// headers are mostly the bytes some writer treats apart, encoded one after
// another with one encoder, as a lane does.
func TestRecordEncodersMatchTheOldOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(22, uint64(time.Now().UnixNano())))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for _, c := range []struct {
		name     string
		new, old func() result.RecordEncoder
	}{
		{"jsonl", newJSONLEncoder, newOldJSONLEncoder},
		{"csv", newCSVEncoder, newOldCSVEncoder},
		{"tsv", newTSVEncoder, newOldTSVEncoder},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc, ref := c.new(), c.old()
			var got, want []byte
			ts := int64(1796608816865)
			for i := range n {
				ts = randomTimestamp(r, ts)
				rec := randomRecord(r, ts)
				// Sometimes into a buffer without room, sometimes after
				// others' bytes, as a lane's chunk fills.
				if i%7 == 0 {
					got, want = nil, nil
				}
				g0, w0 := len(got), len(want)
				got = enc(got, &rec)
				want = ref(want, &rec)
				if !bytes.Equal(got[g0:], want[w0:]) {
					t.Fatalf("record %+v:\n got %q\nwant %q", rec, got[g0:], want[w0:])
				}
			}
		})
	}
}

func TestTimeFormatterMatchesTheOldOne(t *testing.T) {
	r := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	var f timeFormatter
	var o oldTimeFormatter
	ts := int64(0)
	for range 200000 {
		ts = randomTimestamp(r, ts)
		got, want := f.append([]byte("p"), ts), o.append([]byte("p"), ts)
		if !bytes.Equal(got, want) {
			t.Fatalf("%d: got %s, want %s", ts, got, want)
		}
	}
	// Every day boundary of the four-digit years, from both sides.
	for day := int64(minTextSec / 86400); day <= maxTextSec/86400+1; day += 1 + r.Int64N(40) {
		for _, ms := range []int64{day*86400000 - 1, day * 86400000, day*86400000 + 999} {
			got, want := f.append(nil, ms), o.append(nil, ms)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d: got %s, want %s", ms, got, want)
			}
		}
	}
}

// The CSV and TSV field writers with the UTF-8 check in their pass write
// what the bytes rule and the old field writers wrote.
func TestCSVAndTSVFieldsMatchTheOldOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, uint64(time.Now().UnixNano())))
	var e oldRecordEncoder
	for range 100000 {
		s := randomText(r)
		if s == nil {
			continue
		}
		prefix := []byte("ab")[:r.IntN(3)]
		for _, c := range []struct {
			name  string
			field func(buf, s []byte) []byte
			old   func(buf, s []byte) []byte
			valid func(buf, s []byte) ([]byte, bool)
		}{
			{"csv", appendCSVField, oldAppendCSVField, appendCSVValid},
			{"tsv", appendTSVField, oldAppendTSVField, appendTSVValid},
		} {
			want := c.old(bytes.Clone(prefix), e.text(s))
			if got := c.field(bytes.Clone(prefix), e.text(s)); !bytes.Equal(got, want) {
				t.Fatalf("%s field %q: got %q, want %q", c.name, s, got, want)
			}
			got, ok := c.valid(bytes.Clone(prefix), s)
			switch {
			case ok != utf8.Valid(s):
				t.Fatalf("%s valid %q: ok %v, utf8.Valid %v", c.name, s, ok, utf8.Valid(s))
			case ok && !bytes.Equal(got, c.old(bytes.Clone(prefix), s)):
				t.Fatalf("%s valid %q: got %q, want %q", c.name, s, got, c.old(bytes.Clone(prefix), s))
			case !ok && !bytes.Equal(got, prefix):
				t.Fatalf("%s valid %q failed and left %q", c.name, s, got)
			}
		}
	}
}
