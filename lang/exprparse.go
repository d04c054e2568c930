package lang

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Expressions are parsed by hand (precedence climbing) and plugged into the
// participle grammar as a custom production (participle.ParseTypeWith): a
// precedence grammar written as participle structs would need lookahead
// that the rest of the grammar deliberately does without (UseLookahead(0)
// keeps its errors at the token that broke a clause). The hand parser
// reads the same tokens, treats the grammar's Probe tokens as keywords, and
// reports a syntax error at the offending token, so expectedAt can still
// ask "what is accepted here" by probing.
//
// It only decides the shape. What a parser can check but a grammar cannot
// say (a column name, a function's arity, a regular expression, an integer
// out of range) is recorded with its position and reported by convert, so
// that probing never mistakes a semantic problem for a syntax one.

// gExprNode is the participle-facing type of an expression.
type gExprNode interface{ gexprNode() }

// gExpr is a parsed expression with the position of each node and of its
// deferred problems.
type gExpr struct {
	X    Expr
	Pos  lexer.Position // the first token
	pos  map[Expr]lexer.Position
	errs []semErr
}

func (*gExpr) gexprNode() {}

// semErr is a problem found while parsing an expression that convert
// reports (the first one only).
type semErr struct {
	pos       lexer.Position
	msg, hint string
}

// exprKeywords are the words the expression grammar reads as keywords in
// operand position; any other bare word there is a column or a function.
var operandKeywords = map[string]bool{"NOT": true, "NULL": true, "TRUE": true, "FALSE": true}

// notOperand are words that can never start an operand: the expression
// grammar's own connectives and the clause keywords that follow an
// expression, so "WHERE LIMIT 5" reports a missing expression at LIMIT.
var notOperand = map[string]bool{
	"AND": true, "OR": true, "IS": true, "IN": true, "LIKE": true, "ILIKE": true, "BETWEEN": true,
	"AS": true, "ASC": true, "DESC": true, "DISTINCT": true, "FROM": true, "WHERE": true, "ORDER": true,
	"BY": true, "LIMIT": true, "SKIP": true, "FOLLOW": true, "ALL": true, "AGO": true,
}

var cmpOps = map[string]Op{"=": OpEq, "!=": OpNe, "<>": OpNe, "<": OpLt, "<=": OpLe, ">": OpGt, ">=": OpGe}

type exprParser struct {
	lex *lexer.PeekingLexer
	g   *gExpr
}

// parseExprTokens is the custom production registered with participle.
func parseExprTokens(lex *lexer.PeekingLexer) (gExprNode, error) {
	t := lex.Peek()
	if !startsOperand(t) {
		return nil, participle.NextMatch
	}
	p := &exprParser{lex: lex, g: &gExpr{Pos: t.Pos, pos: map[Expr]lexer.Position{}}}
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	p.g.X = x
	return p.g, nil
}

func isWordTok(t *lexer.Token) bool { return t.Type == ttIdent }

// isKw reports whether t is the keyword kw: a bare word, or the grammar's
// keyword probe (see expectedAt).
func isKw(t *lexer.Token, kw string) bool {
	return (t.Type == ttIdent || t.Type == ttProbe) && strings.EqualFold(t.Value, kw)
}

func isPunctTok(t *lexer.Token, p string) bool { return t.Type == ttPunct && t.Value == p }

func startsOperand(t *lexer.Token) bool {
	switch t.Type {
	case ttNumber, ttString, ttHex, ttDuration:
		return true
	case ttPunct:
		return t.Value == "(" || t.Value == "-" || t.Value == "+"
	case ttIdent:
		return !notOperand[strings.ToUpper(t.Value)]
	case ttProbe:
		u := strings.ToUpper(t.Value)
		return operandKeywords[u] || u == "TIMESTAMP" || u == "TIME"
	}
	return false
}

func (p *exprParser) unexpected(t *lexer.Token) error {
	return &participle.UnexpectedTokenError{Unexpected: *t}
}

func (p *exprParser) note(x Expr, pos lexer.Position) Expr {
	p.g.pos[x] = pos
	return x
}

func (p *exprParser) fail(pos lexer.Position, msg, hint string) {
	p.g.errs = append(p.g.errs, semErr{pos: pos, msg: msg, hint: hint})
}

func (p *exprParser) or() (Expr, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for isKw(p.lex.Peek(), "OR") {
		t := p.lex.Next()
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = p.note(&Binary{Op: OpOr, L: l, R: r}, t.Pos)
	}
	return l, nil
}

func (p *exprParser) and() (Expr, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for isKw(p.lex.Peek(), "AND") {
		t := p.lex.Next()
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		l = p.note(&Binary{Op: OpAnd, L: l, R: r}, t.Pos)
	}
	return l, nil
}

func (p *exprParser) not() (Expr, error) {
	if t := p.lex.Peek(); isKw(t, "NOT") {
		p.lex.Next()
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return p.note(&Unary{Op: OpNot, X: x}, t.Pos), nil
	}
	return p.cmp()
}

// operand parses an operand that must be there.
func (p *exprParser) operand(level func() (Expr, error)) (Expr, error) {
	if t := p.lex.Peek(); !startsOperand(t) {
		return nil, p.unexpected(t)
	}
	return level()
}

func (p *exprParser) cmp() (Expr, error) {
	l, err := p.operand(p.add)
	if err != nil {
		return nil, err
	}
	t := p.lex.Peek()
	pos := t.Pos
	if t.Type == ttPunct {
		if op, ok := cmpOps[t.Value]; ok {
			p.lex.Next()
			r, err := p.operand(p.add)
			if err != nil {
				return nil, err
			}
			return p.note(&Binary{Op: op, L: l, R: r}, pos), nil
		}
		if t.Value == "~" || t.Value == "!~" {
			p.lex.Next()
			pat, err := p.pattern()
			if err != nil {
				return nil, err
			}
			if _, rerr := regexp.Compile(pat.text); rerr != nil {
				p.fail(pat.pos, "bad regular expression "+describeTok(pat.tok)+": "+reErrText(rerr),
					"the pattern is an RE2 regular expression (Go's regexp syntax); in a quoted string a backslash is written \\\\, as in '\\\\d+'")
			}
			return p.note(&Regex{X: l, Pattern: pat.text, Not: t.Value == "!~"}, pos), nil
		}
		return l, nil
	}
	not := false
	if isKw(t, "NOT") {
		p.lex.Next()
		not = true
		t = p.lex.Peek()
		if !isKw(t, "LIKE") && !isKw(t, "ILIKE") && !isKw(t, "IN") && !isKw(t, "BETWEEN") {
			return nil, p.unexpected(t)
		}
	}
	switch {
	case isKw(t, "LIKE"), isKw(t, "ILIKE"):
		p.lex.Next()
		pat, err := p.pattern()
		if err != nil {
			return nil, err
		}
		if msg := checkLikePattern(pat.text); msg != "" {
			p.fail(pat.pos, msg, `in LIKE, % is any run of characters, _ is one character, and \ makes the next character plain: '100\%'`)
		}
		return p.note(&Like{X: l, Pattern: pat.text, Not: not, CaseInsensitive: isKw(t, "ILIKE")}, pos), nil
	case isKw(t, "IN"):
		p.lex.Next()
		if open := p.lex.Peek(); !isPunctTok(open, "(") {
			return nil, p.unexpected(open)
		}
		p.lex.Next()
		var list []Expr
		for {
			x, err := p.operand(p.or)
			if err != nil {
				return nil, err
			}
			list = append(list, x)
			nt := p.lex.Peek()
			if isPunctTok(nt, ",") {
				p.lex.Next()
				continue
			}
			if isPunctTok(nt, ")") {
				p.lex.Next()
				break
			}
			return nil, p.unexpected(nt)
		}
		return p.note(&In{X: l, List: list, Not: not}, pos), nil
	case isKw(t, "BETWEEN"):
		p.lex.Next()
		lo, err := p.operand(p.add)
		if err != nil {
			return nil, err
		}
		if and := p.lex.Peek(); !isKw(and, "AND") {
			return nil, p.unexpected(and)
		}
		p.lex.Next()
		hi, err := p.operand(p.add)
		if err != nil {
			return nil, err
		}
		return p.note(&Between{X: l, Lo: lo, Hi: hi, Not: not}, pos), nil
	case isKw(t, "IS"):
		p.lex.Next()
		isNot := false
		if isKw(p.lex.Peek(), "NOT") {
			p.lex.Next()
			isNot = true
		}
		if n := p.lex.Peek(); !isKw(n, "NULL") {
			return nil, p.unexpected(n)
		}
		p.lex.Next()
		return p.note(&IsNull{X: l, Not: isNot}, pos), nil
	}
	return l, nil
}

type patternTok struct {
	text string
	pos  lexer.Position
	tok  *lexer.Token
}

// pattern reads the quoted pattern of LIKE, ILIKE, ~ or !~.
func (p *exprParser) pattern() (patternTok, error) {
	t := p.lex.Peek()
	if t.Type != ttString {
		return patternTok{}, p.unexpected(t)
	}
	p.lex.Next()
	b, err := Unquote(t.Value)
	if err != nil {
		return patternTok{}, p.unexpected(t)
	}
	return patternTok{text: string(b), pos: t.Pos, tok: t}, nil
}

// signedNumber reports whether t is a number the lexer read with its sign
// (a -5), which after an operand is the operator and a number.
func signedNumber(t *lexer.Token) bool {
	return (t.Type == ttNumber || t.Type == ttDuration && decimalRe().MatchString(t.Value)) &&
		(strings.HasPrefix(t.Value, "-") || strings.HasPrefix(t.Value, "+"))
}

func (p *exprParser) add() (Expr, error) {
	l, err := p.mul()
	if err != nil {
		return nil, err
	}
	for {
		t := p.lex.Peek()
		var r Expr
		switch {
		case isPunctTok(t, "+") || isPunctTok(t, "-"):
			p.lex.Next()
			if r, err = p.operand(p.mul); err != nil {
				return nil, err
			}
		case signedNumber(t):
			// x -5 is x - 5: the lexer read the sign with the number.
			p.lex.Next()
			unsigned := *t
			unsigned.Value = t.Value[1:]
			if r, err = p.mulFrom(p.number(&unsigned)); err != nil {
				return nil, err
			}
		default:
			return l, nil
		}
		op := OpAdd
		if strings.HasPrefix(t.Value, "-") {
			op = OpSub
		}
		l = p.note(&Binary{Op: op, L: l, R: r}, t.Pos)
	}
}

func (p *exprParser) mul() (Expr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	return p.mulFrom(l)
}

func (p *exprParser) mulFrom(l Expr) (Expr, error) {
	for {
		t := p.lex.Peek()
		var op Op
		switch {
		case isPunctTok(t, "*"):
			op = OpMul
		case isPunctTok(t, "/"):
			op = OpDiv
		case isPunctTok(t, "%"):
			op = OpMod
		default:
			return l, nil
		}
		p.lex.Next()
		r, err := p.operand(p.unary)
		if err != nil {
			return nil, err
		}
		l = p.note(&Binary{Op: op, L: l, R: r}, t.Pos)
	}
}

func (p *exprParser) unary() (Expr, error) {
	t := p.lex.Peek()
	if isPunctTok(t, "-") || isPunctTok(t, "+") {
		p.lex.Next()
		x, err := p.operand(p.unary)
		if err != nil {
			return nil, err
		}
		if t.Value == "+" {
			return x, nil
		}
		switch n := x.(type) {
		case *IntLit:
			if n.V != -n.V || n.V == 0 { // not MinInt64
				n.V = -n.V
				return n, nil
			}
		case *FloatLit:
			n.V = -n.V
			return n, nil
		}
		return p.note(&Unary{Op: OpNeg, X: x}, t.Pos), nil
	}
	return p.primary()
}

// decimalRe is what a decimal literal looks like; the lexer reads 1.5 as a
// digit-led word, as it reads durations.
// Compiled on first use, not at every start.
var decimalRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?([eE][0-9]+)?$`)
})

func (p *exprParser) number(t *lexer.Token) Expr {
	if t.Type == ttNumber {
		v, err := strconv.ParseInt(t.Value, 10, 64)
		if err != nil {
			p.fail(t.Pos, "integer "+t.Value+" is out of range: integers are 64-bit, -9223372036854775808 to 9223372036854775807",
				"write it as a decimal (with a fraction: "+t.Value+".0) to compare it as a floating-point number")
		}
		return p.note(&IntLit{V: v}, t.Pos)
	}
	v, _ := strconv.ParseFloat(t.Value, 64)
	return p.note(&FloatLit{V: v}, t.Pos)
}

func (p *exprParser) primary() (Expr, error) {
	t := p.lex.Next()
	switch t.Type {
	case ttNumber:
		return p.number(t), nil
	case ttDuration:
		if isKw(p.lex.Peek(), "AGO") {
			p.lex.Next()
			d, err := time.ParseDuration(t.Value)
			switch {
			case err != nil:
				p.fail(t.Pos, t.Value+" is not a duration", "a duration is a number and a unit (ns, us, ms, s, m, h), as in 15m, 1h30m or 1.5h")
			case d <= 0:
				p.fail(t.Pos, "duration "+t.Value+" is not positive: ... AGO looks back, as in 15m AGO", "")
			}
			return p.note(&AgoLit{Ago: d}, t.Pos), nil
		}
		if decimalRe().MatchString(t.Value) {
			return p.number(t), nil
		}
		p.fail(t.Pos, t.Value+" is not a number", "a duration is a point in time only with AGO, as in 15m AGO; a decimal is written 1.5")
		return p.note(&IntLit{}, t.Pos), nil
	case ttString, ttHex:
		b, err := Unquote(t.Value)
		if err != nil {
			return nil, p.unexpected(t)
		}
		return p.note(&BytesLit{V: b}, t.Pos), nil
	case ttPunct:
		if t.Value == "(" {
			x, err := p.operand(p.or)
			if err != nil {
				return nil, err
			}
			if c := p.lex.Peek(); !isPunctTok(c, ")") {
				return nil, p.unexpected(c)
			}
			p.lex.Next()
			return x, nil
		}
		return nil, p.unexpected(t)
	case ttIdent, ttProbe:
		return p.word(t)
	}
	return nil, p.unexpected(t)
}

func (p *exprParser) word(t *lexer.Token) (Expr, error) {
	u := strings.ToUpper(t.Value)
	switch u {
	case "NULL":
		return p.note(&NullLit{}, t.Pos), nil
	case "TRUE", "FALSE":
		return p.note(&BoolLit{V: u == "TRUE"}, t.Pos), nil
	case "TIMESTAMP", "TIME":
		if n := p.lex.Peek(); n.Type == ttString || n.Type == ttNumber {
			p.lex.Next()
			return p.timeLit(n), nil
		}
	}
	if t.Type == ttProbe { // a keyword probe that is not one of the above
		return nil, p.unexpected(t)
	}
	if isPunctTok(p.lex.Peek(), "(") {
		return p.call(t)
	}
	return p.column(t)
}

func (p *exprParser) timeLit(n *lexer.Token) Expr {
	if n.Type == ttNumber {
		v, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil || v < 0 {
			p.fail(n.Pos, "timestamp "+n.Value+" is out of range: "+timestampRange, "")
		}
		return p.note(&TimeLit{Ms: v}, n.Pos)
	}
	b, _ := Unquote(n.Value)
	tm, err := time.Parse(time.RFC3339, string(b))
	if err != nil {
		p.fail(n.Pos, describeTok(n)+" is not an RFC 3339 timestamp",
			"write it as '2026-01-02T03:04:05Z' (fraction and offset optional: '2026-01-02T03:04:05.5+01:00'), or as epoch milliseconds")
	} else if tm.UnixMilli() < 0 {
		p.fail(n.Pos, "timestamp "+string(b)+" is before 1970: "+timestampRange, "")
	}
	return p.note(&TimeLit{Ms: tm.UnixMilli()}, n.Pos)
}

func (p *exprParser) call(name *lexer.Token) (Expr, error) {
	p.lex.Next() // (
	c := &Call{Name: strings.ToLower(name.Value)}
	p.note(c, name.Pos)
	t := p.lex.Peek()
	switch {
	case isPunctTok(t, ")"):
		p.lex.Next()
		return c, nil
	case isPunctTok(t, "*"):
		p.lex.Next()
		c.Star = true
	case c.Name == "header" && isWordTok(t):
		// header(trace-id): a bare word is the header's name, not a column.
		cp := p.lex.MakeCheckpoint()
		p.lex.Next()
		if isPunctTok(p.lex.Peek(), ")") {
			c.Args = []Expr{p.note(&BytesLit{V: []byte(t.Value)}, t.Pos)}
			break
		}
		p.lex.LoadCheckpoint(cp)
		fallthrough
	default:
		if isKw(t, "DISTINCT") {
			p.lex.Next()
			c.Distinct = true
		}
		for {
			x, err := p.operand(p.or)
			if err != nil {
				return nil, err
			}
			c.Args = append(c.Args, x)
			if !isPunctTok(p.lex.Peek(), ",") {
				break
			}
			p.lex.Next()
		}
	}
	if e := p.lex.Peek(); !isPunctTok(e, ")") {
		return nil, p.unexpected(e)
	}
	p.lex.Next()
	return c, nil
}

// column reads a column and its JSON path: value.customer.id (one word to
// the lexer), value.items[0].sku, value['odd-name'].
func (p *exprParser) column(t *lexer.Token) (Expr, error) {
	parts := strings.Split(t.Value, ".")
	c := &Column{Name: strings.ToLower(parts[0])}
	p.note(c, t.Pos)
	if parts[0] == "" {
		p.fail(t.Pos, "unexpected "+t.Value+": a JSON path starts with its column, as in value"+t.Value, "")
	}
	p.pathWords(c, parts[1:], t)
	for isPunctTok(p.lex.Peek(), "[") {
		p.lex.Next()
		s := p.lex.Peek()
		switch s.Type {
		case ttNumber:
			p.lex.Next()
			i, err := strconv.Atoi(s.Value)
			if err != nil || i < 0 || strings.HasPrefix(s.Value, "+") {
				p.fail(s.Pos, "array index "+s.Value+" is out of range: an index is 0 or more", "")
			}
			c.Path = append(c.Path, PathStep{Index: i, IsIndex: true})
		case ttString:
			p.lex.Next()
			b, _ := Unquote(s.Value)
			c.Path = append(c.Path, PathStep{Key: string(b)})
		default:
			return nil, p.unexpected(s)
		}
		if e := p.lex.Peek(); !isPunctTok(e, "]") {
			return nil, p.unexpected(e)
		}
		p.lex.Next()
		// .sku after ] is a word of its own to the lexer.
		if w := p.lex.Peek(); isWordTok(w) && strings.HasPrefix(w.Value, ".") {
			p.lex.Next()
			p.pathWords(c, strings.Split(w.Value, ".")[1:], w)
		}
	}
	return c, nil
}

func (p *exprParser) pathWords(c *Column, words []string, t *lexer.Token) {
	for _, w := range words {
		if w == "" {
			p.fail(t.Pos, "empty step in the JSON path "+t.Value, "a path is written value.a.b, value.items[0] or value['odd-name']")
			continue
		}
		c.Path = append(c.Path, PathStep{Key: w})
	}
}

func describeTok(t *lexer.Token) string {
	return describe(token{kind: kindOf(t.Type), text: t.Value})
}

func kindOf(tt lexer.TokenType) tokKind {
	for k, v := range tokenTypes {
		if v == tt {
			return k
		}
	}
	return tkWord
}

// reErrText drops Go's "error parsing regexp: " prefix.
func reErrText(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// checkLikePattern reports a LIKE pattern that ends in a lone backslash.
func checkLikePattern(p string) string {
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' {
			if i+1 >= len(p) {
				return "the LIKE pattern ends with an escape character \\ that escapes nothing"
			}
			i++
		}
	}
	return ""
}
