package eval

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// likeMatcher is a compiled LIKE or ILIKE pattern: % any run of
// characters, _ one character (a UTF-8 code point, or one byte that is not
// UTF-8), \ makes the next character plain. The common shapes, 'abc',
// 'abc%', '%abc' and '%abc%', are a bytes comparison; the rest a
// backtracking match over the pattern's pieces. Neither allocates.
type likeMatcher struct {
	fold  bool
	shape int    // likeExact, likePrefix, likeSuffix, likeContains, likeGeneral
	lit   []byte // the literal of the simple shapes
	toks  []likeTok
}

const (
	likeExact = iota
	likePrefix
	likeSuffix
	likeContains
	likeGeneral
)

type likeTok struct {
	kind byte // 'l' literal rune, '_' one character, '%' any run
	r    rune // kind 'l': the rune (folded for ILIKE)
	b    byte // kind 'l' for a byte that is not UTF-8: r is utf8.RuneError and b the byte
	raw  bool // b is set
}

func newLikeMatcher(pattern string, fold bool) *likeMatcher {
	m := &likeMatcher{fold: fold}
	p := []byte(pattern)
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '%':
			if n := len(m.toks); n == 0 || m.toks[n-1].kind != '%' {
				m.toks = append(m.toks, likeTok{kind: '%'})
			}
			i++
			continue
		case c == '_':
			m.toks = append(m.toks, likeTok{kind: '_'})
			i++
			continue
		case c == '\\' && i+1 < len(p):
			i++
		}
		r, size := utf8.DecodeRune(p[i:])
		t := likeTok{kind: 'l', r: r}
		if r == utf8.RuneError && size == 1 {
			t.raw, t.b = true, p[i]
		} else if fold {
			t.r = unicode.ToLower(r)
		}
		m.toks = append(m.toks, t)
		i += size
	}
	m.shape = likeGeneral
	if fold {
		// An ASCII pattern of a simple shape is matched with ASCII case
		// folding, without decoding runes.
		for _, t := range m.toks {
			if t.kind == 'l' && (t.raw || t.r >= utf8.RuneSelf) {
				return m
			}
		}
	}
	// Simple shapes: a literal run with % at neither, one or both ends.
	lo, hi := 0, len(m.toks)
	lead := hi > 0 && m.toks[0].kind == '%'
	trail := hi > 1 && m.toks[hi-1].kind == '%'
	if lead {
		lo++
	}
	if trail {
		hi--
	}
	if hi < lo {
		hi = lo
	}
	var lit []byte
	for _, t := range m.toks[lo:hi] {
		if t.kind != 'l' {
			return m
		}
		if t.raw {
			lit = append(lit, t.b)
		} else {
			lit = utf8.AppendRune(lit, t.r)
		}
	}
	m.lit = lit
	switch {
	case lead && trail:
		m.shape = likeContains
	case lead:
		m.shape = likeSuffix
	case trail:
		m.shape = likePrefix
	default:
		m.shape = likeExact
	}
	if len(m.toks) == 1 && lead { // '%' alone
		m.shape, m.lit = likeContains, nil
	}
	return m
}

func (m *likeMatcher) match(s []byte) bool {
	if m.fold && m.shape != likeGeneral {
		return m.matchFoldASCII(s)
	}
	switch m.shape {
	case likeExact:
		return bytes.Equal(s, m.lit)
	case likePrefix:
		return bytes.HasPrefix(s, m.lit)
	case likeSuffix:
		return bytes.HasSuffix(s, m.lit)
	case likeContains:
		return bytes.Contains(s, m.lit)
	}
	return m.general(s)
}

// next decodes the character of s at i: its rune (folded for ILIKE), or
// the raw byte when it is not UTF-8.
func (m *likeMatcher) next(s []byte, i int) (r rune, raw bool, b byte, size int) {
	r, size = utf8.DecodeRune(s[i:])
	if r == utf8.RuneError && size == 1 {
		return r, true, s[i], 1
	}
	if m.fold {
		r = unicode.ToLower(r)
	}
	return r, false, 0, size
}

// general is the classic wildcard match with one backtrack point: on a
// mismatch, the last % takes one more character.
func (m *likeMatcher) general(s []byte) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		if ti < len(m.toks) {
			t := m.toks[ti]
			switch t.kind {
			case '%':
				starT, starS = ti, si
				ti++
				continue
			case '_':
				_, _, _, size := m.next(s, si)
				si += size
				ti++
				continue
			default:
				r, raw, b, size := m.next(s, si)
				if raw == t.raw && (raw && b == t.b || !raw && r == t.r) {
					si += size
					ti++
					continue
				}
			}
		}
		if starT < 0 {
			return false
		}
		_, _, _, size := m.next(s, starS)
		starS += size
		ti, si = starT+1, starS
	}
	for ti < len(m.toks) && m.toks[ti].kind == '%' {
		ti++
	}
	return ti == len(m.toks)
}

// matchFoldASCII matches the simple shapes of an ASCII ILIKE pattern (m.lit
// is lower case): bytes compare with ASCII case folding.
func (m *likeMatcher) matchFoldASCII(s []byte) bool {
	n := len(m.lit)
	switch m.shape {
	case likeExact:
		return len(s) == n && equalFoldASCII(s, m.lit)
	case likePrefix:
		return len(s) >= n && equalFoldASCII(s[:n], m.lit)
	case likeSuffix:
		return len(s) >= n && equalFoldASCII(s[len(s)-n:], m.lit)
	}
	if n == 0 {
		return true
	}
	first := m.lit[0]
	for i := 0; i+n <= len(s); i++ {
		if lowerASCII(s[i]) == first && equalFoldASCII(s[i:i+n], m.lit) {
			return true
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func equalFoldASCII(s, lower []byte) bool {
	for i, c := range lower {
		if lowerASCII(s[i]) != c {
			return false
		}
	}
	return true
}
