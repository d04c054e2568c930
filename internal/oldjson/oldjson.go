// Package oldjson is kql's JSON string writer as it was before issue 22's
// second round (one look per byte that needs one): the reference that the
// word-at-a-time writer of jsontext and the record encoders of render are
// compared with, byte for byte, in their differential tests. Only tests
// import it; it is a package so that both tests share one copy, which uses
// nothing of the code it checks.
package oldjson

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string as the old writer did; with
// check, ok is false and buf comes back as given when s is not UTF-8.
func AppendString(buf, s []byte, check bool) ([]byte, bool) {
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
			if plain[c] {
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

func lookMask(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	less20 := (w - lo*0x20) &^ w
	quote := w ^ (lo * '"')
	backslash := w ^ (lo * '\\')
	return (less20 | (quote-lo)&^quote | (backslash-lo)&^backslash | w) & hi
}

var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
