package eval

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// MaxGroups is how many groups an aggregating SELECT may hold in memory.
const MaxGroups = 100000

// TooManyGroupsError says a GROUP BY made more than MaxGroups groups.
type TooManyGroupsError struct{ Limit int }

func (e *TooManyGroupsError) Error() string {
	return fmt.Sprintf("GROUP BY made more than %d groups, the limit kql keeps in memory: narrow the range (FROM, PARTITION, WHERE) or group by fewer distinct values", e.Limit)
}

// Aggregation runs a SELECT with aggregates and/or GROUP BY over records:
// Add each record that passed WHERE, then Rows. Groups are keyed by their
// GROUP BY values; accumulators are count, count(DISTINCT), min, max, sum
// and avg.
type Aggregation struct {
	c      *Compiler
	keys   []*Expr // GROUP BY, evaluated per record
	args   []node  // each aggregate's argument, per record (nil for count(*))
	specs  []*lang.Call
	items  []node // the SELECT list, evaluated per group
	cols   []result.Column
	order  []node // ORDER BY, evaluated per group
	desc   []bool
	groups map[string]*group
	list   []*group
	cur    *group
	keyBuf []byte
	vals   []Value
	limit  int
}

type group struct {
	keys []Value
	accs []accumulator
}

// Grouping is what an aggregating SELECT says about its rows: the SELECT
// list, GROUP BY and ORDER BY (its WHERE, LIMIT and source are the
// caller's).
type Grouping struct {
	Items   []lang.SelectItem
	GroupBy []lang.Expr
	OrderBy []lang.OrderItem
}

// GroupingOf is the Grouping of a SELECT.
func GroupingOf(st *lang.Consume) Grouping {
	return Grouping{Items: st.Projection, GroupBy: st.GroupBy, OrderBy: st.OrderBy}
}

// NewAggregation compiles g on c, which must be a record compiler.
func NewAggregation(c *Compiler, gr Grouping) (*Aggregation, error) {
	a := &Aggregation{c: c, groups: map[string]*group{}, limit: MaxGroups}
	for _, g := range gr.GroupBy {
		x, err := c.Compile(g)
		if err != nil {
			return nil, err
		}
		a.keys = append(a.keys, x)
	}
	lookup := func(e lang.Expr) (node, error) {
		text := lang.FormatExpr(e)
		for i, g := range gr.GroupBy {
			if lang.FormatExpr(g) == text {
				return &groupKeyNode{a: a, i: i}, nil
			}
		}
		call, ok := e.(*lang.Call)
		if !ok || !call.IsAggregate() {
			return nil, nil
		}
		for i, s := range a.specs {
			if lang.FormatExpr(s) == text {
				return &aggResultNode{a: a, i: i}, nil
			}
		}
		var arg node
		if !call.Star {
			n, err := c.compile(call.Args[0], nil)
			if err != nil {
				return nil, err
			}
			arg = n
		}
		a.specs = append(a.specs, call)
		a.args = append(a.args, arg)
		return &aggResultNode{a: a, i: len(a.specs) - 1}, nil
	}
	if err := uniqueNames(gr.Items); err != nil {
		return nil, err
	}
	for _, it := range gr.Items {
		n, err := c.compile(it.X, lookup)
		if err != nil {
			return nil, err
		}
		a.items = append(a.items, n)
		a.cols = append(a.cols, result.Column{Name: it.Name(), Type: c.typeOf(it.X)})
	}
	for _, o := range gr.OrderBy {
		var n node
		if o.Alias > 0 {
			n = a.items[o.Alias-1]
		} else {
			var err error
			if n, err = c.compile(o.X, lookup); err != nil {
				return nil, err
			}
		}
		a.order = append(a.order, n)
		a.desc = append(a.desc, o.Desc)
	}
	return a, nil
}

// SetMaxGroups lowers the group limit (tests).
func (a *Aggregation) SetMaxGroups(n int) { a.limit = n }

// Columns are the SELECT list's columns.
func (a *Aggregation) Columns() []result.Column { return a.cols }

// Add adds the compiler's current record (SetRecord) to its group.
func (a *Aggregation) Add() error {
	e := &a.c.env
	a.keyBuf = a.keyBuf[:0]
	a.vals = a.vals[:0]
	for _, k := range a.keys {
		v := k.root.eval(e)
		a.vals = append(a.vals, v)
		a.keyBuf = appendKey(a.keyBuf, v)
	}
	g, ok := a.groups[string(a.keyBuf)]
	if !ok {
		if len(a.list) >= a.limit {
			return &TooManyGroupsError{Limit: a.limit}
		}
		g = a.newGroup()
		for _, v := range a.vals {
			g.keys = append(g.keys, v.Clone())
		}
		a.groups[string(a.keyBuf)] = g
		a.list = append(a.list, g)
	}
	for i, acc := range g.accs {
		v := Value{K: Int, I: 1} // count(*) counts rows
		if a.args[i] != nil {
			v = a.args[i].eval(e)
		}
		acc.add(e, v)
	}
	return e.err
}

func (a *Aggregation) newGroup() *group {
	g := &group{}
	for _, s := range a.specs {
		g.accs = append(g.accs, newAccumulator(s))
	}
	return g
}

// Groups is how many groups there are so far.
func (a *Aggregation) Groups() int { return len(a.list) }

// Rows returns one row per group, sorted by ORDER BY (else in the order
// the groups first appeared), at most limit rows (limit <= 0: all). With
// no GROUP BY there is always exactly one row, also over no records. An
// error is the first an evaluation met (Compiler.Err), also one from the
// records added.
func (a *Aggregation) Rows(limit int) ([]result.Row, error) {
	groups := a.list
	if len(a.keys) == 0 && len(groups) == 0 {
		groups = []*group{a.newGroup()}
	}
	e := &a.c.env
	if e.err != nil {
		return nil, e.err
	}
	e.inGroup = true
	defer func() { e.inGroup = false }()
	type sorted struct {
		g    *group
		keys []Value
	}
	ss := make([]sorted, len(groups))
	for i, g := range groups {
		a.cur = g
		ss[i].g = g
		for _, o := range a.order {
			ss[i].keys = append(ss[i].keys, o.eval(e).Clone())
		}
	}
	if len(a.order) > 0 {
		slices.SortStableFunc(ss, func(x, y sorted) int { return CompareKeys(x.keys, y.keys, a.desc) })
	}
	if limit > 0 && len(ss) > limit {
		ss = ss[:limit]
	}
	rows := make([]result.Row, 0, len(ss))
	for _, s := range ss {
		a.cur = s.g
		row := make(result.Row, len(a.items))
		for i, it := range a.items {
			row[i] = it.eval(e).Any(a.cols[i].Type)
		}
		rows = append(rows, row)
	}
	if e.err != nil {
		return nil, e.err
	}
	return rows, nil
}

type groupKeyNode struct {
	a *Aggregation
	i int
}

func (n *groupKeyNode) eval(e *env) Value {
	if n.a.cur == nil {
		return null
	}
	return n.a.cur.keys[n.i]
}

type aggResultNode struct {
	a *Aggregation
	i int
}

func (n *aggResultNode) eval(e *env) Value {
	if n.a.cur == nil {
		return null
	}
	acc := n.a.cur.accs[n.i]
	if s, ok := acc.(*sum); ok && s.pastRange() {
		e.fail(&RangeError{Expr: s.text, What: "the sum " + s.big.String(), Where: e.where(), Sum: true})
		return null
	}
	return acc.result()
}

// appendKey encodes v so that equal values, and only those, encode alike.
func appendKey(b []byte, v Value) []byte {
	b = append(b, byte(v.K))
	switch v.K {
	case Bool, Int, Time:
		b = binary.BigEndian.AppendUint64(b, uint64(v.I))
	case Float:
		if v.F == math.Trunc(v.F) && math.Abs(v.F) < 1<<62 { // 2.0 groups with 2
			b[len(b)-1] = byte(Int)
			b = binary.BigEndian.AppendUint64(b, uint64(int64(v.F)))
		} else {
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.F))
		}
	case Bytes:
		b = binary.AppendUvarint(b, uint64(len(v.B)))
		b = append(b, v.B...)
	case Headers:
		b = binary.AppendUvarint(b, uint64(len(v.H)))
		for _, h := range v.H {
			b = binary.AppendUvarint(b, uint64(len(h.Key)))
			b = append(b, h.Key...)
			if h.Value == nil {
				b = append(b, 0)
			} else {
				b = append(b, 1)
				b = binary.AppendUvarint(b, uint64(len(h.Value)))
				b = append(b, h.Value...)
			}
		}
	}
	return b
}

// accumulator folds one aggregate over a group's records.
type accumulator interface {
	add(e *env, v Value)
	result() Value
}

func newAccumulator(c *lang.Call) accumulator {
	text := lang.FormatExpr(c)
	switch c.Name {
	case "count":
		if c.Distinct {
			return &countDistinct{seen: map[string]struct{}{}}
		}
		return &count{}
	case "min":
		return &minMax{text: text}
	case "max":
		return &minMax{max: true, text: text}
	case "sum":
		return &sum{text: text}
	}
	return &sum{avg: true, text: text}
}

// count is count(*) (every row: the caller passes a non-NULL) and count(e).
type count struct{ n int64 }

func (a *count) add(_ *env, v Value) {
	if v.K != Null {
		a.n++
	}
}
func (a *count) result() Value { return Value{K: Int, I: a.n} }

type countDistinct struct {
	seen map[string]struct{}
	buf  []byte
}

func (a *countDistinct) add(_ *env, v Value) {
	if v.K == Null {
		return
	}
	a.buf = appendKey(a.buf[:0], v)
	if _, ok := a.seen[string(a.buf)]; !ok {
		a.seen[string(a.buf)] = struct{}{}
	}
}
func (a *countDistinct) result() Value { return Value{K: Int, I: int64(len(a.seen))} }

// minMax keeps the least or greatest value. A group whose values are of
// kinds that do not compare (a number and a text) has no least or
// greatest: its result is NULL, with the warning, whatever order the
// records came in (the first value of a second kind always meets the
// kept value of the first, so mixed is set exactly when the group mixes).
type minMax struct {
	max   bool
	v     Value
	mixed bool
	text  string
}

func (a *minMax) add(e *env, v Value) {
	if v.K == Null {
		return
	}
	if a.v.K == Null && !a.mixed {
		a.v = v.Clone()
		return
	}
	c, ok := compare(e, v, a.v, a.text)
	if !ok {
		a.mixed = true
		return
	}
	if c < 0 && !a.max || c > 0 && a.max {
		a.v = v.Clone()
	}
}

func (a *minMax) result() Value {
	if a.mixed {
		return null
	}
	return a.v
}

// sum is sum(e) and avg(e): integers sum exactly, decimals as float64;
// text is skipped with a warning. A sum of integers whose total is past
// the 64-bit range is an error (RangeError), as + is; a running sum that
// passes the range on the way goes on exactly (in big), so the answer
// does not depend on the order the records came in (9223372036854775807,
// 1, -1 sums as 9223372036854775807, -1, 1 does). With decimals among
// them, the result is the integers' exact sum plus the decimals' sum;
// avg is a decimal anyway.
type sum struct {
	avg   bool
	n     int64
	i     int64
	big   *big.Int // the exact sum once i could not hold it; nil before
	f     float64
	float bool
	text  string
}

func (a *sum) add(e *env, v Value) {
	switch v.K {
	case Null:
		return
	case Int:
		// The integers sum exactly also beside decimals (f sums those):
		// a huge running sum that cancels out is not rounded on the way.
		if a.big != nil {
			a.big.Add(a.big, big.NewInt(v.I))
		} else if s, ok := addInt(a.i, v.I); ok {
			a.i = s
		} else {
			a.big = new(big.Int).SetInt64(a.i)
			a.big.Add(a.big, big.NewInt(v.I))
		}
	case Float:
		a.float = true
		a.f += v.F
	default:
		e.warn.notNumber(e, a.text, v.K)
		return
	}
	a.n++
}

func (a *sum) result() Value {
	if a.n == 0 {
		return null
	}
	if !a.float && !a.avg {
		switch {
		case a.big == nil:
			return Value{K: Int, I: a.i}
		case a.big.IsInt64():
			return Value{K: Int, I: a.big.Int64()}
		}
		return null // pastRange: aggResultNode reports it
	}
	total := a.exact() + a.f
	if a.avg {
		return Value{K: Float, F: total / float64(a.n)}
	}
	return Value{K: Float, F: total}
}

// exact is the integers' sum as a decimal.
func (a *sum) exact() float64 {
	if a.big != nil {
		f, _ := new(big.Float).SetInt(a.big).Float64()
		return f
	}
	return float64(a.i)
}

// pastRange reports whether sum()'s integer total is past the 64-bit range.
func (a *sum) pastRange() bool {
	return !a.avg && !a.float && a.big != nil && !a.big.IsInt64()
}

// CompareKeys orders two rows' ORDER BY keys: NULL after every value
// (before, for DESC), values of kinds that do not compare by kind.
func CompareKeys(a, b []Value, desc []bool) int {
	for i := range a {
		c := compareForSort(a[i], b[i])
		if i < len(desc) && desc[i] {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func compareForSort(a, b Value) int {
	switch {
	case a.K == Null && b.K == Null:
		return 0
	case a.K == Null:
		return 1
	case b.K == Null:
		return -1
	}
	if c, ok := Compare(a, b); ok {
		return c
	}
	if c := cmp.Compare(sortRank(a), sortRank(b)); c != 0 {
		return c
	}
	return 0 // two headers lists, or two NaNs
}

// sortRank orders the kinds that do not compare, so that ORDER BY is one
// total order whatever the records' order: FALSE < TRUE < numbers (and
// timestamps, which compare with them) < a decimal NaN < text < headers;
// NULL is apart (last, first with DESC).
func sortRank(v Value) int {
	switch v.K {
	case Bool:
		return 0
	case Int, Time:
		return 1
	case Float:
		if math.IsNaN(v.F) {
			return 2
		}
		return 1
	case Bytes:
		return 3
	}
	return 4
}
