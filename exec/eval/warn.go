package eval

import (
	"fmt"
	"strings"
)

// Warnings holds the one warning a statement's evaluation reports: the
// first expression that met values it could not handle (kinds that do not
// compare, text where a boolean was needed, a division by zero), and the
// first record (partition:offset) or row where it happened. Later cases
// are counted, not reported one by one, so a million bad records print one
// line.
type Warnings struct {
	msg   string
	count int64
}

// String returns the warning, or "" when there is none.
func (w *Warnings) String() string {
	if w == nil || w.msg == "" {
		return ""
	}
	if w.count > 1 {
		return fmt.Sprintf("%s; %d times in all", w.msg, w.count)
	}
	return w.msg
}

// Count is how many times a value could not be handled.
func (w *Warnings) Count() int64 { return w.count }

func (w *Warnings) add(e *env, format string, args ...any) {
	w.count++
	if w.msg != "" {
		return
	}
	w.msg = fmt.Sprintf(format, args...)
	if where := e.where(); where != "" {
		if !e.inGroup {
			where = "first at " + where
		}
		w.msg += " (" + where + ")"
	}
}

func article(k Kind) string {
	switch k {
	case Int, Headers:
		return "an " + k.String()
	}
	return "a " + k.String()
}

func (w *Warnings) incomparable(e *env, text string, a, b Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: %s and %s cannot be compared or combined, so the result is NULL", text, article(a), article(b))
}

func (w *Warnings) notBoolean(e *env, text string, k Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: %s is not TRUE or FALSE, so it counts as NULL", text, article(k))
}

func (w *Warnings) notText(e *env, text string, k Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: it works on text, not on %s, so the result is NULL", text, article(k))
}

func (w *Warnings) divisionByZero(e *env, text string) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: division by zero, so the result is NULL", text)
}

func (w *Warnings) notNumber(e *env, text string, k Kind) {
	if w.msg != "" {
		w.count++
		return
	}
	w.add(e, "%s: %s is not a number, so it is left out", text, article(k))
}

// RangeError is an integer result past the 64-bit range (PostgreSQL's
// "bigint out of range"): kql never wraps it around. It names the
// expression, the operands and the record or row where it happened, and
// ends the statement.
type RangeError struct {
	Expr  string // the expression, as KafkaQL
	What  string // the operation: "9223372036854775807 + 1", "the sum"
	Where string // "partition 0 offset 7", "row 3", "in a group's result"
	Sum   bool
}

func (e *RangeError) Error() string {
	fix := "multiply an operand by 1.0 for a decimal result"
	if e.Sum {
		fix = "sum a decimal instead, as in sum(x * 1.0)"
	}
	where := ""
	if e.Where != "" {
		where = " at " + e.Where
		if strings.HasPrefix(e.Where, "in ") {
			where = " " + e.Where
		}
	}
	return fmt.Sprintf("%s: bigint out of range: %s is past the 64-bit integer range (-9223372036854775808 to 9223372036854775807)%s; %s", e.Expr, e.What, where, fix)
}
