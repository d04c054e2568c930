package exec

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kql-dev/kql/lang"
)

// The query generator: random queries over the whole record grammar, each
// written twice, as KafkaQL and as its SQL translation (the rules are in
// differential_sql_test.go). A seed gives the same queries every time.

// diffQuery is one generated query.
type diffQuery struct {
	kql string
	sql string // its rows come in the one order kql's must keep
}

// gx is a generated expression: its KafkaQL and its SQL.
type gx struct{ k, s string }

type queryGen struct {
	r      *rand.Rand
	d      *diffData
	listed []string // the partitions the last positions() named
}

func newQueryGen(seed uint64, d *diffData) *queryGen {
	return &queryGen{r: rand.New(rand.NewPCG(seed, 0x23)), d: d}
}

func (g *queryGen) pick(n int) int { return g.r.IntN(n) }

func (g *queryGen) chance(pct int) bool { return g.r.IntN(100) < pct }

// cached is the column of table r that holds sqlExpr, computed once per
// record when the reference was loaded (diffColumns): JSON paths and
// header lookups, which are most of the reference's work otherwise.
func (g *queryGen) cached(sqlExpr string) string {
	for _, c := range diffColumns() {
		if c.expr == sqlExpr {
			return "q." + c.name
		}
	}
	panic("no precomputed column for " + sqlExpr)
}

type diffColumn struct{ name, expr string }

// diffColumns are the values the reference computes per record at load:
// every path the generator reads, header('name') for every name it asks,
// the headers list and its length.
var diffColumns = sync.OnceValue(func() []diffColumn {
	var cs []diffColumn
	for i, p := range diffPaths {
		cs = append(cs, diffColumn{fmt.Sprintf("path%d", i), sqlPath("r."+p.col, p.path)})
	}
	for _, name := range diffHeaderNames {
		cs = append(cs, diffColumn{"header_" + name, strings.ReplaceAll(sqlHeader(name), "q.", "r.")})
	}
	cs = append(cs, diffColumn{"headers_list", strings.ReplaceAll(sqlHeaders(), "q.", "r.")},
		diffColumn{"headers_count", strings.ReplaceAll(sqlHeaderCount(), "q.", "r.")})
	return cs
})

var diffHeaderNames = []string{"src", "trace", "dup", "none"}

// paths: every member the records have, and some they lack.
var diffPaths = []struct {
	kql, col, path string
	kind           byte // what it mostly is: n number, t text, b boolean, a anything
}{
	{"value.n", "vj", "$.n", 'n'}, {"value.price", "vj", "$.price", 'n'}, {"value.big", "vj", "$.big", 'n'},
	{"value.nested.x", "vj", "$.nested.x", 'n'}, {"value.items[0]", "vj", "$.items[0]", 'a'},
	{"value.items[1].qty", "vj", "$.items[1].qty", 'n'}, {"key.id", "kj", "$.id", 'n'}, {"value[0]", "vj", "$[0]", 'a'},
	{"value.s", "vj", "$.s", 't'}, {"value.nested.y", "vj", "$.nested.y", 't'}, {"value.tags[0]", "vj", "$.tags[0]", 't'},
	{"value['odd-name']", "vj", `$."odd-name"`, 't'}, {"value.items[0].sku", "vj", "$.items[0].sku", 't'},
	{"value.ok", "vj", "$.ok", 'b'},
	{"value.nested", "vj", "$.nested", 'a'}, {"value.items", "vj", "$.items", 'a'}, {"value.tags", "vj", "$.tags", 'a'},
	{"value.mixed", "vj", "$.mixed", 'a'}, {"value.nul", "vj", "$.nul", 'a'}, {"value.absent", "vj", "$.absent", 'a'},
	{"value[2].a", "vj", "$[2].a", 'a'}, {"value.id", "vj", "$.id", 'n'},
}

func (g *queryGen) path(kind byte) gx {
	var ps []int
	for i, p := range diffPaths {
		if p.kind == kind || kind == 'a' || g.chance(5) {
			ps = append(ps, i)
		}
	}
	p := diffPaths[ps[g.pick(len(ps))]]
	return gx{p.kql, g.cached(sqlPath("r."+p.col, p.path))}
}

func (g *queryGen) intLit() gx {
	n := []int64{0, 1, 2, 3, 7, 10, 20, -1, -5, 100, 1000, 9223372036854775807, 3037000500}[g.pick(13)]
	if n < 0 {
		return gx{fmt.Sprint(n), fmt.Sprintf("(%d)", n)}
	}
	return gx{fmt.Sprint(n), fmt.Sprint(n)}
}

func (g *queryGen) floatLit() gx {
	f := []string{"2.5", "0.5", "9.5", "12.5", "-0.25", "100.0", "0.0", "1.5"}[g.pick(8)]
	if f[0] == '-' {
		return gx{f, "(" + f + ")"}
	}
	return gx{f, f}
}

var diffTexts = append(slices.Clone(diffStrings), "hello world", "caf\xe9", "k-010", "paid ", "web", "kql", "Paid")

func (g *queryGen) textLit() gx {
	s := []byte(diffTexts[g.pick(len(diffTexts))])
	return gx{lang.Quote(s), sqlBlob(s)}
}

func (g *queryGen) headerCall() gx {
	name := diffHeaderNames[g.pick(len(diffHeaderNames))]
	k := "header(" + lang.Quote([]byte(name)) + ")"
	if g.chance(20) {
		k = "header(" + name + ")"
	}
	return gx{k, g.cached(strings.ReplaceAll(sqlHeader(name), "q.", "r."))}
}

func (g *queryGen) num(depth int) gx {
	if depth <= 0 || g.chance(35) {
		switch g.pick(9) {
		case 0:
			return gx{"partition", "q.p"}
		case 1:
			return gx{"offset", "q.off"}
		case 2:
			return g.intLit()
		case 3:
			return g.floatLit()
		case 4:
			x := g.textOrAny(0)
			return gx{"length(" + x.k + ")", sqlTextOnly(x.s, "length("+x.s+")")}
		case 5:
			return gx{"length(headers)", g.cached(strings.ReplaceAll(sqlHeaderCount(), "q.", "r."))}
		}
		return g.path('n')
	}
	switch g.pick(7) {
	case 0, 1, 2:
		a, b := g.num(depth-1), g.num(depth-1)
		op := []string{"+", "-", "*", "/", "%"}[g.pick(5)]
		return gx{"(" + a.k + " " + op + " " + b.k + ")", sqlArith(a.s, op, b.s)}
	case 3:
		a := g.num(depth - 1)
		return gx{"-" + paren(a.k), sqlArith("0", "-", a.s)}
	case 4:
		return g.coalesce(depth, g.num)
	case 5:
		// A path that is text in some records: arithmetic on text is NULL.
		a, b := g.path('a'), g.num(depth-1)
		return gx{"(" + a.k + " + " + b.k + ")", sqlArith(a.s, "+", b.s)}
	}
	x := g.text(depth - 1)
	return gx{"length(" + x.k + ")", sqlTextOnly(x.s, "length("+x.s+")")}
}

func paren(k string) string {
	if strings.HasPrefix(k, "(") || !strings.ContainsAny(k, " -") {
		return k
	}
	return "(" + k + ")"
}

func (g *queryGen) text(depth int) gx {
	if depth <= 0 || g.chance(40) {
		switch g.pick(6) {
		case 0:
			return gx{"key", "q.k"}
		case 1:
			return gx{"value", "q.v"}
		case 2:
			return g.textLit()
		case 3:
			return g.headerCall()
		}
		return g.path('t')
	}
	switch g.pick(3) {
	case 0:
		x := g.textOrAny(depth - 1)
		return gx{"lower(" + x.k + ")", sqlTextOnly(x.s, "kql_lower("+x.s+")")}
	case 1:
		x := g.textOrAny(depth - 1)
		return gx{"upper(" + x.k + ")", sqlTextOnly(x.s, "kql_upper("+x.s+")")}
	}
	return g.coalesce(depth, g.text)
}

func (g *queryGen) textOrAny(depth int) gx {
	if g.chance(70) {
		return g.text(depth)
	}
	return g.any(depth)
}

func (g *queryGen) coalesce(depth int, more func(int) gx) gx {
	args := []gx{g.any(0)}
	if g.chance(30) {
		args[0] = gx{"NULL", "NULL"}
	}
	for range 1 + g.pick(2) {
		args = append(args, more(depth-1))
	}
	var k, s []string
	for _, a := range args {
		k, s = append(k, a.k), append(s, a.s)
	}
	return gx{"coalesce(" + strings.Join(k, ", ") + ")", "coalesce(" + strings.Join(s, ", ") + ")"}
}

func (g *queryGen) any(depth int) gx {
	switch g.pick(6) {
	case 0:
		return g.num(depth)
	case 1:
		return g.text(depth)
	case 2:
		if g.chance(50) {
			return gx{"value.ok", g.cached(sqlPath("r.vj", "$.ok"))}
		}
		return g.boolean(depth)
	case 3:
		if g.chance(15) {
			return gx{"NULL", "NULL"}
		}
	}
	return g.path('a')
}

// timeLit is a time bound the scan's pushdown and FROM take exactly: at or
// before the last record before the transactions (see diffData.lastPlain).
func (g *queryGen) timeLit() gx {
	var ms int64
	switch g.pick(3) {
	case 0: // exactly a record's timestamp
		var plain []int64
		for _, r := range g.d.recs {
			if r.ts <= g.d.lastPlain {
				plain = append(plain, r.ts)
			}
		}
		ms = plain[g.pick(len(plain))]
	default:
		ms = g.d.first - 10_000 + g.r.Int64N(g.d.lastPlain-g.d.first+10_000)
	}
	switch g.pick(3) {
	case 0:
		return gx{fmt.Sprint(ms), fmt.Sprint(ms)}
	case 1:
		return gx{"TIMESTAMP " + lang.Quote([]byte(time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z"))), fmt.Sprint(ms)}
	}
	// d AGO, in whole seconds, from the session's fixed clock.
	lo := g.d.now.UnixMilli() - g.d.lastPlain
	hi := g.d.now.UnixMilli() - g.d.first + 60_000
	secs := (lo + g.r.Int64N(hi-lo)) / 1000
	secs++ // rounding down may have moved the bound past lastPlain
	return gx{fmt.Sprintf("%ds AGO", secs), fmt.Sprint(g.d.now.UnixMilli() - secs*1000)}
}

var (
	diffLikes  = []string{"%", "p%", "%a%", "a_b", `100\%`, `%\_%`, "k-00_", "%é%", "", "_", `%quo"te%`, "%'%", `%\\%`, "%e", "{%", "[%", "_____", "%1%"}
	diffILikes = []string{"P%", "%A%", "K-00_", "%PAID%", "HELLO%", "%_B"}
	diffRegexs = []string{"^k-0", "a.b", "^$", "[0-9]+", "(?i)paid", "é", `\\`, "^\\{", "x$"}
)

// boolean is a condition; a compound one is in parentheses, for
// comparisons do not chain (a < b < c is an error).
func (g *queryGen) boolean(depth int) gx {
	x := g.condition(depth)
	if strings.Contains(x.k, " ") {
		x.k = "(" + x.k + ")"
	}
	return x
}

func (g *queryGen) condition(depth int) gx {
	if depth <= 0 || g.chance(15) {
		switch g.pick(4) {
		case 0:
			return gx{"TRUE", "'t'"}
		case 1:
			return gx{"FALSE", "'f'"}
		case 2:
			return gx{"NULL", "NULL"}
		}
		return gx{"value.ok", g.cached(sqlPath("r.vj", "$.ok"))}
	}
	op := func() string { return []string{"=", "!=", "<>", "<", "<=", ">", ">="}[g.pick(7)] }
	switch g.pick(14) {
	case 0, 1:
		a, b := g.num(depth-1), g.num(depth-1)
		o := op()
		return gx{a.k + " " + o + " " + b.k, sqlCompare(a.s, o, b.s)}
	case 2:
		a, b := g.text(depth-1), g.text(depth-1)
		o := op()
		return gx{a.k + " " + o + " " + b.k, sqlCompare(a.s, o, b.s)}
	case 3:
		a, b := g.any(depth-1), g.any(depth-1)
		o := op()
		return gx{a.k + " " + o + " " + b.k, sqlCompare(a.s, o, b.s)}
	case 4:
		// timestamp against a time bound: a top-level conjunct is pushed
		// down, elsewhere it filters.
		t, o := g.timeLit(), op()
		if o == "!=" || o == "<>" {
			o = ">="
		}
		return gx{"timestamp " + o + " " + t.k, sqlCompare("q.ts", o, t.s)}
	case 5:
		x, fold, not := g.textOrAny(depth-1), g.chance(25), g.chance(25)
		pats := diffLikes
		if fold {
			pats = diffILikes
		}
		p := pats[g.pick(len(pats))]
		kw := map[[2]bool]string{{false, false}: "LIKE", {false, true}: "NOT LIKE", {true, false}: "ILIKE", {true, true}: "NOT ILIKE"}[[2]bool{fold, not}]
		return gx{x.k + " " + kw + " " + lang.Quote([]byte(p)), sqlLike(x.s, p, fold, not)}
	case 6:
		x, not := g.textOrAny(depth-1), g.chance(25)
		p := diffRegexs[g.pick(len(diffRegexs))]
		kw := "~"
		if not {
			kw = "!~"
		}
		return gx{x.k + " " + kw + " " + lang.Quote([]byte(p)), sqlRegex(x.s, p, not)}
	case 7:
		x, not := g.any(depth-1), g.chance(30)
		var items []gx
		for range 1 + g.pick(3) {
			switch g.pick(4) {
			case 0:
				items = append(items, g.intLit())
			case 1:
				items = append(items, g.textLit())
			case 2:
				items = append(items, g.floatLit())
			default:
				if g.chance(30) {
					items = append(items, gx{"NULL", "NULL"})
				} else {
					items = append(items, g.any(0))
				}
			}
		}
		var ks, ss []string
		for _, it := range items {
			ks, ss = append(ks, it.k), append(ss, it.s)
		}
		kw := "IN"
		if not {
			kw = "NOT IN"
		}
		return gx{x.k + " " + kw + " (" + strings.Join(ks, ", ") + ")", sqlIn(x.s, ss, not)}
	case 8:
		x, lo, hi, not := g.num(depth-1), g.num(0), g.num(0), g.chance(25)
		kw := "BETWEEN"
		if not {
			kw = "NOT BETWEEN"
		}
		return gx{x.k + " " + kw + " " + lo.k + " AND " + hi.k, sqlBetween(x.s, lo.s, hi.s, not)}
	case 9:
		x, not := g.any(depth-1), g.chance(40)
		kw := "IS NULL"
		if not {
			kw = "IS NOT NULL"
		}
		return gx{paren(x.k) + " " + kw, sqlIsNull(x.s, not)}
	case 10:
		a, b := g.boolean(depth-1), g.boolean(depth-1)
		return gx{"(" + a.k + " AND " + b.k + ")", sqlAnd(a.s, b.s)}
	case 11:
		a, b := g.boolean(depth-1), g.boolean(depth-1)
		return gx{"(" + a.k + " OR " + b.k + ")", sqlOr(a.s, b.s)}
	case 12:
		a := g.boolean(depth - 1)
		return gx{"NOT (" + a.k + ")", sqlNot(a.s)}
	}
	// partition and offset conjuncts the scan pushes down.
	switch g.pick(3) {
	case 0:
		p := g.pick(diffPartitions)
		return gx{fmt.Sprintf("partition = %d", p), sqlCompare("q.p", "=", fmt.Sprint(p))}
	case 1:
		ps := []string{fmt.Sprint(g.pick(diffPartitions)), fmt.Sprint(g.pick(diffPartitions))}
		return gx{"partition IN (" + strings.Join(ps, ", ") + ")", sqlIn("q.p", ps, false)}
	}
	o, n := op(), fmt.Sprint(g.pick(80))
	if o == "!=" || o == "<>" {
		o = "<"
	}
	if g.chance(20) {
		lo, hi := g.pick(60), g.pick(60)
		return gx{fmt.Sprintf("offset BETWEEN %d AND %d", lo, hi), sqlBetween("q.off", fmt.Sprint(lo), fmt.Sprint(hi), false)}
	}
	return gx{"offset " + o + " " + n, sqlCompare("q.off", o, n)}
}

// where is WHERE: a few conjuncts, so that pushdown meets them.
func (g *queryGen) where() gx {
	w := g.boolean(3)
	for g.chance(30) {
		c := g.boolean(2)
		w = gx{w.k + " AND " + c.k, sqlAnd(w.s, c.s)}
	}
	return w
}

// start is FROM start and PARTITION: the KafkaQL clauses and the SQL
// condition on q.p, q.off, q.ts; tail reports a read of the last records.
func (g *queryGen) start(forwardOnly bool) (clauses, cond string, tail bool) {
	var conds []string
	n := 11
	if forwardOnly {
		n = 9
	}
	switch g.pick(n) {
	case 0:
	case 1:
		clauses = " FROM " + []string{"OLDEST", "EARLIEST", "BEGINNING", "START"}[g.pick(4)]
	case 2:
		o := g.pick(70)
		clauses, conds = fmt.Sprintf(" FROM OFFSET %d", o), append(conds, fmt.Sprintf("q.off >= %d", o))
	case 3, 4:
		t := g.timeLit()
		if strings.HasSuffix(t.k, "AGO") {
			clauses = " FROM " + t.k
		} else if strings.HasPrefix(t.k, "TIMESTAMP") {
			clauses = " FROM " + t.k
		} else {
			clauses = " FROM TIMESTAMP " + t.k
		}
		conds = append(conds, "q.ts >= "+t.s)
	case 5, 6:
		k, parts := g.positions()
		clauses = " FROM ANCHOR (" + k + ")"
		// kql rule: FROM ANCHOR and FROM TAIL read only the partitions they list.
		conds = append(conds, "("+strings.ReplaceAll(strings.Join(parts, " OR "), "@", ">=")+")")
	case 7, 8:
	case 9:
		clauses, tail = " FROM "+[]string{"NEWEST", "LATEST", "END"}[g.pick(3)], true
	case 10:
		k, parts := g.positions()
		clauses, tail = " FROM TAIL ("+k+")", true
		conds = append(conds, "("+strings.ReplaceAll(strings.Join(parts, " OR "), "@", "<")+")")
	}
	if g.chance(25) {
		var ps []string
		for p := range diffPartitions {
			if g.chance(50) {
				ps = append(ps, fmt.Sprint(p))
			}
		}
		if len(ps) == 0 {
			ps = []string{"1"}
		}
		if strings.Contains(clauses, "ANCHOR") || strings.Contains(clauses, "TAIL") {
			// PARTITION with a partition the list does not name is an
			// error (README, Expressions): name only listed ones.
			ps = g.listed
		}
		if len(ps) == 1 && g.chance(50) {
			clauses += " PARTITION " + ps[0]
		} else {
			clauses += " PARTITION (" + strings.Join(ps, ", ") + ")"
		}
		conds = append(conds, "q.p IN ("+strings.Join(ps, ", ")+")")
	}
	return clauses, strings.Join(conds, " AND "), tail
}

// positions is a p:o list, and per partition its SQL condition with @
// for the comparison.
func (g *queryGen) positions() (string, []string) {
	var ks, ss []string
	g.listed = nil
	for p := range diffPartitions {
		if len(ks) == 0 && p == diffPartitions-1 || g.chance(50) {
			o := g.pick(90)
			ks = append(ks, fmt.Sprintf("%d:%d", p, o))
			ss = append(ss, fmt.Sprintf("(q.p = %d AND q.off @ %d)", p, o))
			g.listed = append(g.listed, fmt.Sprint(p))
		}
	}
	return strings.Join(ks, ", "), ss
}

// item is one SELECT item: its KafkaQL (with AS) and SQL.
type item struct {
	gx
	name string // the AS name, "" for none
}

func (g *queryGen) projectionItem() gx {
	switch g.pick(12) {
	case 0:
		c := []string{"partition", "offset", "timestamp", "key", "value"}[g.pick(5)]
		return gx{c, map[string]string{"partition": "q.p", "offset": "q.off", "timestamp": "q.ts", "key": "q.k", "value": "q.v"}[c]}
	case 1:
		return gx{"headers", g.cached(strings.ReplaceAll(sqlHeaders(), "q.", "r."))}
	case 2:
		n := []string{"1000", "60000", "0.5"}[g.pick(3)]
		op := []string{"+", "-"}[g.pick(2)]
		return gx{"timestamp " + op + " " + n, sqlArith("q.ts", op, n)}
	case 3:
		return g.headerCall()
	case 4, 5:
		return g.num(2)
	case 6, 7:
		return g.text(2)
	case 8:
		return g.boolean(2)
	}
	return g.any(2)
}

// named gives items AS names where needed (and now and then anyway):
// kql refuses two columns of one name.
func (g *queryGen) named(xs []gx) []item {
	seen := map[string]bool{}
	var out []item
	for i, x := range xs {
		it := item{gx: x}
		// kql rule (issue 23): two items of one name are an error; the
		// name is the expression's canonical text (header(none) and
		// header('none') are one).
		name := x.k
		if st, err := lang.Parse("SELECT " + x.k + ", 1 AS one FROM t"); err == nil {
			name = st.(*lang.Consume).Projection[0].Name()
		}
		// A lone quoted text is the old SELECT topic FROM start (README):
		// with AS it is a projection.
		lone := len(xs) == 1 && (strings.HasPrefix(x.k, "'") || !strings.ContainsAny(x.k, " .(["))
		if seen[name] || lone || g.chance(30) {
			it.name = fmt.Sprintf("a%d", i+1)
		}
		seen[name] = true
		out = append(out, it)
	}
	return out
}

func joinItems(items []item) (string, string) {
	var ks, ss []string
	for _, it := range items {
		k := it.k
		if it.name != "" {
			k += " AS " + it.name
		}
		ks, ss = append(ks, k), append(ss, it.s)
	}
	return strings.Join(ks, ", "), strings.Join(ss, ", ")
}

// limits is LIMIT and SKIP: the KafkaQL clauses and SQL's LIMIT ... OFFSET.
func (g *queryGen) limits(all bool) (string, string) {
	var k string
	n := int64(100) // kql's default LIMIT
	switch g.pick(6) {
	case 0:
	case 1:
		if all {
			k, n = " LIMIT ALL", -1
			break
		}
		fallthrough
	default:
		n = int64(1 + g.pick(30))
		k = fmt.Sprintf(" LIMIT %d", n)
	}
	sql := fmt.Sprintf(" LIMIT %d", n)
	if g.chance(25) {
		skip := 1 + g.pick(20)
		k += fmt.Sprintf(" %s %d", []string{"SKIP", "OFFSET"}[g.pick(2)], skip)
		sql += fmt.Sprintf(" OFFSET %d", skip)
	}
	return k, sql
}

func (g *queryGen) aggregateCall() gx {
	x, _ := g.aggregate()
	return x
}

// aggregate is an aggregate call or arithmetic on them; at reports that
// the value is a timestamp whenever it is an integer (min(timestamp),
// max(timestamp) + 1, not max(timestamp) - min(timestamp)).
func (g *queryGen) aggregate() (_ gx, at bool) {
	var x gx
	switch g.pick(3) {
	case 0:
		x = g.num(1)
	case 1:
		x = g.text(1)
	default:
		x = g.any(1)
	}
	switch g.pick(9) {
	case 0:
		return gx{"count(*)", "count(*)"}, false
	case 1:
		return gx{"count(" + x.k + ")", "count(" + x.s + ")"}, false
	case 2:
		return gx{"count(DISTINCT " + x.k + ")", "count(DISTINCT " + x.s + ")"}, false
	case 3, 4:
		fn := []string{"min", "max"}[g.pick(2)]
		if g.chance(20) {
			return gx{fn + "(timestamp)", fn + "(q.ts)"}, true
		}
		return gx{fn + "(" + x.k + ")", sqlMinMax(fn, x.s)}, false
	case 5, 6:
		return gx{"sum(" + x.k + ")", sqlSum("sum", x.s)}, false
	case 7:
		return gx{"avg(" + x.k + ")", sqlSum("avg", x.s)}, false
	}
	a, at := g.aggregate()
	b, bt := g.intLit(), false
	if g.chance(50) {
		b, bt = g.aggregate()
	}
	op := []string{"+", "-", "*"}[g.pick(3)]
	// A timestamp and an integer make a timestamp; two timestamps make
	// milliseconds (-) or NULL (sqlTimeArith).
	return gx{"(" + a.k + " " + op + " " + b.k + ")", sqlTimeArith(a.s, at, op, b.s, bt)}, at != bt
}

func (g *queryGen) groupKey() gx {
	switch g.pick(10) {
	case 0:
		return gx{"partition", "q.p"}
	case 1:
		return gx{"key", "q.k"}
	case 2:
		return g.headerCall()
	case 3:
		x := g.path('n')
		return gx{"(" + x.k + " % 3)", sqlArith(x.s, "%", "3")}
	case 4:
		x := g.path('t')
		return gx{"lower(" + x.k + ")", sqlTextOnly(x.s, "kql_lower("+x.s+")")}
	case 5:
		return gx{"length(value)", sqlTextOnly("q.v", "length(q.v)")}
	case 6:
		x := g.path('t')
		return gx{"coalesce(" + x.k + ", 'none')", "coalesce(" + x.s + ", " + sqlBlob([]byte("none")) + ")"}
	}
	return g.path('a')
}

// build makes one query.
func (g *queryGen) build(topic string) diffQuery {
	var (
		k, sel, from, order, group string
		where                      = ""
		tail                       bool
		orderBy                    bool
		colSQL                     []string // each result column's SQL
	)
	form := g.pick(10)
	agg := form >= 7
	ob := form == 5 || form == 6
	startK, startCond, isTail := g.start(agg || ob)
	tail = isTail
	var whereK string
	if g.chance(70) {
		w := g.where()
		whereK, where = " WHERE "+w.k, w.s+" = 't'"
	}
	conds := []string{}
	if startCond != "" {
		conds = append(conds, startCond)
	}
	if where != "" {
		conds = append(conds, where)
	}
	cond := ""
	if len(conds) > 0 {
		cond = " WHERE " + strings.Join(conds, " AND ")
	}
	var items []item
	switch {
	case form <= 1: // the six record columns
		k = []string{"CONSUME ", "SELECT * FROM ", "SELECT FROM "}[g.pick(3)] + lang.QuoteName(topic)
		colSQL = []string{"q.p", "q.off", "q.ts", "q.k", "q.v", g.cached(strings.ReplaceAll(sqlHeaders(), "q.", "r."))}
		sel = strings.Join(colSQL, ", ")
	case !agg:
		var xs []gx
		for range 1 + g.pick(4) {
			xs = append(xs, g.projectionItem())
		}
		items = g.named(xs)
		ks, ss := joinItems(items)
		k, sel = "SELECT "+ks+" FROM "+lang.QuoteName(topic), ss
		for _, it := range items {
			colSQL = append(colSQL, it.s)
		}
	default:
		var keys []gx
		if form >= 8 {
			for range 1 + g.pick(2) {
				keys = append(keys, g.groupKey())
			}
		}
		var xs []gx
		for _, key := range keys {
			if g.chance(80) {
				xs = append(xs, key)
			}
		}
		for range 1 + g.pick(3) {
			xs = append(xs, g.aggregateCall())
		}
		g.r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		items = g.named(xs)
		ks, ss := joinItems(items)
		k, sel = "SELECT "+ks+" FROM "+lang.QuoteName(topic), ss
		for _, it := range items {
			colSQL = append(colSQL, it.s)
		}
		if len(keys) > 0 {
			var gk, gs []string
			for _, key := range keys {
				gk, gs = append(gk, key.k), append(gs, key.s)
			}
			k += " GROUP BY " + strings.Join(gk, ", ")
			group = " GROUP BY " + strings.Join(gs, ", ")
		}
	}
	tie := ", q.ts, q.p, q.off"
	if agg {
		tie = ", min(q.ts)"
	}
	if ob || agg && g.chance(50) {
		orderBy = true
		var ok, os []string
		for range 1 + g.pick(2) {
			var x gx
			switch {
			case len(items) > 0 && g.chance(40):
				it := items[g.pick(len(items))]
				x = it.gx
				if it.name != "" {
					x.k = it.name
				}
			case agg:
				x = g.aggregateCall()
			default:
				x = g.any(1)
			}
			if n, err := strconv.Atoi(x.k); err == nil || g.chance(10) {
				// kql rule (as SQL's): a number is a column's position.
				n = 1 + g.pick(len(colSQL))
				x = gx{strconv.Itoa(n), colSQL[n-1]}
			}
			desc := g.chance(40)
			ok = append(ok, x.k+map[bool]string{true: " DESC", false: []string{"", " ASC"}[g.pick(2)]}[desc])
			if x.s == g.cached(strings.ReplaceAll(sqlHeaders(), "q.", "r.")) {
				// kql rule: headers lists do not order; rows tie, in scan order.
				continue
			}
			os = append(os, sqlOrderKey(x.s, desc))
		}
		k += " ORDER BY " + strings.Join(ok, ", ")
		order = " ORDER BY " + strings.Join(append(os, tie[2:]), ", ")
	} else if agg {
		order = " ORDER BY min(q.ts)" // kql rule: groups come in the order they first appeared
	}
	limK, limS := g.limits(!orderBy && !agg && !tail)
	if agg && !orderBy && g.chance(70) {
		limK, limS = "", " LIMIT 100"
	}
	// The clauses in any order, as the grammar allows.
	clauses := []string{startK, whereK, limK}
	g.r.Shuffle(len(clauses), func(i, j int) { clauses[i], clauses[j] = clauses[j], clauses[i] })
	if group != "" || orderBy {
		// GROUP BY and ORDER BY are part of k already, before these.
		k = strings.Replace(k, " FROM "+lang.QuoteName(topic), " FROM "+lang.QuoteName(topic)+startK, 1)
		clauses = []string{whereK, limK}
	}
	k += strings.Join(clauses, "")
	from = ""
	var s string
	switch {
	case tail:
		// kql rule: FROM NEWEST and FROM TAIL are the last LIMIT
		// matches (after SKIP of the newest), shown oldest first.
		s = from + "SELECT * FROM (SELECT " + sel + ", q.ts AS o_ts, q.p AS o_p, q.off AS o_off FROM r AS q" + cond +
			" ORDER BY q.ts DESC, q.p DESC, q.off DESC" + limS + ") ORDER BY o_ts, o_p, o_off"
	case agg:
		s = from + "SELECT " + sel + " FROM r AS q" + cond + group + order + limS
	case orderBy:
		s = from + "SELECT " + sel + " FROM r AS q" + cond + order + limS
	default:
		// kql rule: records come in (timestamp, partition, offset) order.
		s = from + "SELECT " + sel + " FROM r AS q" + cond + " ORDER BY q.ts, q.p, q.off" + limS
	}
	return diffQuery{kql: k, sql: s}
}
