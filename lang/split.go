package lang

import (
	"strings"
)

// Source is one statement of a script, as Split and Buffer.Take find it.
type Source struct {
	Text      string // the statement without its ';', from its first token, trailing space trimmed
	Line, Col int    // 1-based position of Text's first character in the script
}

// The splitter knows only what decides where a statement ends: quotes
// (with backslash escapes), comments and ';'. It uses the same rules as the
// lexer, so a ';' inside 'a;b' or after -- never ends a statement. The
// grammar only ever sees complete statements.

type scanMode int

const (
	modeNormal scanMode = iota
	modeQuote
	modeLineComment
	modeBlockComment
)

// scanner is a resumable splitter over a growing text, shared by Split
// (one pass) and Buffer (a line at a time, no rescanning).
type scanner struct {
	text string
	i    int // next byte to scan
	pos  lineCol

	mode    scanMode
	quote   byte
	openOff int // where the open quote or /* started
	openPos lineCol

	tokStart int // first token of the statement being read, -1 if none yet
	tokPos   lineCol

	done []Source // terminated statements not yet taken
	rest int      // offset just after the last ';'
}

func newScanner(text string, start lineCol) *scanner {
	return &scanner{text: text, pos: start, tokStart: -1}
}

func (s *scanner) advance(n int) {
	s.pos.advance(s.text[s.i : s.i+n])
	s.i += n
}

func (s *scanner) markToken() {
	if s.tokStart < 0 {
		s.tokStart, s.tokPos = s.i, s.pos
	}
}

// scan consumes all of s.text it can. It stops early only on a backslash
// that is the last byte of the text (its escaped character is not here yet).
func (s *scanner) scan() {
	t := s.text
	for s.i < len(t) {
		c := t[s.i]
		switch s.mode {
		case modeQuote:
			switch {
			case c == '\\':
				if s.i+1 >= len(t) {
					return
				}
				s.advance(2)
			case c == s.quote:
				s.mode = modeNormal
				s.advance(1)
			default:
				s.advance(1)
			}
		case modeLineComment:
			if c == '\n' {
				s.mode = modeNormal
			}
			s.advance(1)
		case modeBlockComment:
			if c == '*' && s.i+1 < len(t) && t[s.i+1] == '/' {
				s.mode = modeNormal
				s.advance(2)
			} else {
				s.advance(1)
			}
		default:
			switch {
			case isSpace(c):
				s.advance(1)
			case c == '-' && s.i+1 < len(t) && t[s.i+1] == '-':
				s.mode = modeLineComment
				s.advance(2)
			case c == '/' && s.i+1 < len(t) && t[s.i+1] == '*':
				s.mode, s.openOff, s.openPos = modeBlockComment, s.i, s.pos
				s.advance(2)
			case c == ';':
				if s.tokStart >= 0 {
					s.done = append(s.done, Source{Text: strings.TrimRight(t[s.tokStart:s.i], " \t\r\n\f\v"), Line: s.tokPos.line, Col: s.tokPos.col})
				}
				s.tokStart = -1
				s.advance(1)
				s.rest = s.i
			case isQuote(c):
				s.markToken()
				s.mode, s.quote, s.openOff, s.openPos = modeQuote, c, s.i, s.pos
				s.advance(1)
			default:
				s.markToken()
				s.advance(1)
			}
		}
	}
}

// finish ends the text: an open quote or /* comment is an error, and a last
// statement without ';' is a statement.
func (s *scanner) finish() ([]Source, *Error) {
	out := s.done
	s.done = nil
	switch s.mode {
	case modeQuote:
		e := s.openError("unclosed quote: this " + string(s.quote) + " has no closing " + string(s.quote))
		e.Hint = unclosedHint(s.quote)
		return out, e
	case modeBlockComment:
		return out, s.openError("unclosed comment: this /* has no closing */")
	}
	if s.tokStart >= 0 {
		out = append(out, Source{Text: strings.TrimRight(s.text[s.tokStart:], " \t\r\n\f\v"), Line: s.tokPos.line, Col: s.tokPos.col})
		s.tokStart = -1
	}
	return out, nil
}

func (s *scanner) openError(msg string) *Error {
	// The source line is the script line holding the opening quote.
	startOfLine := strings.LastIndexByte(s.text[:s.openOff], '\n') + 1
	lineText := s.text[startOfLine:]
	if j := strings.IndexByte(lineText, '\n'); j >= 0 {
		lineText = lineText[:j]
	}
	n := 1
	if s.mode == modeBlockComment {
		n = 2
	}
	return &Error{Line: s.openPos.line, Col: s.openPos.col, Msg: msg, SourceLine: strings.TrimSuffix(lineText, "\r"), Len: n}
}

// Split cuts a script into statements at each ';' outside quotes and
// comments; the last ';' is optional and empty statements are dropped. An
// unclosed quote or /* comment at the end is an *Error at its opening
// character; the statements before it are returned with it.
func Split(script string) ([]Source, error) {
	s := newScanner(script, lineCol{1, 1})
	s.scan()
	out, e := s.finish()
	if e != nil {
		return out, e
	}
	return out, nil
}

// Buffer collects REPL input a line at a time and hands out statements as
// their ';' arrives. Positions in the Sources it returns count from the
// first line added since the buffer was last empty.
type Buffer struct {
	sb strings.Builder
	s  *scanner
}

// Add appends one input line (without its newline).
func (b *Buffer) Add(line string) {
	if b.s == nil {
		b.s = newScanner("", lineCol{1, 1})
	}
	b.sb.WriteString(line)
	b.sb.WriteByte('\n')
	b.s.text = b.sb.String()
	b.s.scan()
}

// Complete reports whether at least one statement ended with ';'.
func (b *Buffer) Complete() bool { return b.s != nil && len(b.s.done) > 0 }

// Take removes and returns the statements that ended with ';'; what follows
// the last ';' stays pending.
func (b *Buffer) Take() []Source {
	if b.s == nil || len(b.s.done) == 0 {
		return nil
	}
	out := b.s.done
	b.s.done = nil
	if b.Empty() {
		b.Reset()
		return out
	}
	// Keep only the pending text, so a session that never empties its
	// buffer does not grow without bound; positions keep counting.
	s := b.s
	rest := s.text[s.rest:]
	b.sb.Reset()
	b.sb.WriteString(rest)
	s.text = b.sb.String()
	s.i -= s.rest
	if s.tokStart >= 0 {
		s.tokStart -= s.rest
	}
	if s.mode == modeQuote || s.mode == modeBlockComment {
		s.openOff -= s.rest
	}
	s.rest = 0
	return out
}

// Flush ends the input (EOF): it returns every pending statement, the last
// one even without ';', and empties the buffer. An unclosed quote or
// comment is an *Error at its opening character.
func (b *Buffer) Flush() ([]Source, error) {
	if b.s == nil {
		return nil, nil
	}
	out, e := b.s.finish()
	b.Reset()
	if e != nil {
		return out, e
	}
	return out, nil
}

// Empty reports whether nothing is pending but whitespace and finished
// comments. An open quote or /* comment is pending input.
func (b *Buffer) Empty() bool {
	if b.s == nil {
		return true
	}
	return len(b.s.done) == 0 && b.s.tokStart < 0 && b.s.mode != modeBlockComment && b.s.mode != modeQuote
}

// InLiteral reports whether the pending text ends inside a quote or a /*
// comment: the next line continues it, so a leading backslash there is
// text, not a meta-command.
func (b *Buffer) InLiteral() bool {
	return b.s != nil && (b.s.mode == modeQuote || b.s.mode == modeBlockComment)
}

// Reset drops everything pending.
func (b *Buffer) Reset() {
	b.sb.Reset()
	b.s = nil
}

// Pending returns the text not yet taken, trimmed, for the shell's history
// and continuation prompt.
func (b *Buffer) Pending() string {
	if b.s == nil {
		return ""
	}
	return strings.TrimSpace(b.s.text[b.s.rest:])
}
