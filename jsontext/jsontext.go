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

// appendString stores into buf's spare capacity directly, a word of eight
// bytes at a time (appendWords), and the runes above ASCII one by one
// (appendRunes), checked as UTF-8 when check is set.
func appendString(buf, s []byte, check bool) ([]byte, bool) {
	n := len(buf)
	dst := slices.Grow(buf, len(s)+wordRoom)
	dst = dst[:cap(dst)]
	dst[n] = '"'
	i, j := 0, n+1
	// A string shorter than a word is read into one here, not past its
	// end, in loads that may overlap.
	var short uint64
	switch {
	case len(s) >= 8:
	case len(s) >= 4:
		short = uint64(binary.LittleEndian.Uint32(s)) | uint64(binary.LittleEndian.Uint32(s[len(s)-4:]))<<(8*(len(s)-4))
	case len(s) >= 2:
		short = uint64(binary.LittleEndian.Uint16(s)) | uint64(s[len(s)-1])<<(8*(len(s)-1))
	case len(s) == 1:
		short = uint64(s[0])
	}
	for {
		i, j = appendWords(dst, s, i, j, short)
		if i == len(s) {
			break
		}
		if len(dst)-j >= wordRoom {
			// A byte above ASCII.
			var ok bool
			if i, j, ok = appendRunes(dst, s, i, j, check); !ok {
				return buf[:n], false
			}
		}
		if len(dst)-j < wordRoom {
			dst = slices.Grow(dst[:j], len(s)-i+wordRoom)
			dst = dst[:cap(dst)]
		}
	}
	if j == len(dst) {
		dst = slices.Grow(dst[:j], 1)
		dst = dst[:cap(dst)]
	}
	dst[j] = '"'
	return dst[:j+1], true
}

// appendWords writes s from i on into dst at j a word of eight bytes at a
// time, up to the end of s, a byte above ASCII, or where dst has less than
// wordRoom left, and returns where both stand then. A word that needs
// nothing is stored whole. A word that holds bytes to escape is written
// byte by byte through escapes, each byte's escape (or the byte itself)
// stored as a word and the next byte's starting where it ends, without a
// branch per byte: a JSON value has a quote every few bytes. The last
// bytes of s, fewer than eight, make a word of their own, filled up with
// plain bytes that are then dropped (short holds s when s is shorter than
// a word). There is no call in here: Go keeps no register across one, and
// with calls in the loop the compiler kept its values on the stack.
func appendWords(dst, s []byte, i, j int, short uint64) (int, int) {
	for i < len(s) && len(dst)-j >= wordRoom {
		rest := len(s) - i
		var w uint64
		switch {
		case rest >= 8:
			w = binary.LittleEndian.Uint64(s[i:])
			rest = 8
		case len(s) >= 8:
			// The last eight bytes, shifted down past those done.
			w = binary.LittleEndian.Uint64(s[len(s)-8:])>>(64-8*rest) | filler<<(8*rest)
		default:
			w = short>>(8*i) | filler<<(8*rest)
		}
		d := (*[wordRoom]byte)(dst[j:])
		binary.LittleEndian.PutUint64(d[:], w)
		m := lookMask(w)
		if m == 0 {
			i += rest
			j += rest
			continue
		}
		if w&hiBits != 0 {
			// The bytes before the first to look at are stored already.
			k := bits.TrailingZeros64(m) >> 3
			return i + k, j + k
		}
		const mask = wordRoom/2 - 1 // k is at most 42: the mask only spares the bounds checks
		e := escapes[byte(w)]
		binary.LittleEndian.PutUint64(d[:], e)
		k := int(e >> 56)
		e = escapes[byte(w>>8)]
		binary.LittleEndian.PutUint64(d[k&mask:], e)
		k += int(e >> 56)
		e = escapes[byte(w>>16)]
		binary.LittleEndian.PutUint64(d[k&mask:], e)
		k += int(e >> 56)
		e = escapes[byte(w>>24)]
		binary.LittleEndian.PutUint64(d[k&mask:], e)
		k += int(e >> 56)
		e = escapes[byte(w>>32)]
		binary.LittleEndian.PutUint64(d[k&mask:], e)
		k += int(e >> 56)
		e = escapes[byte(w>>40)]
		binary.LittleEndian.PutUint64(d[k&mask:], e)
		k += int(e >> 56)
		e = escapes[byte(w>>48)]
		binary.LittleEndian.PutUint64(d[k&mask:], e)
		k += int(e >> 56)
		e = escapes[byte(w>>56)]
		binary.LittleEndian.PutUint64(d[k&mask:], e)
		k += int(e >> 56)
		// The filler bytes of a short word are each one plain byte.
		i += rest
		j += k - (8 - rest)
	}
	return i, j
}

// appendRunes writes s from i on into dst at j, byte by byte and rune by
// rune, up to the next plain ASCII byte, the end, or where dst has less
// than wordRoom left, and returns where both stand then; ok is false when
// check is set and s is not UTF-8 there.
func appendRunes(dst, s []byte, i, j int, check bool) (_, _ int, ok bool) {
	for i < len(s) && len(dst)-j >= wordRoom {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonPlain[c] {
				break // back to words
			}
			e := escapes[c]
			binary.LittleEndian.PutUint64(dst[j:], e)
			j += int(e >> 56)
			i++
			continue
		}
		if i+4 <= len(s) {
			// The runes of two and three bytes that need no look, as
			// utf8.DecodeRune accepts them (the leads E0 and ED take a
			// narrower second byte, and E2 80 leads U+2028 and U+2029),
			// are stored without decoding: four bytes, size kept.
			x := binary.LittleEndian.Uint32(s[i:])
			size := 0
			switch {
			case c >= 0xc2 && c < 0xe0 && x&0xc000 == 0x8000:
				size = 2
			case c > 0xe0 && c < 0xf0 && c != 0xed && x&0xc0c000 == 0x808000 && (c != 0xe2 || x&0xff00 != 0x8000):
				size = 3
			}
			if size > 0 {
				binary.LittleEndian.PutUint32(dst[j:], x)
				i += size
				j += size
				continue
			}
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case check && r == utf8.RuneError && size == 1:
			return i, j, false
		case r == '\u2028' || r == '\u2029':
			dst[j], dst[j+1], dst[j+2], dst[j+3], dst[j+4], dst[j+5] = '\\', 'u', '2', '0', '2', hexDigits[r&0xf]
			j += 6
		case i+4 <= len(s):
			// A rune is at most four bytes: store four, keep size.
			binary.LittleEndian.PutUint32(dst[j:], binary.LittleEndian.Uint32(s[i:]))
			j += size
		default:
			j += copy(dst[j:], s[i:i+size])
		}
		i += size
	}
	return i, j, true
}

// wordRoom is the spare room a word needs in the output: eight escapes of
// six bytes, each stored as a word of eight, and as much again so that
// the escapes' offsets, masked, need no bounds check.
const wordRoom = 128

const hiBits = 0x8080808080808080

// filler is what a short word is filled up with: plain bytes.
const filler = 0x6161616161616161

// escapes holds, for each ASCII byte, what a JSON string holds for it (up
// to six bytes, from the low end) and in the top byte how many bytes that
// is. The bytes above ASCII stand for themselves.
var escapes = func() (t [256]uint64) {
	for c := range 256 {
		var e []byte
		switch {
		case c >= utf8.RuneSelf || jsonPlain[c]:
			e = []byte{byte(c)}
		case c == '"' || c == '\\':
			e = []byte{'\\', byte(c)}
		case c == '\n':
			e = []byte(`\n`)
		case c == '\r':
			e = []byte(`\r`)
		case c == '\t':
			e = []byte(`\t`)
		default:
			e = []byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf]}
		}
		var x uint64
		for k := len(e) - 1; k >= 0; k-- {
			x = x<<8 | uint64(e[k])
		}
		t[c] = x | uint64(len(e))<<56
	}
	return t
}()

// needsLook reports whether any of the eight bytes in w is a control
// character, a quote, a backslash or not ASCII: the bytes a JSON string
// cannot take as they are, or must check as UTF-8.
func needsLook(w uint64) bool { return lookMask(w) != 0 }

// lookMask has the high bit of each byte of w that needsLook means set, and
// perhaps of some bytes above the first such byte, never below it: the
// classic has-less-than and has-byte tests of "Bit Twiddling Hacks" are
// exact up to the first byte they find (a borrow only moves upward), so the
// lowest set bit names the first byte that needs a look. A control
// character or a quote is one test: with bit 1 flipped, the bytes below
// 0x20 stay below it, the quote (0x22) becomes 0x20, and no other byte
// falls below 0x21.
func lookMask(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	x := w ^ (lo * 0x02)
	ctlOrQuote := (x - lo*0x21) &^ x
	backslash := w ^ (lo * '\\')
	return (ctlOrQuote | (backslash-lo)&^backslash | w) & hi
}

// jsonPlain marks the ASCII bytes a JSON string holds as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
