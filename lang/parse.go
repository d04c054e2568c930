package lang

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Parse parses exactly one statement; a trailing ';' is optional. The error
// is always an *Error.
func Parse(src string) (Statement, error) {
	st, e := parse(src)
	if e != nil {
		return nil, e
	}
	return st, nil
}

// ParseSource parses one statement from Split or Buffer.Take and reports
// error positions relative to the script the statement came from.
func ParseSource(s Source) (Statement, error) {
	st, e := parse(s.Text)
	if e != nil {
		e.shift(s.Line, s.Col)
		return nil, e
	}
	return st, nil
}

// shift moves an error from statement-relative to script-relative
// position. The statement's first line starts at column col of the script,
// so its source line is padded to keep the caret under the token.
func (e *Error) shift(line, col int) {
	if line < 1 || col < 1 {
		return
	}
	e.shiftHint(line, col)
	if e.Line == 1 {
		for i := range e.masks {
			e.masks[i][0] += col - 1
		}
		e.Col += col - 1
		if e.SourceLine != "" {
			e.SourceLine = strings.Repeat(" ", col-1) + e.SourceLine
		}
	}
	e.Line += line - 1
}

func parse(src string) (Statement, *Error) {
	st, e := parseStatement(src)
	if e != nil {
		hidePasswords(src, e)
	}
	return st, e
}

func parseStatement(src string) (Statement, *Error) {
	toks, le := lex(src)
	if le != nil {
		return nil, newLexError(src, le)
	}
	// Drop the terminating semicolons; the EOF then sits after the last
	// remaining token so "end of statement" errors point there.
	n := len(toks) - 1
	for n > 0 && toks[n-1].kind == tkPunct && toks[n-1].text == ";" {
		n--
	}
	if n < len(toks)-1 {
		eof := token{kind: tkEOF, off: len(src), line: 1, col: 1, width: 1}
		if n > 0 {
			last := toks[n-1]
			end := lineCol{last.line, last.col}
			end.advance(last.text)
			eof.line, eof.col = end.line, end.col
		}
		toks = append(toks[:n], eof)
	}
	if st, e, ok := parseInsert(src, toks); ok {
		return st, e
	}
	return parseTokenList(src, toks)
}

// parseTokenList parses one statement from its tokens (ending with EOF).
func parseTokenList(src string, toks []token) (Statement, *Error) {
	ps := &parseState{src: src, toks: toks}
	st, e, syntactic := ps.parseAll()
	if e == nil {
		return st, nil
	}
	// SELECT x ... reads two ways: a projection (SELECT offset FROM newest:
	// the column offset of topic newest) and the old SELECT [*] [FROM] name
	// (topic offset, from the newest records). The projection reading is
	// tried first and wins when it parses; otherwise the statement is read
	// as the old form, exactly as CONSUME, so nothing that parsed before
	// this grammar had projections reads differently unless it also reads
	// as a projection.
	sel := oldSelectAt(toks)
	if sel < 0 {
		return nil, e
	}
	old := append([]token(nil), toks...)
	old[sel].text = "CONSUME"
	ops := &parseState{src: src, toks: old, label: "SELECT"}
	st2, e2, _ := ops.parseAll()
	if e2 == nil {
		return st2, nil
	}
	// Both readings fail: show the projection's error unless the old
	// reading got strictly further through the statement.
	// The old form's error is shown when it got further, or got as far and
	// has a likely fix (SELECT orders FROM NEWST: did you mean NEWEST?).
	oldBetter := e2.after(e.oldAfter[0], e.oldAfter[1]) ||
		e2.Line == e.oldAfter[0] && e2.Col == e.oldAfter[1] && strings.HasPrefix(e2.Hint, "did you mean")
	sameButHint := e2.Line == e.Line && e2.Col == e.Col && strings.HasPrefix(e2.Hint, "did you mean") && e.Hint == ""
	if e.oldForm && oldBetter || syntactic && (e2.after(e.Line, e.Col) || sameButHint) {
		return nil, e2
	}
	return nil, e
}

// oldSelectAt returns the index of a SELECT that may also be read as the
// old form SELECT name (not followed by * or FROM, which read only one
// way), or -1.
func oldSelectAt(toks []token) int {
	i := 0
	if toks[0].kind == tkWord && strings.EqualFold(toks[0].text, "EXPLAIN") {
		i = 1
	}
	if i+1 >= len(toks) || toks[i].kind != tkWord || !strings.EqualFold(toks[i].text, "SELECT") {
		return -1
	}
	next := toks[i+1]
	if next.kind == tkPunct && next.text == "*" || next.kind == tkWord && strings.EqualFold(next.text, "FROM") {
		return -1
	}
	return i
}

// parseAll runs the grammar and the conversion; syntactic says the error
// came from the grammar rather than from a check in convert.
func (ps *parseState) parseAll() (Statement, *Error, bool) {
	root, err := parseTokens(participleTokens(ps.toks))
	if err != nil {
		var perr participle.Error
		if !errors.As(err, &perr) {
			return nil, ps.errAtToken(0, "%v", err), true
		}
		return nil, ps.syntaxError(ps.tokenAt(perr.Position().Offset)), true
	}
	st, e := ps.convert(root)
	return st, e, false
}

// convert turns the grammar's tree into the AST, checking what the grammar
// does not: ranges, repeated clauses and required clauses.
func (ps *parseState) convert(r *gRoot) (Statement, *Error) {
	if r.Access != nil {
		return ps.explainAccess(r.Access, r.Explain)
	}
	st, e := ps.statement(r.Stmt)
	if e != nil {
		return nil, e
	}
	if r.Explain {
		return &Explain{Stmt: st}, nil
	}
	return st, nil
}

func (ps *parseState) statement(g *gStmt) (Statement, *Error) {
	switch {
	case g.Show != nil:
		return ps.show(g.Show)
	case g.Describe != nil && g.Describe.Subject != nil:
		return ps.describeSubject(g.Describe)
	case g.Describe != nil && g.Describe.Share != nil:
		return ps.describeShare(g.Describe)
	case g.Describe != nil && strings.EqualFold(g.Describe.Kind, "TRANSACTION"):
		return ps.describeTransaction(g.Describe)
	case g.Describe != nil:
		name, e := ps.name(g.Describe.Name, strings.ToLower(g.Describe.Kind))
		if e != nil {
			return nil, e
		}
		var st Queryable = &DescribeTopic{Topic: name}
		if strings.EqualFold(g.Describe.Kind, "GROUP") {
			st = &DescribeGroup{Group: name}
		}
		if e := ps.query(g.Describe.Query, st); e != nil {
			return nil, e
		}
		return st, nil
	case g.Consume != nil:
		return ps.consume(g.Consume)
	case g.Produce != nil:
		return ps.produce(g.Produce)
	case g.Create != nil && g.Create.User != nil:
		return ps.createUser(g.Create.User)
	case g.Create != nil:
		return ps.create(g.Create)
	case g.Drop != nil && g.Drop.User != nil:
		return ps.dropUser(g.Drop.User)
	case g.Drop != nil:
		name, e := ps.name(g.Drop.Topic, "topic")
		if e != nil {
			return nil, e
		}
		return &DropTopic{IfExists: g.Drop.IfExists, Topic: name}, nil
	case g.Alter != nil && g.Alter.User != nil:
		return ps.alterUser(g.Alter.User)
	case g.Alter != nil && g.Alter.Quota != nil:
		return ps.alterQuota(g.Alter.Quota)
	case g.Alter != nil:
		return ps.alter(g.Alter)
	case g.Reset != nil:
		return ps.reset(g.Reset)
	case g.Delete != nil:
		return ps.deleteStmt(g.Delete)
	case g.Grant != nil:
		return ps.grant(g.Grant)
	case g.Revoke != nil:
		return ps.revoke(g.Revoke)
	case g.Abort != nil:
		return ps.abort(g.Abort)
	case g.Ops != nil:
		return ps.ops(g.Ops)
	}
	return nil, ps.errAtToken(0, "internal error: the grammar matched no statement")
}

func (ps *parseState) show(g *gShow) (Statement, *Error) {
	if g.Configs != nil {
		st, e := ps.showConfigs(g.Configs)
		if e != nil {
			return nil, e
		}
		if e := ps.query(g.Query, st.(*ShowConfigs)); e != nil {
			return nil, e
		}
		return st, nil
	}
	if g.Schemas != nil {
		return ps.showSchemas(g)
	}
	if g.ACLs != nil {
		return ps.showACLs(g)
	}
	if g.Quotas != nil {
		return ps.showQuotas(g)
	}
	if g.Share != nil {
		return ps.showShare(g)
	}
	if g.Txn != nil {
		return ps.showTxn(g)
	}
	if g.Ops != nil {
		return ps.showOps(g)
	}
	var like *string
	for _, l := range []*gLike{g.Like, g.PLike} {
		if l != nil {
			b, e := ps.unquote(l.Pos, l.Pattern)
			if e != nil {
				return nil, e
			}
			s := string(b)
			like = &s
		}
	}
	var st Queryable
	switch strings.ToUpper(g.Listing + g.Single) {
	case "TOPICS":
		st = &ShowTopics{Like: like}
	case "GROUPS", "CONSUMERS":
		st = &ShowGroups{Like: like}
	case "SUBJECTS":
		st = &ShowSubjects{Like: like}
	case "BROKERS":
		st = &ShowBrokers{}
	case "CLUSTER":
		st = &ShowCluster{}
	case "USERS":
		st = &ShowUsers{}
	default: // PARTITIONS; the grammar allows nothing else
		sp := &ShowPartitions{Like: like}
		if g.Of != nil {
			name, e := ps.name(g.Of, "topic")
			if e != nil {
				return nil, e
			}
			sp.Topic = &name
		}
		st = sp
	}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) unquote(pos lexer.Position, raw string) ([]byte, *Error) {
	b, err := Unquote(raw)
	if err != nil { // the lexer already accepted it, so this is a bug
		return nil, ps.errAt(pos, "internal error: %v", err)
	}
	return b, nil
}

// name decodes a bare or quoted name; kind says what it names in messages.
func (ps *parseState) name(g *gName, kind string) (string, *Error) {
	if g.Str == "" {
		return g.Word, nil
	}
	b, e := ps.unquote(g.Pos, g.Str)
	if e != nil {
		return "", e
	}
	if len(b) == 0 && kind != "header" {
		return "", ps.errAt(g.Pos, "a %s name cannot be empty", kind)
	}
	return string(b), nil
}

// number parses n and checks it is within [lo, hi]; what names the number
// in the message ("LIMIT", "partition").
func (ps *parseState) number(n *gNum, lo, hi int64, what, rangeText string) (int64, *Error) {
	v, err := strconv.ParseInt(n.Text, 10, 64)
	if err != nil || v < lo || v > hi {
		return 0, ps.errAt(n.Pos, "%s %s is out of range: %s", what, n.Text, rangeText)
	}
	return v, nil
}

const (
	partitionRange   = "a partition is 0 to 2147483647"
	offsetRange      = "an offset is 0 or more"
	maxLimit         = 1000000
	limitRange       = "LIMIT is 1 to 1000000"
	skipRange        = "SKIP is 0 or more"
	partitionsRange  = "a topic has 1 to 2147483647 partitions"
	replicationRange = "REPLICATION is 1 to 32767"
	timestampRange   = "a timestamp is 0 or more epoch milliseconds"
)

func (ps *parseState) partition(n *gNum) (int32, *Error) {
	v, e := ps.number(n, 0, math.MaxInt32, "partition", partitionRange)
	return int32(v), e
}

// clauses remembers where each clause was first given, to reject repeats.
type clauses map[string]lexer.Position

func (ps *parseState) once(seen clauses, name, written string, pos lexer.Position) *Error {
	if first, dup := seen[name]; dup {
		e := ps.errAt(pos, "%s given twice", name)
		if strings.EqualFold(written, name) {
			e.hintf("each clause may be given once; the first %s is at %v", name, ps.at(first))
		} else {
			e.hintf("%s is another spelling of %s; the first is at %v", strings.ToUpper(written), name, ps.at(first))
		}
		return e
	}
	seen[name] = pos
	return nil
}

func (ps *parseState) consume(g *gConsume) (Statement, *Error) {
	topicName := g.Topic
	var items []*gSelItem
	if sel := g.Select; sel != nil {
		topicName = sel.StarTopic
		if sel.FromTopic != nil {
			topicName = sel.FromTopic
		}
		if sel.Topic != nil {
			topicName, items = sel.Topic, sel.Items
		}
	}
	topic, e := ps.name(topicName, "topic")
	if e != nil {
		return nil, e
	}
	c := &Consume{Topic: topic}
	seen := clauses{}
	if len(items) == 1 && items[0].As == nil {
		// SELECT 'name' FROM ... and SELECT name FROM ..., where name is no
		// column, are the old form: the topic name, then a FROM clause.
		g := items[0].X.(*gExpr)
		col, isCol := g.X.(*Column)
		_, isText := g.X.(*BytesLit)
		if isText {
			e := ps.errAt(g.Pos, "a quoted text after SELECT is the topic, as in SELECT 'my topic' FROM NEWEST")
			e.oldForm = true
			return nil, e
		}
		if isCol && col.Path == nil && !slices.Contains(RecordColumns, col.Name) {
			e := ps.checkColumn(g.Pos, col, recordScope(true))
			e.Hint += "; to read the topic " + col.Name + ", write CONSUME " + QuoteName(col.Name)
			e.oldForm = true
			e.oldAfter = [2]int{g.Pos.Line, g.Pos.Column}
			if t := ps.toks[ps.tokenAt(topicName.Pos.Offset)]; true {
				e.oldAfter = [2]int{t.line, t.col}
			}
			return nil, e
		}
	}
	for _, it := range items {
		x, e := ps.expr(it.X, recordScope(true))
		if e != nil {
			return nil, e
		}
		item := SelectItem{X: x}
		if it.As != nil {
			if item.As, e = ps.name(it.As, "column"); e != nil {
				return nil, e
			}
		}
		c.Projection = append(c.Projection, item)
	}
	var orderBy []*gOrderItem
	for _, cl := range g.Clauses {
		switch {
		case cl.From != nil:
			if e := ps.once(seen, "FROM", "FROM", cl.Pos); e != nil {
				return nil, e
			}
			if c.From, e = ps.start(cl.From); e != nil {
				return nil, e
			}
		case cl.Parts != nil:
			if e := ps.once(seen, "PARTITION", cl.PartKw, cl.Pos); e != nil {
				return nil, e
			}
			if cl.Parts.ForKey != nil {
				k, e := ps.literal(cl.Parts.ForKey)
				if e != nil {
					return nil, e
				}
				if k.Null {
					return nil, ps.errAt(cl.Parts.ForKey.Pos, "PARTITION FOR KEY NULL: a null key has no partition (the partitioner spreads null keys round robin)")
				}
				c.PartitionForKey = k.Bytes
				continue
			}
			nums := cl.Parts.List
			if cl.Parts.One != nil {
				nums = []*gNum{cl.Parts.One}
			}
			parts := make([]int32, 0, len(nums))
			for _, n := range nums {
				p, e := ps.partition(n)
				if e != nil {
					return nil, e
				}
				for _, q := range parts {
					if q == p {
						return nil, ps.errAt(n.Pos, "partition %d listed twice", p)
					}
				}
				parts = append(parts, p)
			}
			c.Partitions = parts
		case cl.LimitKw:
			if e := ps.once(seen, "LIMIT", "LIMIT", cl.Pos); e != nil {
				return nil, e
			}
			if cl.All {
				c.LimitAll = true
				continue
			}
			v, e := ps.number(cl.Limit, 1, maxLimit, "LIMIT", limitRange)
			if e != nil {
				return nil, e
			}
			c.Limit = &v
		case cl.Skip != nil:
			if e := ps.once(seen, "SKIP", cl.SkipKw, cl.Pos); e != nil {
				return nil, e
			}
			v, e := ps.number(cl.Skip, 0, math.MaxInt64, strings.ToUpper(cl.SkipKw), skipRange)
			if e != nil {
				return nil, e
			}
			c.Skip = &v
		case cl.Where != nil:
			if e := ps.once(seen, "WHERE", "WHERE", cl.Pos); e != nil {
				return nil, e
			}
			if c.Where, e = ps.expr(cl.Where, recordScope(false)); e != nil {
				return nil, e
			}
		case cl.GroupKw:
			if e := ps.once(seen, "GROUP BY", "GROUP BY", cl.Pos); e != nil {
				return nil, e
			}
			c.GroupBy = make([]Expr, 0, len(cl.GroupBy))
			for _, g := range cl.GroupBy {
				x, e := ps.groupItem(g, c.Projection)
				if e != nil {
					return nil, e
				}
				c.GroupBy = append(c.GroupBy, x)
			}
		case cl.OrderKw:
			if e := ps.once(seen, "ORDER BY", "ORDER BY", cl.Pos); e != nil {
				return nil, e
			}
			orderBy = cl.OrderBy
		case cl.Follow:
			if e := ps.once(seen, "FOLLOW", "FOLLOW", cl.Pos); e != nil {
				return nil, e
			}
			c.Follow = true
		case cl.As != nil:
			kw, target := "VALUE", &c.ValueAs
			if strings.EqualFold(cl.SideKw, "KEY") {
				kw, target = "KEY", &c.KeyAs
			}
			if e := ps.once(seen, kw+" AS", strings.ToUpper(cl.SideKw)+" AS", cl.Pos); e != nil {
				return nil, e
			}
			if *target, e = ps.localSchema(cl.As); e != nil {
				return nil, e
			}
		}
	}
	if e := ps.checkRecordQuery(c, items, orderBy, seen); e != nil {
		return nil, e
	}
	return c, nil
}

func (ps *parseState) start(g *gStart) (*Start, *Error) {
	switch {
	case g.Newest:
		return &Start{Kind: FromNewest}, nil
	case g.Oldest:
		return &Start{Kind: FromOldest}, nil
	case g.Offset != nil:
		v, e := ps.number(g.Offset, 0, math.MaxInt64, "offset", offsetRange)
		if e != nil {
			return nil, e
		}
		return &Start{Kind: FromOffset, Offset: v}, nil
	case g.Time != nil:
		ts, e := ps.timestamp(g.Time)
		if e != nil {
			return nil, e
		}
		return &Start{Kind: FromTimestamp, Timestamp: ts}, nil
	case g.Ago != nil:
		d, err := time.ParseDuration(g.Ago.Text)
		if err != nil {
			e := ps.errAt(g.Ago.Pos, "%s is not a duration", g.Ago.Text)
			e.Hint = "a duration is a number and a unit (ns, us, ms, s, m, h), as in 15m, 1h30m or 1.5h"
			return nil, e
		}
		if d <= 0 {
			return nil, ps.errAt(g.Ago.Pos, "duration %s is not positive: FROM ... AGO looks back, as in FROM 15m AGO", g.Ago.Text)
		}
		return &Start{Kind: FromAgo, Ago: d}, nil
	}
	kind := FromTail
	if strings.EqualFold(g.PairKw, "ANCHOR") {
		kind = FromAnchor
	}
	st := &Start{Kind: kind, Positions: make([]PartitionOffset, 0, len(g.Pairs))}
	for _, pair := range g.Pairs {
		p, e := ps.partition(pair.Part)
		if e != nil {
			return nil, e
		}
		o, e := ps.number(pair.Offset, 0, math.MaxInt64, "offset", offsetRange)
		if e != nil {
			return nil, e
		}
		for _, q := range st.Positions {
			if q.Partition == p {
				return nil, ps.errAt(pair.Part.Pos, "partition %d listed twice", p)
			}
		}
		st.Positions = append(st.Positions, PartitionOffset{Partition: p, Offset: o})
	}
	return st, nil
}

func (ps *parseState) timestamp(g *gTime) (int64, *Error) {
	if g.Str == "" {
		return ps.number(&gNum{Pos: g.Pos, Text: g.Num}, 0, math.MaxInt64, "timestamp", timestampRange)
	}
	b, e := ps.unquote(g.Pos, g.Str)
	if e != nil {
		return 0, e
	}
	t, err := time.Parse(time.RFC3339, string(b))
	if err != nil {
		e := ps.errAt(g.Pos, "%s is not an RFC 3339 timestamp", describe(ps.toks[ps.tokenAt(g.Pos.Offset)]))
		e.Hint = "write it as '2026-01-02T03:04:05Z' (fraction and offset optional: '2026-01-02T03:04:05.5+01:00'), or as epoch milliseconds"
		return 0, e
	}
	ms := t.UnixMilli()
	if ms < 0 {
		return 0, ps.errAt(g.Pos, "timestamp %s is before 1970: %s", string(b), timestampRange)
	}
	return ms, nil
}

func (ps *parseState) literal(g *gLit) (*Literal, *Error) {
	switch {
	case g.Null:
		return &Literal{Null: true}, nil
	case g.Hex != "":
		b, e := ps.unquote(g.Pos, g.Hex)
		return &Literal{Bytes: b}, e
	}
	b, e := ps.unquote(g.Pos, g.Str)
	return &Literal{Bytes: b}, e
}

func (ps *parseState) produce(g *gProduce) (Statement, *Error) {
	topic, e := ps.name(g.Topic, "topic")
	if e != nil {
		return nil, e
	}
	p := &Produce{Topic: topic}
	seen := clauses{}
	for _, cl := range g.Clauses {
		switch {
		case cl.KeySchema != nil:
			if e := ps.once(seen, "KEY SCHEMA", "KEY SCHEMA", cl.Pos); e != nil {
				return nil, e
			}
			if p.KeySchema, e = ps.schemaRef(cl.KeySchema); e != nil {
				return nil, e
			}
		case cl.ValSchema != nil:
			if e := ps.once(seen, "VALUE SCHEMA", cl.ValueKw+" SCHEMA", cl.Pos); e != nil {
				return nil, e
			}
			if p.ValueSchema, e = ps.schemaRef(cl.ValSchema); e != nil {
				return nil, e
			}
		case cl.KeyAs != nil:
			if e := ps.once(seen, "KEY AS", "KEY AS", cl.Pos); e != nil {
				return nil, e
			}
			if p.KeyAs, e = ps.localSchema(cl.KeyAs); e != nil {
				return nil, e
			}
		case cl.ValueAs != nil:
			if e := ps.once(seen, "VALUE AS", cl.ValueKw+" AS", cl.Pos); e != nil {
				return nil, e
			}
			if p.ValueAs, e = ps.localSchema(cl.ValueAs); e != nil {
				return nil, e
			}
		case cl.Key != nil:
			if e := ps.once(seen, "KEY", "KEY", cl.Pos); e != nil {
				return nil, e
			}
			if p.Key, e = ps.literal(cl.Key); e != nil {
				return nil, e
			}
		case cl.Value != nil:
			if e := ps.once(seen, "VALUE", cl.ValueKw, cl.Pos); e != nil {
				return nil, e
			}
			if p.Value, e = ps.literal(cl.Value); e != nil {
				return nil, e
			}
		case cl.FromFile != nil || cl.FromStdin || cl.Format != nil || cl.KeyDelim != nil || cl.Keep != "" || cl.StampNow || cl.PartByKey:
			if e := ps.importClause(p, cl, seen); e != nil {
				return nil, e
			}
		case cl.Part != nil:
			if e := ps.once(seen, "PARTITION", "PARTITION", cl.Pos); e != nil {
				return nil, e
			}
			v, e := ps.partition(cl.Part)
			if e != nil {
				return nil, e
			}
			p.Partition = &v
		case cl.HKey != nil:
			if cl.HKey.Str == "" && strings.EqualFold(cl.HKey.Word, "NULL") {
				return nil, ps.errAt(cl.HKey.Pos, "a header key cannot be NULL: it is text; write 'NULL' in quotes if you mean the word")
			}
			k, e := ps.name(cl.HKey, "header")
			if e != nil {
				return nil, e
			}
			v, e := ps.literal(cl.HValue)
			if e != nil {
				return nil, e
			}
			p.Headers = append(p.Headers, Header{Key: k, Value: *v})
		}
	}
	if p.From != nil || seen.has("FORMAT", "KEY DELIMITER", "KEEP PARTITION", "PARTITION BY KEY", "KEEP TIMESTAMP", "TIMESTAMP NOW") {
		return ps.checkImport(p, seen)
	}
	if e := ps.checkProduceSchemas(p, seen); e != nil {
		return nil, e
	}
	if e := ps.checkProduceLocal(p, seen); e != nil {
		return nil, e
	}
	if p.Key == nil && p.Value == nil {
		e := ps.errAtToken(len(ps.toks)-1, "PRODUCE needs a KEY or a VALUE")
		e.Expected = []string{"KEY", "VALUE"}
		e.Hint = "for example: PRODUCE INTO " + QuoteName(topic) + " KEY 'k' VALUE 'v'"
		return nil, e
	}
	return p, nil
}

func (ps *parseState) create(g *gCreate) (Statement, *Error) {
	topic, e := ps.name(g.Topic, "topic")
	if e != nil {
		return nil, e
	}
	c := &CreateTopic{Topic: topic}
	seen := clauses{}
	for _, cl := range g.Clauses {
		switch {
		case cl.Partitions != nil:
			if e := ps.once(seen, "PARTITIONS", "PARTITIONS", cl.Pos); e != nil {
				return nil, e
			}
			v, e := ps.number(cl.Partitions, 1, math.MaxInt32, "PARTITIONS", partitionsRange)
			if e != nil {
				return nil, e
			}
			n := int32(v)
			c.Partitions = &n
		case cl.Replication != nil:
			if e := ps.once(seen, "REPLICATION", "REPLICATION", cl.Pos); e != nil {
				return nil, e
			}
			v, e := ps.number(cl.Replication, 1, math.MaxInt16, "REPLICATION", replicationRange)
			if e != nil {
				return nil, e
			}
			n := int16(v)
			c.Replication = &n
		default:
			if e := ps.once(seen, "WITH", "WITH", cl.Pos); e != nil {
				return nil, e
			}
			names := map[string]bool{}
			for _, cfg := range cl.With {
				name, e := ps.name(cfg.Name, "config")
				if e != nil {
					return nil, e
				}
				if names[name] {
					return nil, ps.errAt(cfg.Name.Pos, "config %s given twice", name)
				}
				names[name] = true
				value, e := ps.configValue(cfg.Value)
				if e != nil {
					return nil, e
				}
				c.Configs = append(c.Configs, TopicConfig{Name: name, Value: value})
			}
		}
	}
	return c, nil
}

// configValue accepts 'text', a number or a bare word (compact, lz4), since
// people write retention.ms = 86400000 unquoted.
func (ps *parseState) configValue(g *gConfValue) (string, *Error) {
	if g.Str != "" {
		b, e := ps.unquote(g.Pos, g.Str)
		return string(b), e
	}
	if strings.EqualFold(g.Word, "NULL") {
		return "", ps.errAt(g.Pos, "a topic config value cannot be NULL: leave the config out to get the broker's default, or write 'NULL' in quotes if you mean the word")
	}
	return g.Num + g.Word + g.Dur, nil
}
