package lang

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Precedence levels, loosest first; Format adds the parentheses an
// expression needs to read back as the same tree, and no others.
const (
	precOr = iota + 1
	precAnd
	precNot
	precCmp
	precAdd
	precMul
	precNeg
	precAtom
)

func precOf(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		switch {
		case e.Op == OpOr:
			return precOr
		case e.Op == OpAnd:
			return precAnd
		case e.Op.IsComparison():
			return precCmp
		case e.Op == OpAdd || e.Op == OpSub:
			return precAdd
		default:
			return precMul
		}
	case *Unary:
		if e.Op == OpNot {
			return precNot
		}
		return precNeg
	case *Like, *Regex, *In, *Between, *IsNull:
		return precCmp
	case *IntLit:
		if e.V < 0 {
			return precNeg // -5 * x is fine, but x - -5 needs no parens either; see formatExpr
		}
	case *FloatLit:
		if e.V < 0 || e.V == 0 && math.Signbit(e.V) {
			return precNeg
		}
	}
	return precAtom
}

// FormatExpr prints e as canonical KafkaQL; Parse reads it back to the same
// tree. It is also the default name of a projected column.
func FormatExpr(e Expr) string {
	var sb strings.Builder
	formatExpr(&sb, e, 0)
	return sb.String()
}

// formatExpr writes e, in parentheses when its precedence is below min.
func formatExpr(sb *strings.Builder, e Expr, min int) {
	p := precOf(e)
	if p < min {
		sb.WriteByte('(')
		formatExpr(sb, e, 0)
		sb.WriteByte(')')
		return
	}
	switch e := e.(type) {
	case nil:
		sb.WriteString("NULL")
	case *Column:
		sb.WriteString(e.Name)
		for _, s := range e.Path {
			switch {
			case s.IsIndex:
				fmt.Fprintf(sb, "[%d]", s.Index)
			case isPathWord(s.Key):
				sb.WriteString("." + s.Key)
			default:
				sb.WriteString("[" + Quote([]byte(s.Key)) + "]")
			}
		}
	case *NullLit:
		sb.WriteString("NULL")
	case *BoolLit:
		if e.V {
			sb.WriteString("TRUE")
		} else {
			sb.WriteString("FALSE")
		}
	case *IntLit:
		sb.WriteString(strconv.FormatInt(e.V, 10))
	case *FloatLit:
		s := strconv.FormatFloat(e.V, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		sb.WriteString(s)
	case *BytesLit:
		sb.WriteString(Quote(e.V))
	case *TimeLit:
		sb.WriteString("TIMESTAMP " + strconv.FormatInt(e.Ms, 10))
	case *AgoLit:
		sb.WriteString(formatDuration(e.Ago) + " AGO")
	case *Unary:
		if e.Op == OpNot {
			sb.WriteString("NOT ")
			formatExpr(sb, e.X, precNot)
			return
		}
		var inner strings.Builder
		formatExpr(&inner, e.X, precNeg)
		sb.WriteByte('-')
		if strings.HasPrefix(inner.String(), "-") {
			sb.WriteByte(' ') // "--" would start a comment
		}
		sb.WriteString(inner.String())
	case *Binary:
		// Left-associative: the left operand may be at the same level, the
		// right one must bind tighter. Comparisons do not chain, so both
		// operands of a comparison must bind tighter.
		lmin, rmin := p, p+1
		if p == precCmp {
			lmin = p + 1
		}
		formatExpr(sb, e.L, lmin)
		sb.WriteString(" " + e.Op.String() + " ")
		formatExpr(sb, e.R, rmin)
	case *Like:
		formatExpr(sb, e.X, precAdd)
		if e.Not {
			sb.WriteString(" NOT")
		}
		if e.CaseInsensitive {
			sb.WriteString(" ILIKE ")
		} else {
			sb.WriteString(" LIKE ")
		}
		sb.WriteString(Quote([]byte(e.Pattern)))
	case *Regex:
		formatExpr(sb, e.X, precAdd)
		if e.Not {
			sb.WriteString(" !~ ")
		} else {
			sb.WriteString(" ~ ")
		}
		sb.WriteString(Quote([]byte(e.Pattern)))
	case *In:
		formatExpr(sb, e.X, precAdd)
		if e.Not {
			sb.WriteString(" NOT")
		}
		sb.WriteString(" IN (")
		for i, x := range e.List {
			if i > 0 {
				sb.WriteString(", ")
			}
			formatExpr(sb, x, 0)
		}
		sb.WriteByte(')')
	case *Between:
		formatExpr(sb, e.X, precAdd)
		if e.Not {
			sb.WriteString(" NOT")
		}
		sb.WriteString(" BETWEEN ")
		formatExpr(sb, e.Lo, precAdd)
		sb.WriteString(" AND ")
		formatExpr(sb, e.Hi, precAdd)
	case *IsNull:
		formatExpr(sb, e.X, precAdd)
		if e.Not {
			sb.WriteString(" IS NOT NULL")
		} else {
			sb.WriteString(" IS NULL")
		}
	case *Call:
		sb.WriteString(e.Name + "(")
		if e.Distinct {
			sb.WriteString("DISTINCT ")
		}
		if e.Star {
			sb.WriteByte('*')
		}
		for i, x := range e.Args {
			if i > 0 {
				sb.WriteString(", ")
			}
			formatExpr(sb, x, 0)
		}
		sb.WriteByte(')')
	default:
		fmt.Fprintf(sb, "/* not an expression: %T */", e)
	}
}

// isPathWord reports whether a JSON member name can be written after a dot:
// value.customer.id. Anything else is written value['odd-name'].
func isPathWord(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

func formatQuery(sb *strings.Builder, q *Query) {
	if q.Where != nil {
		sb.WriteString(" WHERE ")
		formatExpr(sb, q.Where, 0)
	}
	formatOrderBy(sb, q.OrderBy)
	if q.Limit != nil {
		sb.WriteString(" LIMIT " + strconv.FormatInt(*q.Limit, 10))
	}
}

func formatOrderBy(sb *strings.Builder, items []OrderItem) {
	if items == nil {
		return
	}
	sb.WriteString(" ORDER BY ")
	for i, it := range items {
		if i > 0 {
			sb.WriteString(", ")
		}
		formatExpr(sb, it.X, 0)
		if it.Desc {
			sb.WriteString(" DESC")
		}
	}
}
