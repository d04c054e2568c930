package render

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// refTSVField and refCSVField escape byte by byte, as the fields were
// written before they copied runs: the references the fast ones must match.
func refTSVField(buf, s []byte) []byte {
	for _, c := range s {
		switch c {
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\t':
			buf = append(buf, '\\', 't')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

func refCSVField(buf, s []byte) []byte {
	if !csvNeedsQuotes(s) {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for _, c := range s {
		if c == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, c)
	}
	return append(buf, '"')
}

// Every byte at every offset of a 20-byte run, so each lands inside, before
// and after a word of the eight-byte loops, plus runs of escapes.
func TestDelimitedFieldsMatchTheReference(t *testing.T) {
	var cases [][]byte
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 20; pos++ {
			s := []byte("abcdefghijklmnopqrst")
			s[pos] = byte(b)
			cases = append(cases, s)
		}
	}
	cases = append(cases, nil, []byte(`{"id":1,"p":1,"name":"user-1-abc"}`), []byte("\\\t\n\r\\\t\n\r\\"),
		[]byte(`""""`), []byte("a,b"), []byte(" lead"), []byte(`\.`))
	for _, s := range cases {
		if got, want := appendTSVField([]byte("x"), s), refTSVField([]byte("x"), s); !bytes.Equal(got, want) {
			t.Fatalf("appendTSVField(%q) = %q, want %q", s, got, want)
		}
		if got, want := appendCSVField([]byte("x"), s), refCSVField([]byte("x"), s); !bytes.Equal(got, want) {
			t.Fatalf("appendCSVField(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzDelimitedFields(f *testing.F) {
	f.Add([]byte("a\tb\\c\"d,e"))
	f.Fuzz(func(t *testing.T, s []byte) {
		if got, want := appendTSVField(nil, s), refTSVField(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendTSVField(%q) = %q, want %q", s, got, want)
		}
		if got, want := appendCSVField(nil, s), refCSVField(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendCSVField(%q) = %q, want %q", s, got, want)
		}
	})
}

// refDisplay is appendDisplay byte by byte, without the eight-byte loop.
func refDisplay(buf, s []byte) ([]byte, bool) {
	ascii := true
	for _, c := range s {
		if c < 0x20 || c >= 0x7f {
			ascii = false
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c >= 0x20 && c != 0x7f:
				buf = append(buf, c)
			case c == '\n':
				buf = append(buf, '\\', 'n')
			case c == '\r':
				buf = append(buf, '\\', 'r')
			case c == '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if escapedRune(r) {
			buf = append(buf, '\\', 'u', '{')
			buf = strconv.AppendInt(buf, int64(r), 16)
			buf = append(buf, '}')
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return buf, ascii
}

func TestDisplayMatchesTheReference(t *testing.T) {
	check := func(s []byte) {
		t.Helper()
		got, gascii := appendDisplay([]byte("x"), s)
		want, wascii := refDisplay([]byte("x"), s)
		if !bytes.Equal(got, want) || gascii != wascii {
			t.Fatalf("appendDisplay(%q) = %q, %v; want %q, %v", s, got, gascii, want, wascii)
		}
	}
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 20; pos++ {
			s := []byte("abcdefghijklmnopqrst")
			s[pos] = byte(b)
			check(s)
		}
	}
	for _, s := range []string{"", "\u2028x", "é", "\u202e evil", "\xc2\x85 c1", "plain text, longer than a word"} {
		check([]byte(s))
	}
}

// Quotes in every pattern across two eight-byte words (each subset of 16
// positions, so several quotes in one word and quotes at a word's edges),
// around multibyte UTF-8, CR LF and NUL bytes: the same bytes as the
// reference, and encoding/csv reads the field back as it was.
func TestCSVQuotePatternsRoundTrip(t *testing.T) {
	fill := []byte("é\r\n\x00ab,日x\x00\r\nyz€")
	for mask := 0; mask < 1<<16; mask++ {
		s := make([]byte, 0, 16+len(fill))
		for i := 0; i < 16; i++ {
			if mask&(1<<i) != 0 {
				s = append(s, '"')
			} else {
				s = append(s, fill[i%len(fill)])
			}
		}
		s = append(s, fill[:mask%len(fill)]...)
		got := appendCSVField([]byte("x,"), s)
		if want := refCSVField([]byte("x,"), s); !bytes.Equal(got, want) {
			t.Fatalf("appendCSVField(%q) = %q, want %q", s, got, want)
		}
		rec, err := csv.NewReader(bytes.NewReader(append(got, '\n'))).Read()
		if err != nil || len(rec) != 2 {
			t.Fatalf("encoding/csv reads %q: %v, %q", got, err, rec)
		}
		// encoding/csv turns a quoted CR LF into LF; compare likewise.
		if want := strings.ReplaceAll(string(s), "\r\n", "\n"); rec[1] != want {
			t.Fatalf("encoding/csv reads %q as %q, want %q", got, rec[1], want)
		}
	}
}
