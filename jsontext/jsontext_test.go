package jsontext

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kql-dev/kql/internal/benchcpu"
)

// needsLook must flag exactly the words holding a byte AppendString
// cannot copy as it is; the byte-by-byte table is the reference.
func TestNeedsLookAgreesWithTheTable(t *testing.T) {
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 8; pos++ {
			w := []byte("abcdefgh")
			w[pos] = byte(b)
			var x uint64
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			want := !jsonPlain[b]
			if got := needsLook(x); got != want {
				t.Fatalf("byte %#x at %d: needsLook %v, want %v", b, pos, got, want)
			}
		}
	}
}

// refString is AppendString byte by byte, without the eight-byte loop:
// the reference the fast one must match.
func refString(buf, s []byte) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case jsonPlain[c]:
				buf = append(buf, c)
			case c == '"' || c == '\\':
				buf = append(buf, '\\', c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}

func checkString(t *testing.T, s []byte) {
	t.Helper()
	for _, prefix := range [][]byte{nil, []byte("ab"), make([]byte, 3, 5)} {
		want := refString(bytes.Clone(prefix), s)
		if got := AppendString(bytes.Clone(prefix), s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q, %q) = %q, want %q", prefix, s, got, want)
		}
		got, ok := AppendValidString(bytes.Clone(prefix), s)
		switch {
		case ok != utf8.Valid(s):
			t.Fatalf("AppendValidString(%q): ok %v, utf8.Valid %v", s, ok, utf8.Valid(s))
		case ok && !bytes.Equal(got, want):
			t.Fatalf("AppendValidString(%q, %q) = %q, want %q", prefix, s, got, want)
		case !ok && !bytes.Equal(got, prefix):
			t.Fatalf("AppendValidString(%q, %q) failed but left %q, want the buffer as given", prefix, s, got)
		}
	}
}

func TestAppendStringMatchesTheReference(t *testing.T) {
	cases := []string{"", "a", "plain ascii, longer than eight bytes", `{"id":1,"p":1,"name":"user-1-abc"}`,
		"\x00\x01\x1f\x7f", "tab\there\nnew\rline", `back\slash "quote"`, "é ü 日本 😀", "a\u2028b\u2029c",
		"\xff", "ok\xffok", "\xe2\x80", strings.Repeat(`"`, 100), strings.Repeat("\x01", 300)}
	for _, c := range cases {
		checkString(t, []byte(c))
	}
	// Every byte at every offset of a 20-byte run, so each lands inside,
	// before and after a word of the eight-byte loop.
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 20; pos++ {
			s := []byte("abcdefghijklmnopqrst")
			s[pos] = byte(b)
			checkString(t, s)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add([]byte(`{"a":"b\n"}`))
	f.Add([]byte("\xe2\x80\xa8\xff"))
	f.Fuzz(func(t *testing.T, s []byte) { checkString(t, s) })
}

// A bench topic's value: 100 B of JSON, a quote every few bytes.
func BenchmarkAppendStringJSONValue(b *testing.B) {
	v := []byte(`{"id":123456,"p":6,"name":"user-123456-mnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrs"}`)
	benchString(b, v)
}

func benchString(b *testing.B, v []byte) {
	buf := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(v)))
	defer benchcpu.Report(b)()
	for b.Loop() {
		if len(buf) > 60<<10 {
			buf = buf[:0]
		}
		buf = AppendString(buf, v)
	}
}

// lookMask's lowest set bit must be the first byte of the word that is not
// plain: AppendString skips the bytes below it unseen.
func TestLookMaskNamesTheFirstByte(t *testing.T) {
	for a := 0; a < 256; a++ {
		for b := 0; b < 256; b += 7 {
			for pa := 0; pa < 8; pa++ {
				w := []byte("abcdefgh")
				w[pa] = byte(a)
				w[(pa+3)%8] = byte(b)
				first := 8
				for i, c := range w {
					if !jsonPlain[c] {
						first = i
						break
					}
				}
				m := lookMask(binary.LittleEndian.Uint64(w))
				got := 8
				if m != 0 {
					got = bits.TrailingZeros64(m) >> 3
				}
				if got != first {
					t.Fatalf("%q: lookMask names byte %d, the first to look at is %d", w, got, first)
				}
			}
		}
	}
}

// A bench topic's key.
func BenchmarkAppendStringShortKey(b *testing.B) { benchString(b, []byte("k123456")) }

// Text with nothing to escape.
func BenchmarkAppendStringPlainText(b *testing.B) {
	benchString(b, []byte("The quick brown fox jumps over the lazy dog, then naps in the afternoon sun for an hour or two."))
}

// Text above ASCII: the rune path.
func BenchmarkAppendStringUnicode(b *testing.B) {
	benchString(b, []byte("Grüße aus Köln, 東京から今日は, naïve café — ünïcödé text that mixes scripts: Ελληνικά, русский."))
}

// Pretty-printed JSON: newlines and indentation among the quotes.
func BenchmarkAppendStringPrettyJSON(b *testing.B) {
	benchString(b, []byte("{\n  \"id\": 123456,\n  \"p\": 6,\n  \"tags\": [\"a\", \"b\"],\n  \"path\": \"C:\\\\tmp\\\\x\"\n}"))
}
