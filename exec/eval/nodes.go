package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

type constNode struct{ v Value }

func (n constNode) eval(*env) Value { return n.v }

type recordField uint8

const (
	fPartition recordField = iota
	fOffset
	fTimestamp
	fKey
	fValue
	fHeaders
	fKeySchemaID
	fValueSchemaID
)

// recordNode reads one of a record's columns.
type recordNode struct{ f recordField }

func (n *recordNode) eval(e *env) Value {
	r := e.rec
	switch n.f {
	case fPartition:
		return Value{K: Int, I: int64(r.Partition)}
	case fOffset:
		return Value{K: Int, I: r.Offset}
	case fTimestamp:
		return Value{K: Time, I: r.Timestamp}
	case fKey:
		if r.Key == nil {
			return null
		}
		return Value{K: Bytes, B: r.Key, J: r.KeySchema.Decoded}
	case fValue:
		if r.Value == nil {
			return null
		}
		return Value{K: Bytes, B: r.Value, J: r.ValueSchema.Decoded}
	case fKeySchemaID:
		return schemaID(r.KeySchema, r.Key)
	case fValueSchemaID:
		return schemaID(r.ValueSchema, r.Value)
	}
	return Value{K: Headers, H: r.Headers}
}

// schemaID is key_schema_id or value_schema_id: the id of the wire-format
// header, NULL when the bytes carried none. With a registry the decoder
// has read it (the bytes may be decoded by now); without one, nothing
// reads headers per record, and the id is read here, for the statements
// that ask for it.
func schemaID(s result.WireSchema, b []byte) Value {
	if s.HasID {
		return Value{K: Int, I: int64(s.ID)}
	}
	if id, ok := schema.HeaderID(b); ok {
		return Value{K: Int, I: int64(id)}
	}
	return null
}

// pathNode reads a JSON path from the record's key or value with gjson,
// directly on the bytes, at most once per record (slot caches it).
type pathNode struct {
	key     bool
	path    string
	slot    int
	compact bytes.Buffer // an object's or array's compacted text, reused
}

func (n *pathNode) eval(e *env) Value {
	if e.slotGen[n.slot] == e.gen {
		return e.slots[n.slot]
	}
	src := e.rec.Value
	if n.key {
		src = e.rec.Key
	}
	v := null
	if looksJSON(src) {
		v = fromJSON(gjson.Get(unsafeString(src), n.path))
		if v.J && v.K == Bytes && hasSpace(v.B) {
			// One canonical form, the compacted text jsonl shows: objects
			// that differ only in spacing are equal, group and count
			// DISTINCT as one.
			n.compact.Reset()
			if json.Compact(&n.compact, v.B) == nil {
				v.B = n.compact.Bytes()
			}
		}
	}
	e.slots[n.slot], e.slotGen[n.slot] = v, e.gen
	return v
}

// hasSpace reports whether JSON text may hold spacing to compact (spaces
// inside strings count too: compacting keeps them, at a small cost).
func hasSpace(b []byte) bool {
	return bytes.ContainsAny(b, " \t\n\r")
}

// looksJSON is the cheap test that keeps gjson off values that are not
// JSON documents: the first non-space byte opens an object or an array.
func looksJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// fromJSON turns a gjson result into a Value without copying: strings
// point into the record's bytes (or gjson's unescaped copy).
func fromJSON(r gjson.Result) Value {
	switch r.Type {
	// Numbers and booleans keep their JSON text (J, B): a projection
	// hands them on as JSON, so json output writes 9.50 as the number it
	// was, not as the string "9.5".
	case gjson.True:
		return Value{K: Bool, I: 1, B: unsafeBytes(r.Raw), J: true}
	case gjson.False:
		return Value{K: Bool, B: unsafeBytes(r.Raw), J: true}
	case gjson.Number:
		if isIntText(r.Raw) {
			if i, err := strconv.ParseInt(r.Raw, 10, 64); err == nil {
				return Value{K: Int, I: i, B: unsafeBytes(r.Raw), J: true}
			}
		}
		return Value{K: Float, F: r.Num, B: unsafeBytes(r.Raw), J: true}
	case gjson.String:
		return Value{K: Bytes, B: unsafeBytes(r.Str)}
	case gjson.JSON:
		return Value{K: Bytes, B: unsafeBytes(r.Raw), J: true}
	}
	return null // JSON null, or absent
}

// numberText is a Number cell's value: an integer, a float, or (text that
// is not a number) the text itself.
func numberText(s string) Value {
	if isIntText(s) {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return Value{K: Int, I: i}
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return Value{K: Float, F: f}
	}
	return Value{K: Bytes, B: unsafeBytes(s)}
}

func isIntText(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '-' && i == 0) {
			return false
		}
	}
	return true
}

// rowColNode reads column i of a metadata row.
type rowColNode struct {
	i int
	// number: a Number column, whose cells are a number's text (a quota's
	// 12.5): read as the number, so WHERE value > 100 and ORDER BY value
	// compare numbers, not text.
	number bool
}

func (n *rowColNode) eval(e *env) Value {
	if n.i >= len(e.row) {
		return null
	}
	switch v := e.row[n.i].(type) {
	case nil:
		return null
	case int64:
		return Value{K: Int, I: v}
	case int32:
		return Value{K: Int, I: int64(v)}
	case int:
		return Value{K: Int, I: int64(v)}
	case float64:
		return Value{K: Float, F: v}
	case string:
		if n.number {
			return numberText(v)
		}
		return Value{K: Bytes, B: unsafeBytes(v)}
	case []byte:
		if v == nil {
			return null
		}
		return Value{K: Bytes, B: v}
	case bool:
		return boolValue(v)
	case time.Time:
		return Value{K: Time, I: v.UnixMilli()}
	case []int32:
		// A replica list counts its replicas: in_sync_replicas < replicas.
		return Value{K: Int, I: int64(len(v))}
	case []result.Header:
		return Value{K: Headers, H: v}
	}
	return null
}

// boolOf reads a logical operand: TRUE, FALSE, or NULL (for NULL and for
// anything that is not a boolean, with a warning for the latter).
func boolOf(e *env, v Value, text string) (b, ok bool) {
	switch v.K {
	case Bool:
		return v.I != 0, true
	case Null:
		return false, false
	}
	e.warn.notBoolean(e, text, v.K)
	return false, false
}

type andNode struct {
	l, r node
	text string
}

func (n *andNode) eval(e *env) Value {
	l, lok := boolOf(e, n.l.eval(e), n.text)
	if lok && !l {
		return falseVal // FALSE AND anything is FALSE; r is not evaluated
	}
	r, rok := boolOf(e, n.r.eval(e), n.text)
	switch {
	case rok && !r:
		return falseVal
	case lok && rok:
		return trueValue
	}
	return null
}

type orNode struct {
	l, r node
	text string
}

func (n *orNode) eval(e *env) Value {
	l, lok := boolOf(e, n.l.eval(e), n.text)
	if lok && l {
		return trueValue
	}
	r, rok := boolOf(e, n.r.eval(e), n.text)
	switch {
	case rok && r:
		return trueValue
	case lok && rok:
		return falseVal
	}
	return null
}

type notNode struct {
	x    node
	text string
}

func (n *notNode) eval(e *env) Value {
	b, ok := boolOf(e, n.x.eval(e), n.text)
	if !ok {
		return null
	}
	return boolValue(!b)
}

// compare compares two values for an operator, warning once when their
// kinds cannot be compared.
func compare(e *env, a, b Value, text string) (int, bool) {
	c, ok := Compare(a, b)
	if !ok && a.K != Null && b.K != Null {
		e.warn.incomparable(e, text, a.K, b.K)
	}
	return c, ok
}

type cmpNode struct {
	op   lang.Op
	l, r node
	text string
}

func (n *cmpNode) eval(e *env) Value {
	c, ok := compare(e, n.l.eval(e), n.r.eval(e), n.text)
	if !ok {
		return null
	}
	switch n.op {
	case lang.OpEq:
		return boolValue(c == 0)
	case lang.OpNe:
		return boolValue(c != 0)
	case lang.OpLt:
		return boolValue(c < 0)
	case lang.OpLe:
		return boolValue(c <= 0)
	case lang.OpGt:
		return boolValue(c > 0)
	}
	return boolValue(c >= 0)
}

type arithNode struct {
	op   lang.Op
	l, r node
	text string
	neg  bool // unary minus: 0 - x
}

func (n *arithNode) eval(e *env) Value {
	a, b := n.l.eval(e), n.r.eval(e)
	if a.K == Null || b.K == Null {
		return null
	}
	if !numeric(a.K) || !numeric(b.K) {
		e.warn.incomparable(e, n.text, a.K, b.K)
		return null
	}
	kind := Int
	switch {
	case a.K == Float || b.K == Float:
		kind = Float
	case a.K == Time && b.K == Time:
		kind = Int // the difference of two timestamps is milliseconds
		if n.op != lang.OpSub {
			e.warn.incomparable(e, n.text, a.K, b.K)
			return null
		}
	case a.K == Time || b.K == Time:
		kind = Time
	}
	if kind == Float {
		x, y := a.float(), b.float()
		switch n.op {
		case lang.OpAdd:
			return Value{K: Float, F: x + y}
		case lang.OpSub:
			return Value{K: Float, F: x - y}
		case lang.OpMul:
			return Value{K: Float, F: x * y}
		case lang.OpDiv:
			if y == 0 {
				e.warn.divisionByZero(e, n.text)
				return null
			}
			return Value{K: Float, F: x / y}
		}
		if y == 0 {
			e.warn.divisionByZero(e, n.text)
			return null
		}
		return Value{K: Float, F: math.Mod(x, y)}
	}
	x, y := a.I, b.I
	var v int64
	ok := true
	switch n.op {
	case lang.OpAdd:
		v, ok = addInt(x, y)
	case lang.OpSub:
		v, ok = subInt(x, y)
	case lang.OpMul:
		v, ok = mulInt(x, y)
	case lang.OpDiv, lang.OpMod:
		if y == 0 {
			e.warn.divisionByZero(e, n.text)
			return null
		}
		switch {
		case y == -1 && n.op == lang.OpMod:
			v = 0 // MinInt64 % -1 would trap
		case y == -1:
			v, ok = subInt(0, x) // MinInt64 / -1 is past the range
		case n.op == lang.OpDiv:
			v = x / y
		default:
			v = x % y
		}
	}
	if !ok {
		what := fmt.Sprintf("%d %s %d", x, n.op, y)
		if n.neg {
			what = fmt.Sprintf("-(%d)", y)
		}
		e.fail(&RangeError{Expr: n.text, What: what, Where: e.where()})
		return null
	}
	return Value{K: kind, I: v}
}

// addInt, subInt and mulInt are 64-bit integer arithmetic that reports an
// overflow instead of wrapping around.
func addInt(x, y int64) (int64, bool) {
	s := x + y
	return s, (s > x) == (y > 0)
}

func subInt(x, y int64) (int64, bool) {
	d := x - y
	return d, (d < x) == (y > 0)
}

func mulInt(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	p := x * y
	if p/y != x || x == -1 && y == math.MinInt64 || y == -1 && x == math.MinInt64 {
		return p, false
	}
	return p, true
}

type likeNode struct {
	x    node
	m    *likeMatcher
	not  bool
	text string
}

func (n *likeNode) eval(e *env) Value {
	v := n.x.eval(e)
	switch v.K {
	case Null:
		return null
	case Bytes:
		return boolValue(n.m.match(v.B) != n.not)
	}
	e.warn.notText(e, n.text, v.K)
	return null
}

type regexNode struct {
	x    node
	re   *regexp.Regexp
	not  bool
	text string
}

func (n *regexNode) eval(e *env) Value {
	v := n.x.eval(e)
	switch v.K {
	case Null:
		return null
	case Bytes:
		return boolValue(n.re.Match(v.B) != n.not)
	}
	e.warn.notText(e, n.text, v.K)
	return null
}

// inNode is x IN (list): TRUE if x equals an item, else NULL if x or an
// item was NULL (or could not be compared), else FALSE.
type inNode struct {
	x    node
	list []node
	not  bool
	text string
}

func (n *inNode) eval(e *env) Value {
	x := n.x.eval(e)
	if x.K == Null {
		return null
	}
	sawNull := false
	for _, item := range n.list {
		c, ok := compare(e, x, item.eval(e), n.text)
		if !ok {
			sawNull = true
			continue
		}
		if c == 0 {
			return boolValue(!n.not)
		}
	}
	if sawNull {
		return null
	}
	return boolValue(n.not)
}

type betweenNode struct {
	x, lo, hi node
	not       bool
	text      string
}

func (n *betweenNode) eval(e *env) Value {
	x := n.x.eval(e)
	lo, lok := compare(e, x, n.lo.eval(e), n.text)
	hi, hok := compare(e, x, n.hi.eval(e), n.text)
	// x BETWEEN lo AND hi is x >= lo AND x <= hi, in three-valued logic.
	var ge, le Value = null, null
	if lok {
		ge = boolValue(lo >= 0)
	}
	if hok {
		le = boolValue(hi <= 0)
	}
	var v Value
	switch {
	case ge.K == Bool && ge.I == 0 || le.K == Bool && le.I == 0:
		v = falseVal
	case ge.K == Bool && le.K == Bool:
		v = trueValue
	default:
		return null
	}
	if n.not {
		return boolValue(v.I == 0)
	}
	return v
}

type isNullNode struct {
	x   node
	not bool
}

func (n *isNullNode) eval(e *env) Value {
	return boolValue((n.x.eval(e).K == Null) != n.not)
}

// lengthNode is length(x): the number of bytes of text or bytes.
type lengthNode struct {
	x    node
	text string
}

func (n *lengthNode) eval(e *env) Value {
	v := n.x.eval(e)
	switch v.K {
	case Null:
		return null
	case Bytes:
		return Value{K: Int, I: int64(len(v.B))}
	case Headers:
		return Value{K: Int, I: int64(len(v.H))}
	}
	e.warn.notText(e, n.text, v.K)
	return null
}

// caseNode is lower(x) or upper(x). It writes into a buffer it reuses, so
// the result is valid until the node runs again.
type caseNode struct {
	x     node
	upper bool
	buf   []byte
	text  string
}

func (n *caseNode) eval(e *env) Value {
	v := n.x.eval(e)
	switch v.K {
	case Null:
		return null
	case Bytes:
	default:
		e.warn.notText(e, n.text, v.K)
		return null
	}
	n.buf = n.buf[:0]
	for i := 0; i < len(v.B); {
		c := v.B[i]
		if c < utf8.RuneSelf {
			if n.upper && 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			} else if !n.upper && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			n.buf = append(n.buf, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(v.B[i:])
		if r == utf8.RuneError && size == 1 {
			n.buf = append(n.buf, c) // not UTF-8: kept as it is
		} else if n.upper {
			n.buf = utf8.AppendRune(n.buf, unicode.ToUpper(r))
		} else {
			n.buf = utf8.AppendRune(n.buf, unicode.ToLower(r))
		}
		i += size
	}
	return Value{K: Bytes, B: n.buf}
}

type coalesceNode struct{ args []node }

func (n *coalesceNode) eval(e *env) Value {
	for _, a := range n.args {
		if v := a.eval(e); v.K != Null {
			return v
		}
	}
	return null
}

// headerNode is header('name'): the last header with that key, NULL when
// there is none or its value is null.
type headerNode struct{ name string }

func (n *headerNode) eval(e *env) Value {
	hs := e.rec.Headers
	for i := len(hs) - 1; i >= 0; i-- {
		if hs[i].Key == n.name {
			if hs[i].Value == nil {
				return null
			}
			return Value{K: Bytes, B: hs[i].Value}
		}
	}
	return null
}

var _ = bytes.Equal
