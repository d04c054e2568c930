package exec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// INSERT INTO TOPIC expr: the expression names each record's destination
// topic, so it must give text. One whose type says it never does (a
// number, TRUE or FALSE, a timestamp, headers, NULL) is refused before the
// source is read; one that may (a column, a JSON path, header()) is checked
// per record, and a record it gives no name for is refused, naming what it
// gave, before anything is written (see insertPlan.dryRun).

// checkDestType refuses a destination expression whose type is never text.
func checkDestType(in *lang.Insert, now time.Time) error {
	x := in.TopicExpr
	kind := ""
	if _, ok := x.(*lang.NullLit); ok {
		kind = "NULL for every record"
	} else if b, ok := x.(*lang.BytesLit); ok && len(b.V) == 0 {
		kind = "an empty text for every record"
	} else {
		ce, err := eval.NewRecordCompiler(eval.Options{Now: now}).Compile(x)
		if err != nil {
			return err
		}
		switch ce.Type {
		case result.Int, result.Number:
			kind = "a number"
		case result.Bool:
			kind = "TRUE or FALSE"
		case result.Time:
			kind = "a timestamp"
		case result.Headers:
			kind = "headers"
		default:
			return nil
		}
	}
	return fmt.Errorf("the destination TOPIC %s gives %s, not a topic name; nothing was read or written (give an expression of text that names a topic, e.g. header('dlq.original.topic') or value.topic)", lang.FormatExpr(x), kind)
}

// destName is the topic a record's destination value v names; the error
// for a value that names none says what it was and how to leave such
// records out.
func (p *insertPlan) destName(r *insertRow, v any) (string, error) {
	var name string
	gave := ""
	switch x := v.(type) {
	case nil:
		gave = "is NULL"
	case string:
		name, gave = x, "is empty"
	case []byte:
		name, gave = string(x), "is empty"
	case result.JSON:
		gave = fmt.Sprintf("gives %s, not text", clip(string(x)))
	case time.Time:
		gave = fmt.Sprintf("gives the timestamp %s, not text", x.UTC().Format(time.RFC3339Nano))
	case []result.Header:
		gave = "gives headers, not text"
	default:
		gave = fmt.Sprintf("gives %v, not text", x)
	}
	if name != "" {
		return name, nil
	}
	x := lang.FormatExpr(p.in.TopicExpr)
	msg := fmt.Sprintf("the record at %s has no destination: %s %s; nothing was written", r.at(), x, gave)
	if strings.HasPrefix(gave, "is ") {
		// Three-valued logic would leave NULL out with `<> ''` alone; both
		// are said, so the hint reads as what it does.
		operand := x
		if !simpleExpr(p.in.TopicExpr) {
			operand = "(" + x + ")"
		}
		msg += " (" + narrowWhere(p.in.Select, fmt.Sprintf("%s IS NOT NULL AND %s <> ''", operand, operand)) + ")"
	}
	return "", errors.New(msg)
}

// simpleExpr reports whether e needs no parentheses as an operand of IS
// NULL or <>: a column, a call or a literal.
func simpleExpr(e lang.Expr) bool {
	switch e.(type) {
	case *lang.Column, *lang.Call, *lang.BytesLit, *lang.NullLit, *lang.IntLit, *lang.FloatLit, *lang.BoolLit, *lang.TimeLit:
		return true
	}
	return false
}

// clip is s cut to a length a message can quote.
func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}
