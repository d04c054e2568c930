package lang

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Error is a KafkaQL syntax error with the position of the offending token.
// Line and Col are 1-based; Col counts characters. Len is how many
// characters of the token are on that line (the caret width, at least 1).
type Error struct {
	Line, Col  int
	Msg        string
	Expected   []string // what would have been accepted there, in grammar order
	Hint       string   // e.g. "did you mean SHOW?"
	SourceLine string   // the line the error is on, for the caret
	Len        int

	// masks are the columns (first, count) on the error's line of strings
	// that may be a password typed into CREATE or ALTER USER: Error shows
	// them as '*'.
	masks [][2]int
	// secret: the statement may hold a password (see hidePasswords).
	secret bool

	// oldForm marks a SELECT whose projection reading failed on its lone
	// item, where the old form SELECT name may read better: parse shows
	// the old form's error when it is past line:col oldAfter (0:0: always).
	oldForm  bool
	oldAfter [2]int

	// hintFormat and hintArgs are what hintf rendered Hint from, hintText
	// the text it rendered: shift moves the positions (at) among the args
	// with the error, so a hint names script positions as the error does.
	hintFormat, hintText string
	hintArgs             []any
}

// at is a position a hint names ("the first LIMIT is at 1:11"). A hint
// that names one is written with hintf, so that shift moves it.
type at struct{ line, col int }

func (p at) String() string { return fmt.Sprintf("%d:%d", p.line, p.col) }

// shift moves p as Error.shift moves an error: from a statement starting
// at line:col of the script to the script's own line and column.
func (p at) shift(line, col int) at {
	if p.line == 1 {
		p.col += col - 1
	}
	p.line += line - 1
	return p
}

// hintf sets Hint; any at among args is a position in the statement that
// shift moves to the script's position with the error's own.
func (e *Error) hintf(format string, args ...any) {
	e.hintFormat, e.hintArgs = format, args
	e.hintText = fmt.Sprintf(format, args...)
	e.Hint = e.hintText
}

// shiftHint re-renders a hint written with hintf with its positions moved;
// text appended to it since is kept, a hint replaced since is left alone.
func (e *Error) shiftHint(line, col int) {
	if e.hintFormat == "" || !strings.HasPrefix(e.Hint, e.hintText) {
		return
	}
	for i, a := range e.hintArgs {
		if p, ok := a.(at); ok {
			e.hintArgs[i] = p.shift(line, col)
		}
	}
	rest := e.Hint[len(e.hintText):]
	e.hintText = fmt.Sprintf(e.hintFormat, e.hintArgs...)
	e.Hint = e.hintText + rest
}

// after reports whether e is strictly after line:col.
func (e *Error) after(line, col int) bool { return e.Line > line || e.Line == line && e.Col > col }

// Error renders the message, the source line with a caret under the
// offending token, what was expected, and the hint, one per line.
func (e *Error) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d:%d: %s", e.Line, e.Col, e.Msg)
	if e.SourceLine != "" {
		sb.WriteString("\n")
		sb.WriteString(e.maskedLine())
		sb.WriteString("\n")
		sb.WriteString(e.caret())
	}
	if len(e.Expected) > 0 {
		sb.WriteString("\nexpected ")
		sb.WriteString(listOr(e.Expected))
	}
	if e.Hint != "" {
		sb.WriteString("\n")
		sb.WriteString(e.Hint)
	}
	return sb.String()
}

// caret lines up under SourceLine, copying its tabs so the caret stays
// under the token whatever the terminal's tab width.
func (e *Error) caret() string {
	var sb strings.Builder
	line := []rune(e.SourceLine)
	for i := 0; i < e.Col-1; i++ {
		if i < len(line) && line[i] == '\t' {
			sb.WriteByte('\t')
		} else {
			sb.WriteByte(' ')
		}
	}
	n := e.Len
	if rest := len(line) - (e.Col - 1); n > rest {
		n = rest
	}
	if n < 1 {
		n = 1
	}
	sb.WriteString(strings.Repeat("^", n))
	return sb.String()
}

func listOr(items []string) string {
	switch len(items) {
	case 1:
		return items[0]
	case 2:
		return items[0] + " or " + items[1]
	}
	return "one of " + strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// sourceLine returns line n (1-based) of src.
func sourceLine(src string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return strings.TrimSuffix(src, "\r")
}

func newLexError(src string, le *lexError) *Error {
	line, col := posAt(src, le.off)
	return &Error{Line: line, Col: col, Msg: le.msg, Hint: le.hint, SourceLine: sourceLine(src, line), Len: max(le.width, 1)}
}

// parseState holds one statement's source and tokens while it is parsed.
type parseState struct {
	src   string
	toks  []token // ends with tkEOF
	label string  // the statement's name in messages when toks were rewritten (SELECT read as CONSUME)
}

func (ps *parseState) errAtToken(i int, format string, args ...any) *Error {
	t := ps.toks[i]
	return &Error{Line: t.line, Col: t.col, Msg: fmt.Sprintf(format, args...), SourceLine: sourceLine(ps.src, t.line), Len: max(t.width, 1)}
}

// tokenAt returns the index of the token at byte offset off (EOF if none).
func (ps *parseState) tokenAt(off int) int {
	lo, hi := 0, len(ps.toks)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if ps.toks[mid].off < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func (ps *parseState) errAt(pos lexer.Position, format string, args ...any) *Error {
	return ps.errAtToken(ps.tokenAt(pos.Offset), format, args...)
}

// at returns the position of the token at pos, as errAt reports it.
func (ps *parseState) at(pos lexer.Position) at {
	t := ps.toks[ps.tokenAt(pos.Offset)]
	return at{t.line, t.col}
}

// expectation is what the grammar accepts at one token position, found by
// asking the grammar itself (see expectedAt).
type expectation struct {
	keywords map[string]bool
	classes  map[tokKind]bool
	puncts   map[string]bool
	end      bool
}

var probePuncts = []string{"(", ",", ")", ":", "=", "*", "[", "]", "+", "-", "/", "%", "<", "<=", ">", ">=", "!=", "<>", "~", "!~"}

// exprPuncts are the symbols of expressions, summed up in expected lists.
var exprPuncts = []string{"(", "[", "+", "-", "*", "/", "%", "=", "<", "<=", ">", ">=", "!=", "<>", "~", "!~"}

// exprOperandWords may start an expression; exprOperatorWords may follow
// one. Expected lists say "an expression" and "an operator" instead.
var exprOperandWords = map[string]bool{"NOT": true, "NULL": true, "TRUE": true, "FALSE": true, "TIMESTAMP": true, "TIME": true}
var exprOperatorWords = map[string]bool{"AND": true, "OR": true, "NOT": true, "IS": true, "IN": true, "LIKE": true, "ILIKE": true, "BETWEEN": true}

// expectedAt finds what the grammar accepts at token i by trying each
// possible next token after toks[:i] and seeing whether the parser gets past
// it. This keeps every expected-list exact as the grammar changes, instead
// of a hand-kept table that drifts. Only error paths pay for it.
func (ps *parseState) expectedAt(i int) expectation {
	prefix := make([]lexer.Token, i, i+2)
	for k := 0; k < i; k++ {
		t := ps.toks[k]
		prefix[k] = lexer.Token{Type: tokenTypes[t.kind], Value: t.text, Pos: lexer.Position{Offset: k, Line: 1, Column: k + 1}}
	}
	accepts := func(cand *lexer.Token) bool {
		toks := prefix[:i:i]
		if cand != nil {
			c := *cand
			c.Pos = lexer.Position{Offset: i, Line: 1, Column: i + 1}
			toks = append(toks, c)
		}
		end := len(toks)
		toks = append(toks, lexer.Token{Type: lexer.EOF, Pos: lexer.Position{Offset: end, Line: 1, Column: end + 1}})
		_, err := parseWhole(toks)
		if err == nil {
			return true
		}
		if cand == nil {
			return false
		}
		var perr participle.Error
		return errors.As(err, &perr) && perr.Position().Offset > i
	}
	exp := expectation{keywords: map[string]bool{}, classes: map[tokKind]bool{}, puncts: map[string]bool{}}
	for _, k := range keywordOrder {
		if accepts(&lexer.Token{Type: ttProbe, Value: k}) {
			exp.keywords[k] = true
		}
	}
	classes := []struct {
		kind tokKind
		text string
	}{{tkWord, "n"}, {tkString, "'s'"}, {tkHex, "x'00'"}, {tkNumber, "1"}, {tkDuration, "1m"}}
	for _, c := range classes {
		if accepts(&lexer.Token{Type: tokenTypes[c.kind], Value: c.text}) {
			exp.classes[c.kind] = true
		}
	}
	for _, p := range probePuncts {
		if accepts(&lexer.Token{Type: ttPunct, Value: p}) {
			exp.puncts[p] = true
		}
	}
	exp.end = accepts(nil)
	return exp
}

// labels lists the expectation for a person: keywords without their aliases,
// then the kinds of value, each named for what it is at this place.
func (exp expectation) labels(prev string) []string {
	type item struct {
		label string
		rank  int
	}
	var items []item
	prev = strings.ToUpper(prev)
	// Where an expression may start, or an operator may follow one, the
	// expression's own words and symbols are summed up: "an expression",
	// "an operator".
	puncts := make(map[string]bool, len(exp.puncts))
	for p, ok := range exp.puncts {
		puncts[p] = ok
	}
	exp.puncts = puncts // labels edits its copy only
	operand := exp.puncts["("] && exp.classes[tkNumber] && exp.classes[tkString] && exp.classes[tkWord]
	operator := exp.puncts["+"] && !operand
	for k := range exp.keywords {
		if canon, ok := aliasOf[k]; ok && exp.keywords[canon] {
			continue
		}
		between := k == "AND" && !exp.keywords["OR"] // BETWEEN lo AND hi
		if operand && exprOperandWords[k] || operator && exprOperatorWords[k] && !between {
			continue
		}
		r := 2 * keywordRank[k]
		if k == "NULL" {
			r = 1005 // after "a string" and "x'hex'": reads "a string, x'hex' or NULL"
		}
		label := k
		if k == "ORDER" || k == "GROUP" && exp.keywords["ORDER"] {
			label += " BY"
		}
		if label == "GROUP BY" {
			r = 2*keywordRank["ORDER"] - 1
		}
		if k == "DESC" && exp.keywords["ASC"] {
			r = 2*keywordRank["ASC"] + 1
		}
		items = append(items, item{label, r})
	}
	if operand {
		items = append(items, item{"an expression", 999})
		exp.classes = map[tokKind]bool{}
		for _, p := range exprPuncts {
			delete(exp.puncts, p)
		}
	}
	if operator {
		items = append(items, item{"an operator", 998})
		for _, p := range exprPuncts {
			delete(exp.puncts, p)
		}
	}
	if prev == "=" && (exp.classes[tkString] || exp.classes[tkWord]) {
		items = append(items, item{"a value", 1000})
	} else {
		if exp.classes[tkWord] {
			items = append(items, item{nameLabel(prev), 1000})
		}
		if exp.classes[tkNumber] {
			l := "a number"
			if prev == "TIMESTAMP" || prev == "TIME" {
				l = "epoch milliseconds"
			}
			items = append(items, item{l, 1001})
		}
		if exp.classes[tkDuration] {
			l := "a duration AGO"
			if prev == "THAN" { // SHOW HANGING TRANSACTIONS OLDER THAN d
				l = "a duration"
			}
			items = append(items, item{l, 1002})
		}
		if exp.classes[tkString] && !exp.classes[tkWord] {
			l := "a string"
			switch prev {
			case "LIKE":
				l = "a quoted pattern"
			case "TIMESTAMP", "TIME":
				l = "an RFC 3339 timestamp in quotes"
			}
			items = append(items, item{l, 1003})
		}
		if exp.classes[tkHex] {
			items = append(items, item{"x'hex'", 1004})
		}
	}
	for i, p := range probePuncts {
		if exp.puncts[p] {
			items = append(items, item{"'" + p + "'", 1010 + i})
		}
	}
	if exp.end {
		items = append(items, item{"end of statement", 2000})
	}
	// Few items: an insertion sort keeps this dependency-free and stable.
	for i := 1; i < len(items); i++ {
		for j := i; j > 0 && items[j].rank < items[j-1].rank; j-- {
			items[j], items[j-1] = items[j-1], items[j]
		}
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.label
	}
	return out
}

func nameLabel(prev string) string {
	switch prev {
	case "GROUP":
		return "a group name"
	case "HEADER":
		return "a header key"
	case "SUBJECT", "SCHEMA":
		return "a subject name"
	case "MESSAGE", "PROTOBUF":
		return "a message name"
	case "AVRO":
		return "an Avro schema file ('key.avsc')"
	case "USER":
		return "a user name"
	case "CLIENT":
		return "a client id"
	case "IP":
		return "an IP address"
	case "TRANSACTION":
		return "a transactional id"
	case "(", ",":
		return "a config name"
	}
	return "a topic name"
}

// describe names a token the way a message quotes it.
func describe(t token) string {
	switch t.kind {
	case tkEOF:
		return "end of statement"
	case tkPunct:
		return "'" + t.text + "'"
	case tkString, tkHex:
		s := t.text
		cut := false
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s, cut = s[:i], true
		}
		if r := []rune(s); len(r) > 24 {
			s, cut = string(r[:24]), true
		}
		if cut {
			s += "..."
		}
		return s
	}
	return t.text
}

// statementLabel names the statement in toks for messages: SHOW TOPICS,
// CONSUME, DROP TOPIC...
func statementLabel(toks []token) string {
	i := 0
	if toks[0].kind == tkWord && strings.EqualFold(toks[0].text, "EXPLAIN") && len(toks) > 1 {
		i = 1
	}
	first := strings.ToUpper(toks[i].text)
	if first == "DESC" {
		first = "DESCRIBE"
	}
	if first == "ACCESS" {
		return "EXPLAIN ACCESS"
	}
	switch first {
	case "SHOW", "DESCRIBE", "CREATE", "DROP", "ALTER", "RESET", "DELETE", "ABORT", "CANCEL", "ELECT":
		if i+1 < len(toks) && toks[i+1].kind == tkWord {
			second := strings.ToUpper(toks[i+1].text)
			if second == "SHARE" && i+2 < len(toks) && toks[i+2].kind == tkWord { // SHOW SHARE GROUPS, RESET SHARE GROUP
				return first + " SHARE " + strings.ToUpper(toks[i+2].text)
			}
			if second == "HANGING" && i+2 < len(toks) && toks[i+2].kind == tkWord { // SHOW HANGING TRANSACTIONS
				second += " " + strings.ToUpper(toks[i+2].text)
			}
			return first + " " + second
		}
	}
	return first
}

var statementWords = map[string]bool{"SHOW": true, "DESCRIBE": true, "DESC": true, "CONSUME": true,
	"SELECT": true, "PRODUCE": true, "CREATE": true, "DROP": true, "EXPLAIN": true,
	"ALTER": true, "RESET": true, "DELETE": true, "GRANT": true, "DENY": true, "REVOKE": true, "ABORT": true,
	"CANCEL": true, "ELECT": true}

// syntaxError explains why the grammar stopped at token i.
func (ps *parseState) syntaxError(i int) *Error {
	exp := ps.expectedAt(i)
	tok := ps.toks[i]
	prev := ""
	if i > 0 {
		prev = ps.toks[i-1].text
	}
	e := ps.errAtToken(i, "unexpected %s", describe(tok))
	e.Expected = exp.labels(prev)
	if i == 0 {
		// The grammar takes ACCESS first only to say it needs EXPLAIN.
		e.Expected = slices.DeleteFunc(e.Expected, func(l string) bool { return l == "ACCESS" })
	}
	aclHint := ps.aclExpected(e, exp, prev)
	word := ""
	if tok.kind == tkWord {
		word = strings.ToUpper(tok.text)
	}
	atStatementStart := i == 0 || i == 1 && strings.EqualFold(prev, "EXPLAIN") && exp.keywords["SHOW"]
	switch {
	case tok.kind == tkEOF && i == 0:
		e.Msg = "empty statement"
	case tok.kind == tkEOF:
		e.Msg = "unexpected end of statement after " + describe(ps.toks[i-1])
		e.Hint = ps.keywordAsNameHint(i, exp)
	case i == 1 && word == "EXPLAIN" && atStatementStart:
		e.Msg = "EXPLAIN cannot explain an EXPLAIN"
	case atStatementStart && tok.kind == tkWord:
		e.Msg = "unknown statement " + tok.text
	case (word == "TABLE" || word == "TABLES") && (exp.keywords["TOPIC"] || exp.keywords["TOPICS"]):
		want := "TOPIC"
		if word == "TABLES" || !exp.keywords["TOPIC"] {
			want = "TOPICS"
		}
		e.Msg = fmt.Sprintf("Kafka has topics, not tables: write %s %s", strings.ToUpper(prev), want)
	case tok.kind == tkPunct && tok.text == ";":
		e.Msg = "unexpected ';' inside a statement: only one statement can be parsed here"
	case exp.end:
		label := statementLabel(ps.toks)
		if ps.label != "" {
			label = ps.label
		}
		e.Msg = fmt.Sprintf("unexpected %s after a complete %s statement", describe(tok), label)
	}
	if e.Hint == "" {
		e.Hint = aclHint
	}
	if e.Hint == "" {
		e.Hint = ps.adminHint(i, word)
	}
	if e.Hint == "" && tok.kind == tkWord && exp.keywords["OF"] && !exp.classes[tkWord] && nearestKeyword(word, exp.keywords) != "OF" {
		// SHOW PARTITIONS orders: a bare name where OF names the topic
		// (a near keyword, such as ORDER for orders, would mislead).
		e.Hint = "to name the topic, write OF " + tok.text
	}
	if e.Hint == "" {
		e.Hint = ps.hint(tok, word, exp)
	}
	if e.Hint == "" {
		e.Hint = ps.schemaHint(i, exp)
	}
	if e.Hint == "" {
		e.Hint = ps.usersHint(i)
	}
	if e.Hint == "" && tok.kind == tkPunct && cmpOps[tok.text] != 0 && exp.puncts["+"] {
		e.Hint = "comparisons do not chain: write a = b AND b = c, or (a = b) = TRUE"
	}
	if e.Hint == "" && exp.end && statementWords[word] && i > 0 {
		e.Hint = "statements are separated by ';'"
	}
	return e
}

func (ps *parseState) hint(tok token, word string, exp expectation) string {
	if word != "" {
		if k := nearestKeyword(word, exp.keywords); k != "" {
			return "did you mean " + k + "?"
		}
	}
	switch {
	case tok.kind == tkNumber && exp.classes[tkDuration]:
		return "a duration needs a unit, as in 15m, 30s or 2h"
	case (tok.kind == tkNumber || tok.kind == tkDuration) && exp.classes[tkWord]:
		return "a name that starts with a digit must be quoted: " + quoteWith([]byte(tok.text), '"')
	case tok.kind == tkWord && exp.classes[tkString] && !exp.classes[tkWord]:
		return "strings are quoted: " + Quote([]byte(tok.text))
	case tok.kind == tkString:
		if b, err := Unquote(tok.text); err == nil && exp.keywords[strings.ToUpper(string(b))] {
			return "keywords are written without quotes: " + strings.ToUpper(string(b))
		}
	}
	return ""
}

// keywordAsNameHint explains a name that went missing because the word
// was read as a keyword: right after the verb, FROM and INTO are always the
// optional keyword, and after DROP TOPIC, IF always starts IF EXISTS. A
// topic spelled like one of them must be quoted.
func (ps *parseState) keywordAsNameHint(i int, exp expectation) string {
	if i < 2 {
		return ""
	}
	prev := strings.ToUpper(ps.toks[i-1].text)
	verb := strings.ToUpper(ps.toks[i-2].text)
	if verb == "*" && i >= 3 {
		verb = strings.ToUpper(ps.toks[i-3].text)
	}
	written := ps.toks[i-1].text
	quoted := quoteWith([]byte(written), '"')
	switch {
	case exp.classes[tkWord] && (prev == "FROM" && (verb == "CONSUME" || verb == "SELECT") || prev == "INTO" && verb == "PRODUCE"):
		return fmt.Sprintf("%s here is the optional keyword before the topic; a topic named %s must be quoted: %s %s",
			prev, written, verb, quoted)
	case prev == "IF" && verb == "TOPIC" && exp.keywords["EXISTS"]:
		return fmt.Sprintf("IF here starts IF EXISTS; a topic named %s must be quoted: DROP TOPIC %s", written, quoted)
	}
	return ""
}

// nearestKeyword returns the accepted keyword closest to word, if it is
// close enough to be a typo.
func nearestKeyword(word string, accepted map[string]bool) string {
	best, bestD := "", 3
	limit := 1
	if len(word) > 5 {
		limit = 2
	}
	for _, k := range keywordOrder { // table order breaks ties
		if !accepted[k] || k == word {
			continue
		}
		if d := editDistance(word, k); d <= limit && d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours (SHWO -> SHOW is 1).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99 // nobody mistypes a keyword that badly
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
