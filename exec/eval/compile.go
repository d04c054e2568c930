package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// Options are fixed once per statement.
type Options struct {
	// Now is the statement's start: `15m AGO` is Now minus 15 minutes,
	// computed once at compile time. The zero time means time.Now().
	Now time.Time
}

// Compiler compiles the expressions of one statement and evaluates them
// against one record or row at a time. The expressions of a statement
// (WHERE, projections, ORDER BY keys) share it, so a JSON path read by
// several of them is read once per record. It is not safe for concurrent
// use: one statement, one goroutine.
type Compiler struct {
	opts     Options
	now      int64
	cols     []result.Column // row mode: the result's columns; nil for records
	env      env
	slots    map[string]int // JSON path -> cache slot
	Warnings *Warnings
}

// env is what a node reads: the current record or row.
type env struct {
	rec     *result.Record
	row     result.Row
	rowNum  int64
	gen     uint64
	slots   []Value
	slotGen []uint64
	warn    *Warnings
	err     error // the first error (an integer overflow): it ends the statement
	inGroup bool  // evaluating an aggregate's result, after the last record
}

// where names the record or row being evaluated, for warnings and errors.
func (e *env) where() string {
	switch {
	case e.inGroup:
		return "in a group's result"
	case e.rec != nil:
		return fmt.Sprintf("partition %d offset %d", e.rec.Partition, e.rec.Offset)
	case e.rowNum > 0:
		return fmt.Sprintf("row %d", e.rowNum)
	}
	return ""
}

// fail keeps the first error of the statement.
func (e *env) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// NewRecordCompiler returns a compiler for expressions over records: the
// columns partition, offset, timestamp, key, value, headers, key_schema_id,
// value_schema_id and JSON paths
// into key and value.
func NewRecordCompiler(opts Options) *Compiler {
	return newCompiler(opts, nil)
}

// NewRowCompiler returns a compiler for expressions over rows with these
// columns (SHOW and DESCRIBE results).
func NewRowCompiler(cols []result.Column, opts Options) *Compiler {
	return newCompiler(opts, cols)
}

func newCompiler(opts Options, cols []result.Column) *Compiler {
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	c := &Compiler{opts: opts, now: now.UnixMilli(), cols: cols, slots: map[string]int{}, Warnings: &Warnings{}}
	c.env.warn = c.Warnings
	return c
}

// SetRecord makes r the record the compiled expressions evaluate next. r's
// bytes must stay unchanged until the next SetRecord.
func (c *Compiler) SetRecord(r *result.Record) {
	c.env.rec = r
	c.env.gen++
}

// SetRow makes row the row the compiled expressions evaluate next.
func (c *Compiler) SetRow(row result.Row) {
	c.env.row = row
	c.env.rowNum++
	c.env.gen++
}

// Err is the first error an evaluation met (an integer overflow, see
// RangeError), or nil. It is sticky: once set, the statement must stop and
// report it, for the value the expression returned (NULL) is not its answer.
func (c *Compiler) Err() error { return c.env.err }

// Expr is a compiled expression.
type Expr struct {
	root node
	c    *Compiler
	Text string // the expression as KafkaQL (lang.FormatExpr)
	Type result.Type
}

// Eval evaluates x against the record or row last given to SetRecord or
// SetRow.
func (x *Expr) Eval() Value { return x.root.eval(&x.c.env) }

// True reports whether x is TRUE for the current record or row: what WHERE
// keeps (NULL and FALSE are not kept).
func (x *Expr) True() bool { return x.root.eval(&x.c.env).IsTrue() }

// MatchRecord is SetRecord(r) followed by True: a WHERE over one record.
func (x *Expr) MatchRecord(r *result.Record) bool {
	x.c.SetRecord(r)
	return x.True()
}

// Compile compiles e. Aggregate calls are refused here: compile them
// through NewAggregation.
func (c *Compiler) Compile(e lang.Expr) (*Expr, error) {
	n, err := c.compile(e, nil)
	if err != nil {
		return nil, err
	}
	return &Expr{root: n, c: c, Text: lang.FormatExpr(e), Type: c.typeOf(e)}, nil
}

// node is one compiled expression node.
type node interface {
	eval(e *env) Value
}

// aggLookup lets an aggregating SELECT replace parts of an expression
// before they are compiled: an aggregate call by the node that reads its
// result, a GROUP BY expression by the node that reads the group's key.
// It returns nil, nil for anything else.
type aggLookup func(e lang.Expr) (node, error)

func (c *Compiler) compile(e lang.Expr, aggs aggLookup) (node, error) {
	if aggs != nil {
		if n, err := aggs(e); n != nil || err != nil {
			return n, err
		}
	}
	text := lang.FormatExpr(e)
	switch e := e.(type) {
	case *lang.Column:
		return c.column(e)
	case *lang.NullLit:
		return constNode{null}, nil
	case *lang.BoolLit:
		return constNode{boolValue(e.V)}, nil
	case *lang.IntLit:
		return constNode{Value{K: Int, I: e.V}}, nil
	case *lang.FloatLit:
		return constNode{Value{K: Float, F: e.V}}, nil
	case *lang.BytesLit:
		return constNode{Value{K: Bytes, B: e.V}}, nil
	case *lang.TimeLit:
		return constNode{Value{K: Time, I: e.Ms}}, nil
	case *lang.AgoLit:
		return constNode{Value{K: Time, I: c.now - e.Ago.Milliseconds()}}, nil
	case *lang.Unary:
		x, err := c.compile(e.X, aggs)
		if err != nil {
			return nil, err
		}
		if e.Op == lang.OpNot {
			return &notNode{x: x, text: text}, nil
		}
		return &arithNode{op: lang.OpSub, l: constNode{Value{K: Int}}, r: x, text: text, neg: true}, nil
	case *lang.Binary:
		l, err := c.compile(e.L, aggs)
		if err != nil {
			return nil, err
		}
		r, err := c.compile(e.R, aggs)
		if err != nil {
			return nil, err
		}
		switch {
		case e.Op == lang.OpAnd:
			return &andNode{l: l, r: r, text: text}, nil
		case e.Op == lang.OpOr:
			return &orNode{l: l, r: r, text: text}, nil
		case e.Op.IsComparison():
			l, r = c.foldTimeText(e.L, l, e.R, r)
			return &cmpNode{op: e.Op, l: l, r: r, text: text}, nil
		}
		return &arithNode{op: e.Op, l: l, r: r, text: text}, nil
	case *lang.Like:
		x, err := c.compile(e.X, aggs)
		if err != nil {
			return nil, err
		}
		return &likeNode{x: x, m: newLikeMatcher(e.Pattern, e.CaseInsensitive), not: e.Not, text: text}, nil
	case *lang.Regex:
		x, err := c.compile(e.X, aggs)
		if err != nil {
			return nil, err
		}
		re, err := regexp.Compile(e.Pattern)
		if err != nil {
			return nil, fmt.Errorf("%s: bad regular expression: %v", text, err)
		}
		return &regexNode{x: x, re: re, not: e.Not, text: text}, nil
	case *lang.In:
		x, err := c.compile(e.X, aggs)
		if err != nil {
			return nil, err
		}
		n := &inNode{x: x, not: e.Not, text: text}
		for _, item := range e.List {
			in, err := c.compile(item, aggs)
			if err != nil {
				return nil, err
			}
			_, in = c.foldTimeText(e.X, x, item, in)
			n.list = append(n.list, in)
		}
		return n, nil
	case *lang.Between:
		x, err := c.compile(e.X, aggs)
		if err != nil {
			return nil, err
		}
		lo, err := c.compile(e.Lo, aggs)
		if err != nil {
			return nil, err
		}
		hi, err := c.compile(e.Hi, aggs)
		if err != nil {
			return nil, err
		}
		_, lo = c.foldTimeText(e.X, x, e.Lo, lo)
		_, hi = c.foldTimeText(e.X, x, e.Hi, hi)
		return &betweenNode{x: x, lo: lo, hi: hi, not: e.Not, text: text}, nil
	case *lang.IsNull:
		x, err := c.compile(e.X, aggs)
		if err != nil {
			return nil, err
		}
		return &isNullNode{x: x, not: e.Not}, nil
	case *lang.Call:
		if e.IsAggregate() {
			if aggs == nil {
				return nil, fmt.Errorf("%s: an aggregate is only allowed in the SELECT list and ORDER BY of a SELECT over records", text)
			}
			return nil, fmt.Errorf("%s: no aggregate here", text)
		}
		args := make([]node, len(e.Args))
		for i, a := range e.Args {
			n, err := c.compile(a, aggs)
			if err != nil {
				return nil, err
			}
			args[i] = n
		}
		switch e.Name {
		case "length":
			return &lengthNode{x: args[0], text: text}, nil
		case "lower", "upper":
			return &caseNode{x: args[0], upper: e.Name == "upper", text: text}, nil
		case "coalesce":
			return &coalesceNode{args: args}, nil
		case "header":
			if c.cols != nil {
				return nil, fmt.Errorf("%s: header() reads a record's headers; this statement's rows are not records", text)
			}
			name, ok := e.Args[0].(*lang.BytesLit)
			if !ok {
				return nil, fmt.Errorf("%s: header takes the header's name as quoted text", text)
			}
			return &headerNode{name: string(name.V)}, nil
		}
		return nil, fmt.Errorf("unknown function %s", e.Name)
	}
	return nil, fmt.Errorf("kql cannot evaluate %T yet", e)
}

// foldTimeText turns a text constant compared with a timestamp into a
// timestamp at compile time: timestamp > '2026-01-02T03:04:05Z'.
func (c *Compiler) foldTimeText(le lang.Expr, l node, re lang.Expr, r node) (node, node) {
	conv := func(timeSide lang.Expr, other node) node {
		if c.typeOf(timeSide) != result.Time {
			return other
		}
		k, ok := other.(constNode)
		if !ok || k.v.K != Bytes {
			return other
		}
		t, err := time.Parse(time.RFC3339, string(k.v.B))
		if err != nil {
			return other
		}
		return constNode{Value{K: Time, I: t.UnixMilli()}}
	}
	return conv(re, l), conv(le, r)
}

// typeOf is the result column type of e (for projections): record columns
// have their own type, JSON paths and text functions are Bytes (JSON
// strings as their text, other JSON values as their JSON text), numbers
// Int, comparisons Bool.
func (c *Compiler) typeOf(e lang.Expr) result.Type {
	switch e := e.(type) {
	case *lang.Column:
		if c.cols != nil {
			for _, col := range c.cols {
				if col.Name == e.Name {
					return col.Type
				}
			}
			return result.String
		}
		if e.Path != nil {
			return result.Bytes
		}
		switch e.Name {
		case "partition", "offset", "key_schema_id", "value_schema_id":
			return result.Int
		case "timestamp":
			return result.Time
		case "headers":
			return result.Headers
		}
		return result.Bytes
	case *lang.IntLit:
		return result.Int
	case *lang.FloatLit:
		return result.Number
	case *lang.BoolLit:
		return result.Bool
	case *lang.TimeLit, *lang.AgoLit:
		return result.Time
	case *lang.Unary:
		if e.Op == lang.OpNot {
			return result.Bool
		}
		// -x is arithmetic: a number, as x + 1 is, whatever x's column
		// was (a path's Bytes made -value.amount text in json output).
		if t := c.typeOf(e.X); t == result.Int || t == result.Time {
			return t
		}
		return result.Number
	case *lang.Binary:
		if e.Op.IsComparison() || e.Op == lang.OpAnd || e.Op == lang.OpOr {
			return result.Bool
		}
		l, r := c.typeOf(e.L), c.typeOf(e.R)
		switch {
		case l == result.Time && r == result.Time:
			return result.Int
		case l == result.Time || r == result.Time:
			other := l + r - result.Time
			switch other {
			case result.Int:
				return result.Time
			case result.Number:
				// timestamp - 0.5 is a decimal (it was written as
				// text in a Time column).
				return result.Number
			}
			return result.Bytes // a path's: the value's own kind decides
		case l == result.Int && r == result.Int:
			return result.Int
		}
		return result.Number
	case *lang.Like, *lang.Regex, *lang.In, *lang.Between, *lang.IsNull:
		return result.Bool
	case *lang.Call:
		switch e.Name {
		case "length", "count":
			return result.Int
		case "min", "max":
			return c.typeOf(e.Args[0])
		case "sum":
			if c.typeOf(e.Args[0]) == result.Int {
				return result.Int
			}
			return result.Number
		case "avg":
			return result.Number
		case "coalesce":
			return c.commonType(e.Args)
		}
		return result.Bytes
	}
	return result.String
}

// commonType is the type of a value that may come from any of args
// (coalesce): their one type when they agree (NULL literals aside), Number
// for integers mixed with decimals, else Bytes, the type a JSON path has,
// whose values are written each by its own kind (a number as a number).
func (c *Compiler) commonType(args []lang.Expr) result.Type {
	var t result.Type
	for _, a := range args {
		if _, ok := a.(*lang.NullLit); ok {
			continue
		}
		at := c.typeOf(a)
		switch {
		case t == 0 || t == at:
			t = at
		case (t == result.Int || t == result.Number) && (at == result.Int || at == result.Number):
			t = result.Number
		default:
			return result.Bytes
		}
	}
	if t == 0 {
		return result.String // only NULLs
	}
	return t
}

func (c *Compiler) column(e *lang.Column) (node, error) {
	if c.cols != nil {
		i := slices.IndexFunc(c.cols, func(col result.Column) bool { return col.Name == e.Name })
		if i < 0 {
			names := make([]string, len(c.cols))
			for k, col := range c.cols {
				names[k] = col.Name
			}
			return nil, fmt.Errorf("unknown column %s (the columns are %s)", e.Name, strings.Join(names, ", "))
		}
		if e.Path != nil {
			return nil, fmt.Errorf("%s has no JSON path", e.Name)
		}
		return &rowColNode{i: i, number: c.cols[i].Type == result.Number}, nil
	}
	var which recordField
	switch e.Name {
	case "partition":
		which = fPartition
	case "offset":
		which = fOffset
	case "timestamp":
		which = fTimestamp
	case "key":
		which = fKey
	case "value":
		which = fValue
	case "headers":
		which = fHeaders
	case "key_schema_id":
		which = fKeySchemaID
	case "value_schema_id":
		which = fValueSchemaID
	default:
		return nil, fmt.Errorf("unknown column %s (a record's columns are %s)", e.Name, strings.Join(lang.RecordColumns, ", "))
	}
	if e.Path == nil {
		return &recordNode{f: which}, nil
	}
	if which != fKey && which != fValue {
		return nil, fmt.Errorf("%s has no JSON path: only key and value are read as JSON", e.Name)
	}
	path := gjsonPath(e.Path)
	id := e.Name + "\x00" + path
	slot, ok := c.slots[id]
	if !ok {
		slot = len(c.slots)
		c.slots[id] = slot
		c.env.slots = append(c.env.slots, Value{})
		c.env.slotGen = append(c.env.slotGen, 0)
	}
	return &pathNode{key: which == fKey, path: path, slot: slot}, nil
}

// gjsonPath writes a lang path in gjson's syntax, escaping every member
// name so that no character of it is read as path syntax.
func gjsonPath(steps []lang.PathStep) string {
	var sb strings.Builder
	for i, s := range steps {
		if i > 0 {
			sb.WriteByte('.')
		}
		if s.IsIndex {
			sb.WriteString(strconv.Itoa(s.Index))
		} else {
			sb.WriteString(gjson.Escape(s.Key))
		}
	}
	return sb.String()
}
