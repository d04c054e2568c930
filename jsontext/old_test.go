package jsontext

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unicode/utf8"
)

// oldAppendString is appendString as it was before issue 22's second
// round, one look per byte that needs one: the reference the word-at-a-time
// writer must match byte for byte, also on bytes that are not UTF-8 (which
// AppendString copies as they are).
func oldAppendString(buf, s []byte, check bool) ([]byte, bool) {
	n := len(buf)
	dst := slices.Grow(buf, len(s)+16)
	dst = dst[:cap(dst)]
	j := n
	dst[j] = '"'
	j++
	for i := 0; i < len(s); {
		// Room for a word, plus up to seven plain bytes before an escape
		// (at most six bytes) or a rune (at most four).
		if len(dst)-j < 16 {
			dst = slices.Grow(dst[:j], len(s)-i+16)
			dst = dst[:cap(dst)]
		}
		if i+8 <= len(s) {
			// Eight bytes at a time while none needs a look (SWAR): most
			// of a record is plain ASCII. A word that holds one says which
			// byte is the first, and the bytes before it are kept.
			w := binary.LittleEndian.Uint64(s[i:])
			binary.LittleEndian.PutUint64(dst[j:], w)
			m := lookMask(w)
			if m == 0 {
				i += 8
				j += 8
				continue
			}
			k := bits.TrailingZeros64(m) >> 3
			i += k
			j += k
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				dst[j] = c
				j++
				i++
				continue
			}
			dst[j] = '\\'
			switch c {
			case '"', '\\':
				dst[j+1] = c
				j += 2
			case '\n':
				dst[j+1] = 'n'
				j += 2
			case '\r':
				dst[j+1] = 'r'
				j += 2
			case '\t':
				dst[j+1] = 't'
				j += 2
			default:
				dst[j+1], dst[j+2], dst[j+3], dst[j+4], dst[j+5] = 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]
				j += 6
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case check && r == utf8.RuneError && size == 1:
			return buf[:n], false
		case r == '\u2028' || r == '\u2029':
			dst[j], dst[j+1], dst[j+2], dst[j+3], dst[j+4], dst[j+5] = '\\', 'u', '2', '0', '2', hexDigits[r&0xf]
			j += 6
		default:
			j += copy(dst[j:], s[i:i+size])
		}
		i += size
	}
	if j == len(dst) {
		dst = slices.Grow(dst[:j], 1)
		dst = dst[:cap(dst)]
	}
	dst[j] = '"'
	return dst[:j+1], true
}

// tricky are what the random strings are mostly made of: every byte a
// JSON string escapes or checks, the bytes the masks may name by mistake
// after one ('#' after '"', ']' after '\\', a space after a control
// character), runes of every length, U+2028 and U+2029 and their
// neighbours, and broken sequences.
var tricky = [][]byte{
	{'"'}, {'\\'}, {'\n'}, {'\r'}, {'\t'}, {0}, {0x01}, {0x08}, {0x0c}, {0x1f}, {0x7f}, {' '}, {'#'}, {']'}, {'/'}, {'<'},
	{0x80}, {0xbf}, {0xc0}, {0xc1}, {0xc3}, {0xe2}, {0xed}, {0xf0}, {0xf4}, {0xf5}, {0xff},
	[]byte("é"), []byte("日"), []byte("😀"), []byte("\u2028"), []byte("\u2029"), []byte("\u2027"), []byte("\u202a"),
	{0xe2, 0x80}, {0xe2, 0x80, 0xa8}, {0xed, 0xa0, 0x80}, {0xf4, 0x90, 0x80, 0x80}, {0xef, 0xbf, 0xbd},
}

func randomString(r *rand.Rand) []byte {
	n := r.IntN(24)
	if r.IntN(8) == 0 {
		n = r.IntN(600)
	}
	var b []byte
	for len(b) < n {
		if r.IntN(3) == 0 {
			b = append(b, tricky[r.IntN(len(tricky))]...)
			continue
		}
		for range r.IntN(17) {
			b = append(b, byte(' '+r.IntN(95)))
		}
	}
	return b
}

// The word-at-a-time writer writes what the old one wrote, for random
// strings biased toward the bytes that need a look, after prefixes with
// and without spare room.
func TestJSONStringEncodingMatchesTheOldOne(t *testing.T) {
	r := rand.New(rand.NewPCG(22, uint64(time.Now().UnixNano())))
	for range 200000 {
		s := randomString(r)
		var prefix []byte
		switch r.IntN(3) {
		case 1:
			prefix = []byte("ab")
		case 2:
			prefix = make([]byte, r.IntN(5), 5+r.IntN(200))
		}
		want, wantOK := oldAppendString(bytes.Clone(prefix), s, false)
		if got := AppendString(bytes.Clone(prefix), s); !wantOK || !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q, %q) = %q, want %q", prefix, s, got, want)
		}
		want, wantOK = oldAppendString(bytes.Clone(prefix), s, true)
		got, ok := AppendValidString(bytes.Clone(prefix), s)
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("AppendValidString(%q, %q) = %q, %v, want %q, %v", prefix, s, got, ok, want, wantOK)
		}
	}
}
