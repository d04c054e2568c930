// Package jsontext writes JSON text fast: the string escaping shared by the
// renderers and the schema registry decoders, which both sit in the inner
// loop of every record written.
package jsontext

import (
	"encoding/binary"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s, which must be valid UTF-8, as a JSON string. Control characters are escaped, and so are U+2028
// and U+2029, which JavaScript does not accept raw in a string. Runs of
// bytes that need nothing are copied whole: this is the inner loop of every
// JSON record written.
func AppendString(buf, s []byte) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look (SWAR): most of a
		// record is plain ASCII.
		for i+8 <= len(s) && !needsLook(binary.LittleEndian.Uint64(s[i:])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// needsLook reports whether any of the eight bytes in w is a control
// character, a quote, a backslash or not ASCII: the bytes a JSON string
// cannot take as they are, or must check as UTF-8. (The classic
// has-less-than and has-byte tests of "Bit Twiddling Hacks".)
func needsLook(w uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	less20 := (w - lo*0x20) &^ w
	quote := w ^ (lo * '"')
	backslash := w ^ (lo * '\\')
	return (less20|(quote-lo)&^quote|(backslash-lo)&^backslash|w)&hi != 0
}

// jsonPlain marks the ASCII bytes a JSON string holds as they are.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
