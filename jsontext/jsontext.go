// Package jsontext writes JSON text fast: the string escaping shared by the
// renderers and the schema registry decoders, which both sit in the inner
// loop of every record written.
package jsontext

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s, which must be valid UTF-8, as a JSON string. Control characters are escaped, and so are U+2028
// and U+2029, which JavaScript does not accept raw in a string. Runs of
// bytes that need nothing are copied whole: this is the inner loop of every
// JSON record written.
func AppendString(buf, s []byte) []byte {
	out, _ := appendString(buf, s, false)
	return out
}

// AppendValidString is AppendString for bytes that may not be UTF-8, with
// the check in the same pass (the renderers wrote a value after a
// utf8.Valid pass over it): ok is false, and buf comes back as it was
// given, when s is not valid UTF-8.
func AppendValidString(buf, s []byte) (out []byte, ok bool) {
	return appendString(buf, s, true)
}

// appendString stores into buf's spare capacity directly, eight bytes at a
// time even when some of them need a look (those are then overwritten):
// an append per run between escapes, a memmove call each, was most of a
// record's encoding, since a JSON value has a quote every few bytes.
func appendString(buf, s []byte, check bool) ([]byte, bool) {
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

// needsLook reports whether any of the eight bytes in w is a control
// character, a quote, a backslash or not ASCII: the bytes a JSON string
// cannot take as they are, or must check as UTF-8.
func needsLook(w uint64) bool { return lookMask(w) != 0 }

// lookMask has the high bit of each byte of w that needsLook means set, and
// perhaps of some bytes above the first such byte, never below it: the
// classic has-less-than and has-byte tests of "Bit Twiddling Hacks" are
// exact up to the first byte they find (a borrow only moves upward), so the
// lowest set bit names the first byte that needs a look.
func lookMask(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	less20 := (w - lo*0x20) &^ w
	quote := w ^ (lo * '"')
	backslash := w ^ (lo * '\\')
	return (less20 | (quote-lo)&^quote | (backslash-lo)&^backslash | w) & hi
}

// jsonPlain marks the ASCII bytes a JSON string holds as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
