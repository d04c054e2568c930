package lang

import "time"

// Expr is one node of an expression: WHERE, projections, GROUP BY and
// ORDER BY all use the same grammar. Like the statements, expression nodes
// carry no positions, so Parse(Format(s)) compares with reflect.DeepEqual.
// Everything a parser can check is checked before a statement runs: column
// names, function names and arity, LIKE and regular-expression patterns
// (compiled once at parse time), where aggregates may appear.
//
// Precedence, loosest first: OR, AND, NOT, comparison (= != <> < <= > >=,
// [NOT] LIKE, [NOT] ILIKE, ~, !~, [NOT] IN, [NOT] BETWEEN, IS [NOT] NULL),
// + and -, * / and %, unary -. Comparisons do not chain: a = b = c is an
// error, (a = b) = c is not.
type Expr interface{ expr() }

// Column is a column reference. On records Name is one of RecordColumns
// (lower case); on SHOW and
// DESCRIBE it is one of the statement's own columns (MetaColumns). Path is
// only ever set on key and value: the steps of a JSON path, read from the
// bytes with gjson (value.items[0].sku is Path {items} {[0]} {sku}).
type Column struct {
	Name string
	Path []PathStep // nil: the column itself
}

// PathStep is one step of a JSON path: an object member (.name or
// ['odd-name']) or an array element ([0]).
type PathStep struct {
	Key     string // object member; when IsIndex is false
	Index   int    // array element, >= 0; when IsIndex is true
	IsIndex bool
}

// NullLit is NULL.
type NullLit struct{}

// BoolLit is TRUE or FALSE.
type BoolLit struct{ V bool }

// IntLit is an integer literal (a leading minus folds into it: -5).
type IntLit struct{ V int64 }

// FloatLit is a decimal literal such as 1.5.
type FloatLit struct{ V float64 }

// BytesLit is 'text', "text", `text` or x'hex': bytes, compared as UTF-8
// text with bytes.
type BytesLit struct{ V []byte } // never nil ('' is []byte{})

// TimeLit is TIMESTAMP 'RFC 3339' or TIMESTAMP epoch-ms: a point in time,
// in epoch milliseconds. (A bare integer compared with timestamp is an
// IntLit and compares as epoch milliseconds too.)
type TimeLit struct{ Ms int64 }

// AgoLit is `duration AGO`: the statement's start time minus Ago, fixed
// once when the statement starts (the executor supplies "now").
type AgoLit struct{ Ago time.Duration }

// Op is a unary or binary operator.
type Op int

const (
	OpOr  Op = iota + 1 // OR
	OpAnd               // AND
	OpEq                // =
	OpNe                // != and <>
	OpLt                // <
	OpLe                // <=
	OpGt                // >
	OpGe                // >=
	OpAdd               // +
	OpSub               // -
	OpMul               // *
	OpDiv               // /
	OpMod               // %
	OpNot               // NOT (Unary)
	OpNeg               // - (Unary), on anything but a number literal
)

// String returns the operator as KafkaQL writes it.
func (o Op) String() string {
	switch o {
	case OpOr:
		return "OR"
	case OpAnd:
		return "AND"
	case OpEq:
		return "="
	case OpNe:
		return "!="
	case OpLt:
		return "<"
	case OpLe:
		return "<="
	case OpGt:
		return ">"
	case OpGe:
		return ">="
	case OpAdd:
		return "+"
	case OpSub, OpNeg:
		return "-"
	case OpMul:
		return "*"
	case OpDiv:
		return "/"
	case OpMod:
		return "%"
	case OpNot:
		return "NOT"
	}
	return "?"
}

// IsComparison reports whether o is = != < <= > >=.
func (o Op) IsComparison() bool { return o >= OpEq && o <= OpGe }

// Unary is NOT x or -x.
type Unary struct {
	Op Op // OpNot or OpNeg
	X  Expr
}

// Binary is L op R for OR, AND, the comparisons and arithmetic.
type Binary struct {
	Op   Op
	L, R Expr
}

// Like is x [NOT] LIKE 'pattern' or x [NOT] ILIKE 'pattern'. The pattern
// is always a text literal: % any run, _ one character, \ escapes the next
// character. ILIKE folds case (Unicode simple folding).
type Like struct {
	X               Expr
	Pattern         string
	Not             bool
	CaseInsensitive bool // ILIKE
}

// Regex is x ~ 'pattern' or x !~ 'pattern': an RE2 regular expression
// (Go's regexp), unanchored, checked at parse time.
type Regex struct {
	X       Expr
	Pattern string
	Not     bool // !~
}

// In is x [NOT] IN (e, ...).
type In struct {
	X    Expr
	List []Expr // at least one
	Not  bool
}

// Between is x [NOT] BETWEEN lo AND hi (inclusive).
type Between struct {
	X, Lo, Hi Expr
	Not       bool
}

// IsNull is x IS [NOT] NULL.
type IsNull struct {
	X   Expr
	Not bool
}

// Call is a function call. Name is lower case: length, lower, upper,
// coalesce, header (scalar) or count, min, max, sum, avg (aggregates).
// Star is count(*); Distinct is count(DISTINCT e). header's argument is
// always a BytesLit (header(trace-id) is header('trace-id')).
type Call struct {
	Name     string
	Args     []Expr
	Star     bool
	Distinct bool
}

// IsAggregate reports whether the call is count, min, max, sum or avg.
func (c *Call) IsAggregate() bool { return aggregateFuncs[c.Name] }

var aggregateFuncs = map[string]bool{"count": true, "min": true, "max": true, "sum": true, "avg": true}

func (*Column) expr()   {}
func (*NullLit) expr()  {}
func (*BoolLit) expr()  {}
func (*IntLit) expr()   {}
func (*FloatLit) expr() {}
func (*BytesLit) expr() {}
func (*TimeLit) expr()  {}
func (*AgoLit) expr()   {}
func (*Unary) expr()    {}
func (*Binary) expr()   {}
func (*Like) expr()     {}
func (*Regex) expr()    {}
func (*In) expr()       {}
func (*Between) expr()  {}
func (*IsNull) expr()   {}
func (*Call) expr()     {}

// SelectItem is one item of a SELECT projection: expr [AS name].
type SelectItem struct {
	X  Expr
	As string // "": not written; the column is then named FormatExpr(X)
}

// Name is the item's output column name: the AS name, else the
// expression's text (value.amount, count(*)).
func (it SelectItem) Name() string {
	if it.As != "" {
		return it.As
	}
	return FormatExpr(it.X)
}

// OrderItem is one item of ORDER BY: expr [ASC | DESC]. In a SELECT, X may
// also be a Column without Path naming a projection's AS name (ORDER BY n
// after count(*) AS n): Alias then says which item.
type OrderItem struct {
	X     Expr
	Desc  bool
	Alias int // 0: X is an expression; i+1: X names Projection[i] by its AS name
}

// Query is what every SHOW and DESCRIBE takes after its own clauses:
// [WHERE expr] [ORDER BY item, ...] [LIMIT n], over the statement's own
// columns (MetaColumns). It is embedded in each of those statements.
type Query struct {
	Where   Expr        // nil: every row
	OrderBy []OrderItem // nil: the statement's own order
	Limit   *int64      // nil: every row; 1..1000000 when set
}

// MetaQuery returns the statement's WHERE / ORDER BY / LIMIT.
func (q *Query) MetaQuery() *Query { return q }

// Queryable is implemented by every statement that embeds Query.
type Queryable interface {
	Statement
	MetaQuery() *Query
}

// IsZero reports whether none of WHERE, ORDER BY and LIMIT was written.
func (q *Query) IsZero() bool { return q.Where == nil && q.OrderBy == nil && q.Limit == nil }

// RecordColumns are the columns an expression over records may name: the
// six a CONSUME shows, then key_schema_id and value_schema_id, the schema
// id in the Confluent wire-format header of the key or value bytes (NULL
// when the bytes carry none). The last two are only ever named, never
// shown by CONSUME or SELECT *.
var RecordColumns = []string{"partition", "offset", "timestamp", "key", "value", "headers", "key_schema_id", "value_schema_id"}

// Walk calls fn for e and every expression below it, parents first; fn
// returns false to skip a node's children.
func Walk(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch e := e.(type) {
	case *Unary:
		Walk(e.X, fn)
	case *Binary:
		Walk(e.L, fn)
		Walk(e.R, fn)
	case *Like:
		Walk(e.X, fn)
	case *Regex:
		Walk(e.X, fn)
	case *In:
		Walk(e.X, fn)
		for _, x := range e.List {
			Walk(x, fn)
		}
	case *Between:
		Walk(e.X, fn)
		Walk(e.Lo, fn)
		Walk(e.Hi, fn)
	case *IsNull:
		Walk(e.X, fn)
	case *Call:
		for _, x := range e.Args {
			Walk(x, fn)
		}
	}
}

// HasAggregate reports whether e contains an aggregate call.
func HasAggregate(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*Call); ok && c.IsAggregate() {
			found = true
		}
		return !found
	})
	return found
}
