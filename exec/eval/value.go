// Package eval evaluates KafkaQL expressions (package lang) against Kafka
// records (result.Record) and metadata rows (result.Row).
//
// An expression is compiled once into a tree of small nodes, each with an
// eval method (go-mysql-server's sql/expression shape); patterns (LIKE,
// regular expressions) and constants are prepared at compile time. The
// per-record path does not allocate on the common paths: values are a
// small tagged struct rather than interfaces, JSON paths are read with
// gjson directly on the record's bytes (each distinct path at most once per
// record, and only if the expression reaches it), and bytes are never
// copied unless a function must build new ones (lower, upper).
//
// Logic is SQL's three-valued logic: a comparison with NULL is NULL, NOT
// NULL is NULL, NULL AND FALSE is FALSE, NULL OR TRUE is TRUE, and a WHERE
// keeps a row only when its predicate is TRUE. Values of kinds that cannot
// be compared (text with a number, a boolean with text) compare as NULL,
// and the statement gets one warning naming the expression and where it
// first happened (see Warnings).
package eval

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/kql-dev/kql/result"
)

// Kind is the kind of a Value.
type Kind uint8

const (
	Null    Kind = iota // SQL NULL (also: an absent JSON path, a value that is not JSON)
	Bool                // I is 0 or 1
	Int                 // I
	Float               // F
	Bytes               // B: text or binary; compared bytewise, which orders UTF-8 text by code point
	Time                // I: epoch milliseconds (timestamp, TIMESTAMP '...', 15m AGO)
	Headers             // H: a record's headers
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "NULL"
	case Bool:
		return "boolean"
	case Int:
		return "integer"
	case Float:
		return "decimal"
	case Bytes:
		return "text"
	case Time:
		return "timestamp"
	case Headers:
		return "headers"
	}
	return "?"
}

// Value is one value during evaluation. Its B and H may point into the
// record being evaluated: they are valid until the next record. Use Clone
// (or Any) to keep a value.
type Value struct {
	K Kind
	I int64
	F float64
	B []byte
	H []result.Header
	// J marks B as JSON text (an object or array a path picked, a value the
	// schema registry decoded): it compares as text, and a projection hands
	// it on as result.JSON so json output nests it instead of quoting it.
	J bool
}

var (
	null      = Value{}
	trueValue = Value{K: Bool, I: 1}
	falseVal  = Value{K: Bool}
)

func boolValue(b bool) Value {
	if b {
		return trueValue
	}
	return falseVal
}

// IsNull reports whether v is NULL.
func (v Value) IsNull() bool { return v.K == Null }

// IsTrue reports whether v is the boolean TRUE: what WHERE keeps.
func (v Value) IsTrue() bool { return v.K == Bool && v.I != 0 }

// Clone returns v with its bytes and headers copied, so it outlives the
// record it came from.
func (v Value) Clone() Value {
	if v.B != nil {
		v.B = bytes.Clone(v.B)
	}
	if v.H != nil {
		hs := make([]result.Header, len(v.H))
		for i, h := range v.H {
			hs[i] = result.Header{Key: h.Key, Value: bytes.Clone(h.Value)}
		}
		v.H = hs
	}
	return v
}

// Any returns v as a result.Row element for a column of type t (see
// TypeOf): nil for NULL, int64, float64 as text for Bytes columns, and so
// on. Bytes are copied, so the element outlives the record.
func (v Value) Any(t result.Type) any {
	switch v.K {
	case Null:
		return nil
	case Headers:
		return v.Clone().H
	}
	switch t {
	case result.Int:
		switch v.K {
		case Int, Time:
			return v.I
		case Bool:
			return v.I
		case Float:
			return int64(v.F)
		}
	case result.Time:
		if v.K == Time || v.K == Int {
			return time.UnixMilli(v.I).UTC()
		}
	case result.Bool:
		if v.K == Bool {
			return v.I != 0
		}
	case result.Number, result.Bytes:
		if v.K == Time {
			// A column typed by its values (timestamp + value.n, where
			// value.n may be a decimal) writes a timestamp as one.
			return time.UnixMilli(v.I).UTC()
		}
	}
	if t == result.String || t == result.Number {
		return string(v.Text())
	}
	if t == result.Bytes && v.K != Bytes && v.K != Time {
		// A Bytes column's type is known only per value (a JSON path,
		// coalesce of a path and a number): a number or boolean is
		// written as one, as jsonl writes the record's own JSON.
		if v.J && v.B != nil {
			// Its JSON text has no spacing to remove, and keeps 9.50 the
			// number it was.
			return result.JSON(bytes.Clone(v.B))
		}
		if v.K != Float || !math.IsNaN(v.F) && !math.IsInf(v.F, 0) {
			return result.JSON(v.Text())
		}
	}
	if v.J && v.B != nil && t == result.Bytes {
		// A path's raw text keeps the record's own spacing and line
		// breaks; one record must stay one line of jsonl.
		var buf bytes.Buffer
		if json.Compact(&buf, v.B) == nil {
			return result.JSON(buf.Bytes())
		}
	}
	return bytes.Clone(v.Text())
}

// Text returns v as text: bytes as they are, numbers and booleans in their
// SQL form, a timestamp in RFC 3339 (this allocates for all but Bytes).
func (v Value) Text() []byte {
	switch v.K {
	case Bytes:
		if v.B == nil {
			return []byte{}
		}
		return v.B
	case Int:
		return strconv.AppendInt(nil, v.I, 10)
	case Float:
		return strconv.AppendFloat(nil, v.F, 'g', -1, 64)
	case Bool:
		if v.I != 0 {
			return []byte("true")
		}
		return []byte("false")
	case Time:
		return time.UnixMilli(v.I).UTC().AppendFormat(nil, "2006-01-02T15:04:05.000Z07:00")
	}
	return nil
}

func numeric(k Kind) bool { return k == Int || k == Float || k == Time }

func (v Value) float() float64 {
	if v.K == Float {
		return v.F
	}
	return float64(v.I)
}

// Compare orders a and b. ok is false when either is NULL or their kinds
// cannot be compared: numbers (integers, decimals, JSON numbers) and
// timestamps compare numerically (a timestamp as epoch milliseconds),
// text and bytes bytewise, booleans FALSE < TRUE. Text never compares with
// a number: '42' = 42 is NULL, not TRUE.
func Compare(a, b Value) (c int, ok bool) {
	switch {
	case a.K == Null || b.K == Null:
		return 0, false
	case numeric(a.K) && numeric(b.K):
		if a.K != Float && b.K != Float {
			return cmp.Compare(a.I, b.I), true
		}
		x, y := a.float(), b.float()
		if math.IsNaN(x) || math.IsNaN(y) {
			return 0, false
		}
		return cmp.Compare(x, y), true
	case a.K == Bytes && b.K == Bytes:
		return bytes.Compare(a.B, b.B), true
	case a.K == Bool && b.K == Bool:
		return cmp.Compare(a.I, b.I), true
	}
	return 0, false
}

// unsafeString views b as a string without copying; the string must not
// outlive b's contents.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// unsafeBytes views s as bytes without copying; they must not be written.
func unsafeBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
