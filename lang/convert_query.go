package lang

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// scope says what an expression may name and contain where it is written.
type scope struct {
	stmt       string   // "records" or the SHOW / DESCRIBE statement, for messages
	columns    []string // the column names allowed
	record     bool     // JSON paths allowed on key and value
	aggregates bool     // aggregate calls allowed (SELECT list, ORDER BY of an aggregating SELECT)
	clause     string   // WHERE, GROUP BY, ORDER BY or the SELECT list, for messages
}

func recordScope(aggregates bool) scope {
	clause := "WHERE"
	if aggregates {
		clause = "the SELECT list"
	}
	return scope{stmt: "records", columns: RecordColumns, record: true, aggregates: aggregates, clause: clause}
}

// funcArity is each function's argument count: min and max (-1: any).
var funcArity = map[string][2]int{
	"length": {1, 1}, "lower": {1, 1}, "upper": {1, 1}, "coalesce": {1, -1}, "header": {1, 1},
	"count": {1, 1}, "min": {1, 1}, "max": {1, 1}, "sum": {1, 1}, "avg": {1, 1},
}

const funcList = "length, lower, upper, coalesce, header and the aggregates count, min, max, sum, avg"

// expr converts a parsed expression, reporting the first deferred problem
// and checking names and aggregates against sc.
func (ps *parseState) expr(n gExprNode, sc scope) (Expr, *Error) {
	g := n.(*gExpr)
	if len(g.errs) > 0 {
		se := g.errs[0]
		e := ps.errAt(se.pos, "%s", se.msg)
		e.Hint = se.hint
		return nil, e
	}
	if e := ps.check(g, g.X, sc, false); e != nil {
		return nil, e
	}
	return g.X, nil
}

func (ps *parseState) check(g *gExpr, x Expr, sc scope, inAggregate bool) *Error {
	pos := g.pos[x]
	switch x := x.(type) {
	case *Column:
		return ps.checkColumn(pos, x, sc)
	case *Call:
		arity, ok := funcArity[x.Name]
		if !ok {
			e := ps.errAt(pos, "unknown function %s", x.Name)
			e.Hint = "the functions are " + funcList
			return e
		}
		agg := x.IsAggregate()
		if agg && inAggregate {
			return ps.errAt(pos, "aggregate %s inside another aggregate", x.Name)
		}
		if agg && !sc.aggregates {
			e := ps.errAt(pos, "aggregate %s is not allowed in %s", x.Name, sc.clause)
			switch {
			case sc.stmt != "records":
				e.Hint = "aggregates are for SELECT over records, as in SELECT count(*) FROM orders"
			case sc.clause == "WHERE":
				e.Hint = "WHERE filters records before they are aggregated; aggregates belong in the SELECT list and ORDER BY"
			}
			return e
		}
		if x.Star && x.Name != "count" {
			return ps.errAt(pos, "%s(*) is not a function: only count takes *", x.Name)
		}
		if x.Distinct && x.Name != "count" {
			return ps.errAt(pos, "DISTINCT is only for count: count(DISTINCT e)")
		}
		n := len(x.Args)
		if x.Star {
			n = 1
		}
		if n < arity[0] || arity[1] >= 0 && n > arity[1] {
			want := fmt.Sprintf("%d argument", arity[0])
			if arity[0] != 1 {
				want += "s"
			}
			if arity[1] < 0 {
				want = fmt.Sprintf("at least %s", want)
			}
			e := ps.errAt(pos, "%s takes %s, not %d", x.Name, want, n)
			if x.Name == "count" {
				e.Hint = "count(*) counts rows, count(e) rows where e is not NULL, count(DISTINCT e) distinct values"
			}
			return e
		}
		if x.Name == "header" {
			if _, ok := x.Args[0].(*BytesLit); !ok {
				e := ps.errAt(g.pos[x.Args[0]], "header takes the header's name, as in header('trace-id') or header(source)")
				return e
			}
		}
		for _, a := range x.Args {
			if e := ps.check(g, a, sc, inAggregate || agg); e != nil {
				return e
			}
		}
		return nil
	}
	var err *Error
	first := true
	Walk(x, func(c Expr) bool {
		if first {
			first = false
			return true
		}
		if err == nil {
			err = ps.check(g, c, sc, inAggregate)
		}
		return false
	})
	return err
}

func (ps *parseState) checkColumn(pos lexer.Position, c *Column, sc scope) *Error {
	known := false
	for _, k := range sc.columns {
		if k == c.Name {
			known = true
		}
	}
	if !known {
		e := ps.errAt(pos, "unknown column %s", c.Name)
		if sc.record {
			e.Hint = "a record's columns are partition, offset, timestamp, key, value, headers, key_schema_id and value_schema_id; JSON paths start at value or key, as in value.customer.id"
		} else {
			e.Hint = fmt.Sprintf("the columns of %s are %s", sc.stmt, strings.Join(sc.columns, ", "))
		}
		if i := strings.IndexByte(c.Name, '-'); i > 0 && !strings.Contains(c.Name[:i], ".") {
			for _, k := range sc.columns {
				if k == c.Name[:i] {
					e.Hint = fmt.Sprintf("a '-' inside a word is part of the name; for a subtraction write spaces around it: %s - %s", c.Name[:i], c.Name[i+1:])
				}
			}
		}
		return e
	}
	if c.Path != nil && !(sc.record && (c.Name == "key" || c.Name == "value")) {
		e := ps.errAt(pos, "%s has no JSON path: only key and value are read as JSON", c.Name)
		if c.Name == "headers" {
			e.Hint = "a header's value is header('name')"
		}
		return e
	}
	return nil
}

// query converts the [WHERE] [ORDER BY] [LIMIT] of a SHOW or DESCRIBE.
func (ps *parseState) query(gs []*gQueryClause, st Queryable) *Error {
	name := metaName(st)
	sc := scope{stmt: name, columns: metaColumns[name], clause: "WHERE"}
	q := st.MetaQuery()
	seen := clauses{}
	for _, cl := range gs {
		switch {
		case cl.Where != nil:
			if e := ps.once(seen, "WHERE", "WHERE", cl.Pos); e != nil {
				return e
			}
			x, e := ps.expr(cl.Where, sc)
			if e != nil {
				return e
			}
			q.Where = x
		case cl.Order != nil:
			if e := ps.once(seen, "ORDER BY", "ORDER BY", cl.Pos); e != nil {
				return e
			}
			osc := sc
			osc.clause = "ORDER BY"
			for _, it := range cl.Order {
				x, e := ps.expr(it.X, osc)
				if e != nil {
					return e
				}
				q.OrderBy = append(q.OrderBy, OrderItem{X: x, Desc: strings.EqualFold(it.Dir, "DESC")})
			}
		default:
			if e := ps.once(seen, "LIMIT", "LIMIT", cl.Pos); e != nil {
				return e
			}
			v, e := ps.number(cl.Limit, 1, maxLimit, "LIMIT", limitRange)
			if e != nil {
				return e
			}
			q.Limit = &v
		}
	}
	return nil
}

// checkRecordQuery checks what the clauses of a CONSUME or SELECT mean
// together, once all are read: grouping, ORDER BY, LIMIT ALL and FOLLOW.
func (ps *parseState) checkRecordQuery(c *Consume, items []*gSelItem, orderBy []*gOrderItem, seen clauses) *Error {
	aggregating := c.HasAggregates()
	if c.GroupBy != nil && c.Projection == nil {
		e := ps.errAt(seen["GROUP BY"], "GROUP BY needs a SELECT list to say what each group shows")
		e.Hint = "for example: SELECT key, count(*) FROM " + QuoteName(c.Topic) + " GROUP BY key"
		return e
	}
	if aggregating {
		for i, it := range c.Projection {
			g := items[i].X.(*gExpr)
			if bad := ungrouped(it.X, c.GroupBy); bad != nil {
				e := ps.errAt(g.pos[bad], "%s is neither in GROUP BY nor inside an aggregate", FormatExpr(bad))
				e.Hint = "each group shows one row: add it to GROUP BY, or aggregate it, as in max(" + FormatExpr(bad) + ")"
				return e
			}
		}
	}
	for _, it := range orderBy {
		g := it.X.(*gExpr)
		item := OrderItem{Desc: strings.EqualFold(it.Dir, "DESC")}
		if n, ok := g.X.(*IntLit); ok && len(g.errs) == 0 && startsWithDigit(ps.src, g.Pos) {
			// A number is a column's position, as in SQL: ORDER BY 2 is
			// the second column, not the constant 2 (which orders nothing).
			cols := len(c.Projection)
			if cols == 0 {
				cols = 6 // CONSUME and SELECT *: the six record columns
			}
			if n.V < 1 || n.V > int64(cols) {
				e := ps.errAt(g.Pos, "ORDER BY %d: a number in ORDER BY is a column's position, and the result has %d columns", n.V, cols)
				e.Hint = fmt.Sprintf("order by a position from 1 to %d, or by an expression", cols)
				return e
			}
			if c.Projection != nil {
				item.X, item.Alias = c.Projection[n.V-1].X, int(n.V)
			} else {
				item.X = &Column{Name: RecordColumns[n.V-1]}
			}
		}
		if col, ok := g.X.(*Column); ok && col.Path == nil && len(g.errs) == 0 {
			for i, p := range c.Projection {
				if p.As != "" && strings.EqualFold(p.As, col.Name) {
					item.X, item.Alias = col, i+1
					break
				}
			}
		}
		if item.Alias == 0 && item.X == nil {
			sc := recordScope(aggregating)
			sc.clause = "ORDER BY"
			x, e := ps.expr(g, sc)
			if e != nil {
				return e
			}
			if aggregating {
				if bad := ungrouped(x, c.GroupBy); bad != nil {
					e := ps.errAt(g.pos[bad], "ORDER BY %s: it is neither in GROUP BY nor inside an aggregate", FormatExpr(bad))
					e.Hint = "the rows are groups: order by a GROUP BY expression, an aggregate, or a SELECT item's AS name"
					return e
				}
			}
			item.X = x
		}
		c.OrderBy = append(c.OrderBy, item)
	}
	if c.LimitAll && c.OrderBy != nil {
		e := ps.errAt(seen["LIMIT"], "ORDER BY with LIMIT ALL: ORDER BY keeps the top LIMIT rows in memory, and LIMIT ALL would keep every record")
		e.Hint = "give a LIMIT (at most 1000000), or drop ORDER BY to stream every record"
		return e
	}
	if !c.Follow {
		return nil
	}
	at := seen["FOLLOW"]
	switch {
	case aggregating:
		return ps.errAt(at, "FOLLOW cannot be used with aggregates or GROUP BY: they answer once, at the end of the range")
	case c.OrderBy != nil:
		return ps.errAt(at, "FOLLOW cannot be used with ORDER BY: new records arrive in log order")
	case c.LimitAll:
		e := ps.errAt(seen["LIMIT"], "FOLLOW with LIMIT ALL: FOLLOW has no end")
		e.Hint = "FROM NEWEST LIMIT n FOLLOW shows the last n records first; a forward read with FOLLOW reads to the end and goes on"
		return e
	}
	forward := c.From != nil && c.From.Kind != FromNewest && c.From.Kind != FromTail
	if forward && c.Limit != nil {
		e := ps.errAt(seen["LIMIT"], "a forward read with FOLLOW has no LIMIT: it reads to the end of the log and then follows new records")
		e.Hint = "drop LIMIT, or write FROM NEWEST LIMIT n FOLLOW to see the last n records first"
		return e
	}
	return nil
}

// startsWithDigit reports whether the expression at pos is written as a
// bare number: ORDER BY 2 is a position, ORDER BY -(-2) or (2) the constant.
func startsWithDigit(src string, pos lexer.Position) bool {
	return pos.Offset < len(src) && src[pos.Offset] >= '0' && src[pos.Offset] <= '9'
}

// ungrouped returns the first part of x that an aggregating SELECT cannot
// show: a column outside any aggregate and outside every GROUP BY
// expression. nil means x is fine.
func ungrouped(x Expr, groupBy []Expr) Expr {
	var bad Expr
	var visit func(Expr) bool
	visit = func(e Expr) bool {
		if bad != nil {
			return false
		}
		for _, g := range groupBy {
			if exprEqual(e, g) {
				return false
			}
		}
		switch e := e.(type) {
		case *Call:
			if e.IsAggregate() {
				return false
			}
		case *Column:
			bad = e
			return false
		}
		return true
	}
	Walk(x, visit)
	return bad
}

// exprEqual compares two expressions by their canonical text, which is
// what the user sees (GROUP BY value.x and SELECT value.x match).
func exprEqual(a, b Expr) bool { return FormatExpr(a) == FormatExpr(b) }

var _ = math.MaxInt64

// groupItem is one GROUP BY item. As in PostgreSQL, a number is a SELECT
// item's position (GROUP BY 1) and a bare name that is no record column
// is a SELECT item's AS name (SELECT value.customer AS c ... GROUP BY c):
// both stand for that item's expression. Anything else is an expression.
func (ps *parseState) groupItem(node gExprNode, items []SelectItem) (Expr, *Error) {
	g, ok := node.(*gExpr)
	if !ok {
		return ps.expr(node, recordScope(false))
	}
	if n, ok := g.X.(*IntLit); ok && len(g.errs) == 0 && startsWithDigit(ps.src, g.Pos) {
		if n.V < 1 || n.V > int64(len(items)) {
			e := ps.errAt(g.Pos, "GROUP BY %d: a number in GROUP BY is a SELECT item's position, and the SELECT list has %d items", n.V, len(items))
			e.Hint = fmt.Sprintf("group by a position from 1 to %d, or by an expression", len(items))
			return nil, e
		}
		it := items[n.V-1]
		if c, ok := it.X.(*Call); ok && c.IsAggregate() {
			e := ps.errAt(g.Pos, "GROUP BY %d: item %d is an aggregate (%s), which cannot be grouped by", n.V, n.V, FormatExpr(it.X))
			e.Hint = "group by the items that are not aggregates"
			return nil, e
		}
		return it.X, nil
	}
	if col, ok := g.X.(*Column); ok && col.Path == nil && len(g.errs) == 0 && !slices.Contains(RecordColumns, strings.ToLower(col.Name)) {
		for _, it := range items {
			if it.As != "" && strings.EqualFold(it.As, col.Name) {
				if c, ok := it.X.(*Call); ok && c.IsAggregate() {
					e := ps.errAt(g.Pos, "GROUP BY %s: %s is an aggregate (%s), which cannot be grouped by", col.Name, col.Name, FormatExpr(it.X))
					e.Hint = "group by the items that are not aggregates"
					return nil, e
				}
				return it.X, nil
			}
		}
	}
	return ps.expr(node, recordScope(false))
}
