package lang

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote returns a KafkaQL string literal that reads back to exactly b.
//
// The backslash and the quote are always escaped (the seed bug was an
// escaper that skipped the backslash, so C:\temp became C:<tab>emp and
// a\" PARTITION 3 closed its own quote). Control characters and bytes that
// are not valid UTF-8 are written \xHH; unprintable code points \u{H...}.
func Quote(b []byte) string { return quoteWith(b, '\'') }

// QuoteName returns name bare when it is a valid bare name and not a
// keyword, and quoted otherwise. Every keyword is quoted, not only those
// that would misparse where the name is used: the output then reads back
// the same in any position and under any future clause.
func QuoteName(name string) string {
	if isBareName(name) {
		return name
	}
	return quoteWith([]byte(name), '"')
}

// isBareName reports whether s lexes as a single word that is not a keyword.
func isBareName(s string) bool {
	if s == "" || !isWordStart(s[0]) || isKeyword(s) {
		return false
	}
	if wordEnd(s, 0) != len(s) {
		return false
	}
	return true
}

func quoteWith(b []byte, q byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + 2)
	sb.WriteByte(q)
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' || c == q:
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c == 0:
			sb.WriteString(`\0`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, c)
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
		default:
			r, size := utf8.DecodeRune(b[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				fmt.Fprintf(&sb, `\x%02x`, c)
			case isPrintRune(r):
				sb.Write(b[i : i+size])
			default:
				fmt.Fprintf(&sb, `\u{%X}`, r)
			}
			i += size
			continue
		}
		i++
	}
	sb.WriteByte(q)
	return sb.String()
}

// isPrintRune is unicode.IsPrint minus the characters that change how a
// terminal lays out a line, so a quoted literal always shows every byte.
func isPrintRune(r rune) bool {
	return unicode.IsPrint(r) && r != utf8.RuneError
}

// Unquote decodes one quoted literal in any form the lexer accepts: '...',
// "...", `...` with backslash escapes, or x'...'. The whole of lit must be
// the literal. Errors are *Error with the column of the problem.
func Unquote(lit string) ([]byte, error) {
	var (
		b   []byte
		end int
		e   *lexError
	)
	switch {
	case lit != "" && isQuote(lit[0]):
		b, end, e = readQuoted(lit, 0)
	case len(lit) >= 2 && (lit[0] == 'x' || lit[0] == 'X') && lit[1] == '\'':
		b, end, e = readHex(lit, 0)
	default:
		e = &lexError{off: 0, msg: "not a quoted literal: it must start with ', \", ` or x'"}
	}
	if e == nil && end != len(lit) {
		e = &lexError{off: end, msg: "unexpected text after the closing quote"}
	}
	if e != nil {
		return nil, newLexError(lit, e)
	}
	return b, nil
}
