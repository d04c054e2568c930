package lang

import (
	"slices"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// INSERT INTO t {option} SELECT ... [EXECUTE] is read in three parts: the
// head (destination and options) here, the SELECT by the same parser as a
// SELECT statement (so it takes every clause SELECT takes and reports the
// same errors at the same positions), and a trailing EXECUTE.

func isWord(t token, w string) bool { return t.kind == tkWord && strings.EqualFold(t.text, w) }

// parseInsert parses toks when they are an INSERT (after an optional
// EXPLAIN); ok is false when they are not.
func parseInsert(src string, toks []token) (Statement, *Error, bool) {
	i := 0
	explain := isWord(toks[0], "EXPLAIN")
	if explain {
		i = 1
	}
	if !isWord(toks[i], "INSERT") {
		return nil, nil, false
	}
	ps := &parseState{src: src, toks: toks}
	st, e := ps.insert(i + 1)
	if e != nil {
		return nil, e, true
	}
	if explain {
		return &Explain{Stmt: st}, nil, true
	}
	return st, nil, true
}

func (ps *parseState) expectWords(i int, words ...string) *Error {
	e := ps.errAtToken(i, "unexpected %s after %s", ps.describeTok(i), strings.ToUpper(ps.toks[i-1].text))
	if ps.toks[i].kind == tkEOF {
		e = ps.errAtToken(i, "unexpected end of statement after %s", strings.ToUpper(ps.toks[i-1].text))
	}
	e.Expected = words
	return e
}

func (ps *parseState) describeTok(i int) string {
	if ps.toks[i].kind == tkEOF {
		return "end of statement"
	}
	return ps.toks[i].text
}

func (ps *parseState) insert(i int) (*Insert, *Error) {
	toks := ps.toks
	if !isWord(toks[i], "INTO") {
		return nil, ps.expectWords(i, "INTO")
	}
	i++
	in := &Insert{}
	// The destination.
	if isWord(toks[i], "TOPIC") && !isWord(toks[i+1], "SELECT") && toks[i+1].kind != tkEOF {
		// TOPIC expr: the expression runs to the SELECT at depth 0.
		start := i + 1
		depth, j := 0, start
		for ; toks[j].kind != tkEOF; j++ {
			if toks[j].kind == tkPunct && (toks[j].text == "(" || toks[j].text == "[") {
				depth++
			} else if toks[j].kind == tkPunct && (toks[j].text == ")" || toks[j].text == "]") {
				depth--
			} else if depth == 0 && (isWord(toks[j], "SELECT") || isWord(toks[j], "KEEP") || isWord(toks[j], "TIMESTAMP") && isWord(toks[j+1], "NOW") || isWord(toks[j], "PARTITION") && isWord(toks[j+1], "BY")) {
				break
			}
		}
		x, e := ps.subExpr(start, j)
		if e != nil {
			return nil, e
		}
		in.TopicExpr = x
		i = j
	} else {
		switch toks[i].kind {
		case tkWord:
			if isWord(toks[i], "SELECT") {
				e := ps.errAtToken(i, "INSERT INTO needs the topic to write to before SELECT")
				e.Hint = "INSERT INTO copy SELECT * FROM orders, or INSERT INTO TOPIC header('dlq.original.topic') SELECT * FROM orders.dlq"
				return nil, e
			}
			in.Topic = toks[i].text
		case tkString:
			name, e := ps.name(&gName{Pos: posOf(toks[i]), Str: toks[i].text}, "topic")
			if e != nil {
				return nil, e
			}
			in.Topic = name
		default:
			e := ps.errAtToken(i, "INSERT INTO needs a topic name or TOPIC expression, not %s", ps.describeTok(i))
			e.Expected = []string{"TOPIC", "name"}
			return nil, e
		}
		i++
	}
	// The options, up to SELECT.
	seen := clauses{}
	for !isWord(toks[i], "SELECT") {
		var name string
		pos := posOf(toks[i])
		switch {
		case isWord(toks[i], "KEEP") && isWord(toks[i+1], "PARTITION"):
			name = "KEEP PARTITION"
			in.KeepPartition = true
		case isWord(toks[i], "PARTITION") && isWord(toks[i+1], "BY") && isWord(toks[i+2], "KEY"):
			name = "PARTITION BY KEY"
			i++
		case isWord(toks[i], "KEEP") && isWord(toks[i+1], "TIMESTAMP"):
			name = "KEEP TIMESTAMP"
			in.KeepTimestamp = true
		case isWord(toks[i], "TIMESTAMP") && isWord(toks[i+1], "NOW"):
			name = "TIMESTAMP NOW"
			in.StampNow = true
		default:
			e := ps.errAtToken(i, "unexpected %s in INSERT: the SELECT that reads the records comes next", ps.describeTok(i))
			if toks[i].kind == tkEOF {
				e = ps.errAtToken(i, "INSERT needs a SELECT that reads the records to copy")
			}
			e.Expected = []string{"SELECT", "KEEP", "PARTITION", "TIMESTAMP"}
			return nil, e
		}
		a, b := "KEEP PARTITION", "PARTITION BY KEY"
		if strings.Contains(name, "TIMESTAMP") {
			a, b = "KEEP TIMESTAMP", "TIMESTAMP NOW"
		}
		if e := ps.exclusive(seen, name, a, b, pos); e != nil {
			return nil, e
		}
		i += 2
	}
	// The SELECT, less a trailing EXECUTE.
	end := len(toks) - 1 // EOF
	if end-1 > i && isWord(toks[end-1], "EXECUTE") {
		in.Execute = true
		end--
	}
	sub := append(slices.Clone(toks[i:end]), toks[len(toks)-1])
	if in.Execute {
		sub[len(sub)-1].line, sub[len(sub)-1].col, sub[len(sub)-1].off = toks[end].line, toks[end].col, toks[end].off
	}
	st, e := parseTokenList(ps.src, sub)
	if e != nil {
		if strings.Contains(e.Msg, "after a complete") && !slices.Contains(e.Expected, "EXECUTE") {
			e.Expected = append(e.Expected, "EXECUTE")
		}
		return nil, e
	}
	c, ok := st.(*Consume)
	if !ok {
		return nil, ps.errAtToken(i, "INSERT copies what a SELECT reads; this is not a SELECT")
	}
	in.Select = c
	if e := ps.checkInsert(in, i, seen); e != nil {
		return nil, e
	}
	return in, nil
}

// checkInsert checks what the SELECT of an INSERT may say; options are
// where the head gave each option.
func (ps *parseState) checkInsert(in *Insert, sel int, options clauses) *Error {
	c := in.Select
	if c.Follow {
		e := ps.errAtToken(sel, "INSERT cannot FOLLOW: it copies a range that ends (up to the end offsets when it starts)")
		e.Hint = "drop FOLLOW; run the INSERT again later FROM ANCHOR where it stopped"
		return e
	}
	if in.TopicExpr != nil && (c.HasAggregates() || c.OrderBy != nil) {
		e := ps.errAtToken(sel, "INSERT INTO TOPIC expr copies records one by one: aggregates and ORDER BY need one destination topic")
		e.Hint = "write INSERT INTO name SELECT ..."
		return e
	}
	seen := map[string]bool{}
	items := ps.selectItemTokens(sel, len(c.Projection))
	for k, it := range c.Projection {
		name := strings.ToLower(it.Name())
		if !slices.Contains(InsertColumns, name) {
			e := ps.errAtToken(items[k][0], "INSERT cannot write a column named %q: a record has %s (name an expression with AS, e.g. upper(value) AS value)", it.Name(), strings.Join(InsertColumns, ", "))
			ps.underline(e, items[k])
			e.Expected = InsertColumns
			return e
		}
		if seen[name] {
			e := ps.errAtToken(items[k][0], "INSERT's SELECT names %s twice", name)
			ps.underline(e, items[k])
			return e
		}
		seen[name] = true
	}
	if k := slices.IndexFunc(c.Projection, func(it SelectItem) bool { return strings.EqualFold(it.Name(), "partition") }); k >= 0 && in.KeepPartition {
		e := ps.errAtToken(items[k][0], "KEEP PARTITION and a partition column cannot both say where a record goes")
		ps.underline(e, items[k])
		if pos, ok := options["KEEP PARTITION"]; ok {
			e.hintf("KEEP PARTITION is at %v; drop it, or drop the column", ps.at(pos))
		}
		return e
	}
	if e := ps.checkInsertTimestamp(in, options, items); e != nil {
		return e
	}
	if c.HasAggregates() {
		for _, opt := range []struct{ name, what, hint string }{
			{"KEEP PARTITION", "partition", "a partition column says an aggregate row's, e.g. SELECT partition, count(*) AS value ... GROUP BY partition"},
			{"KEEP TIMESTAMP", "timestamp", "a timestamp column says an aggregate row's, e.g. max(timestamp) AS timestamp"},
		} {
			if pos, ok := options[opt.name]; ok {
				e := ps.errAt(pos, "%s keeps each source record's %s, and aggregate rows have no source record", opt.name, opt.what)
				ps.underline(e, [2]int{ps.tokenAt(pos.Offset), ps.tokenAt(pos.Offset) + 1})
				e.Hint = "drop " + opt.name + "; " + opt.hint
				return e
			}
		}
	}
	return nil
}

// checkInsertTimestamp refuses a SELECT list's timestamp column that
// TIMESTAMP NOW or KEEP TIMESTAMP would contradict: which one wins would
// be a rule to remember, and either way one of the two the user wrote
// would be silently ignored. KEEP TIMESTAMP with the plain timestamp
// column says the same thing twice, and is let through.
func (ps *parseState) checkInsertTimestamp(in *Insert, options clauses, items [][2]int) *Error {
	if !in.KeepTimestamp && !in.StampNow {
		return nil
	}
	for k, it := range in.Select.Projection {
		if !strings.EqualFold(it.Name(), "timestamp") {
			continue
		}
		opt, msg := "TIMESTAMP NOW", "TIMESTAMP NOW stamps each record with the time of writing, and the SELECT list also gives it a timestamp column"
		hint := "drop the timestamp column to stamp the time of writing, or drop TIMESTAMP NOW to write the column"
		if in.KeepTimestamp {
			if c, ok := it.X.(*Column); ok && c.Name == "timestamp" && c.Path == nil {
				return nil // the source record's timestamp, as KEEP TIMESTAMP says
			}
			opt, msg = "KEEP TIMESTAMP", "KEEP TIMESTAMP keeps each source record's timestamp, and the SELECT list computes another timestamp column"
			hint = "drop KEEP TIMESTAMP to write the computed timestamp, or drop the column to keep the source's"
		}
		e := ps.errAtToken(items[k][0], "%s", msg)
		ps.underline(e, items[k])
		if pos, ok := options[opt]; ok {
			e.hintf("%s is at %v; %s", opt, ps.at(pos), hint)
		} else {
			e.Hint = hint
		}
		return e
	}
	return nil
}

// subExpr parses toks[start:end] as one expression, by the grammar of a
// WHERE: a CONSUME of a placeholder topic is put in front of it.
func (ps *parseState) subExpr(start, end int) (Expr, *Error) {
	if start == end {
		e := ps.errAtToken(start, "INSERT INTO TOPIC needs an expression naming each record's topic")
		e.Hint = "for example: INSERT INTO TOPIC header('dlq.original.topic') SELECT * FROM orders.dlq"
		return nil, e
	}
	first := ps.toks[start]
	lead := []token{{kind: tkWord, text: "CONSUME"}, {kind: tkWord, text: "x"}, {kind: tkWord, text: "WHERE"}}
	for k := range lead {
		lead[k].off, lead[k].line, lead[k].col = first.off, first.line, first.col
	}
	eof := ps.toks[end]
	eof.kind, eof.text = tkEOF, ""
	sub := append(append(lead, ps.toks[start:end]...), eof)
	st, e := parseTokenList(ps.src, sub)
	if e != nil {
		return nil, e
	}
	return st.(*Consume).Where, nil
}

// posOf is the grammar position of a token.
func posOf(t token) lexer.Position { return lexer.Position{Offset: t.off, Line: t.line, Column: t.col} }

// selectItemTokens is, for each of the n items of the SELECT list that
// starts after token sel, its first and last token: the items are split at
// the commas outside parentheses and brackets, up to the FROM that ends the
// list. An error about one item points at it, not at SELECT. If the split
// does not find n items, every item is SELECT itself.
func (ps *parseState) selectItemTokens(sel, n int) [][2]int {
	var items [][2]int
	depth, start := 0, sel+1
	for i := sel + 1; i < len(ps.toks) && ps.toks[i].kind != tkEOF; i++ {
		t := ps.toks[i]
		if t.kind == tkPunct {
			switch t.text {
			case "(", "[":
				depth++
			case ")", "]":
				depth--
			case ",":
				if depth == 0 {
					items = append(items, [2]int{start, i - 1})
					start = i + 1
				}
			}
			continue
		}
		if depth == 0 && isWord(t, "FROM") {
			items = append(items, [2]int{start, i - 1})
			break
		}
	}
	ok := len(items) == n
	for _, it := range items {
		ok = ok && it[0] <= it[1]
	}
	if !ok {
		items = make([][2]int, n)
		for k := range items {
			items[k] = [2]int{sel, sel}
		}
	}
	return items
}

// underline stretches e's caret over tokens first..last when they are on
// one line.
func (ps *parseState) underline(e *Error, span [2]int) {
	a, b := ps.toks[span[0]], ps.toks[span[1]]
	if a.line == b.line && b.end > a.off {
		e.Len = max(b.col+b.width-a.col, 1)
	}
}
