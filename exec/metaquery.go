package exec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// applyQuery runs a SHOW or DESCRIBE statement's WHERE, ORDER BY and LIMIT
// over its own result: the rows that came are filtered, sorted (stable, so
// rows that tie keep the statement's own order) and cut. A partial result
// stays partial: its error follows the rows that are left. Values that
// could not be compared make one warning.
func applyQuery(res result.Result, q *lang.Query, now time.Time) (result.Result, error) {
	if q.IsZero() {
		return res, nil
	}
	defer res.Close()
	cols := res.Columns()
	c := eval.NewRowCompiler(cols, eval.Options{Now: now})
	var where *eval.Expr
	if q.Where != nil {
		var err error
		if where, err = c.Compile(q.Where); err != nil {
			return nil, fmt.Errorf("WHERE %s: %w", lang.FormatExpr(q.Where), err)
		}
	}
	var order *eval.Order
	if q.OrderBy != nil {
		var err error
		if order, err = eval.NewOrder(c, q.OrderBy, nil); err != nil {
			return nil, fmt.Errorf("ORDER BY: %w", err)
		}
	}
	type keyed struct {
		row  result.Row
		keys []eval.Value
	}
	var rows []keyed
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		c.SetRow(row)
		if where != nil && !where.True() {
			continue
		}
		k := keyed{row: row}
		if order != nil {
			k.keys = order.Keys(nil)
		}
		rows = append(rows, k)
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	failure := res.Err()
	if failure != nil && !result.IsPartial(failure) {
		return nil, failure
	}
	if order != nil {
		slices.SortStableFunc(rows, func(a, b keyed) int { return order.Compare(a.keys, b.keys) })
	}
	if q.Limit != nil && int64(len(rows)) > *q.Limit {
		rows = rows[:*q.Limit]
	}
	out := &result.Slice{Cols: cols, Failure: failure}
	for _, k := range rows {
		out.Rows = append(out.Rows, k.row)
	}
	out.Notes = res.Stats().Notices()
	// The statement's own warnings (SHOW SUBJECTS: a subject whose details
	// could not be read) stay; WHERE's come after them.
	out.Warns = append(out.Warns, res.Stats().Warnings()...)
	if w := c.Warnings.String(); w != "" {
		out.Warns = append(out.Warns, w)
	}
	return out, nil
}

// globRe turns a SHOW ... LIKE pattern into a regular expression: * and %
// are any run of characters, ? and _ one character, [a-z] a class, and \
// makes the next character plain. kql has always taken * and ?; % and _ are
// SQL's spelling of the same.
func globRe(glob string) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString(`^(?s:`)
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*', '%':
			sb.WriteString(`.*`)
		case '?', '_':
			sb.WriteString(`.`)
		case '\\':
			if i+1 >= len(glob) {
				return nil, fmt.Errorf("LIKE %q: the pattern ends with a \\ that escapes nothing", glob)
			}
			i++
			sb.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("LIKE %q: the [ at %d has no closing ] (use * or %% for any run of characters, ? or _ for one, [a-z] for a class)", glob, i+1)
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:] // path.Match's negation
			}
			sb.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			sb.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	sb.WriteString(`)$`)
	re, err := regexp.Compile(sb.String())
	if err != nil {
		return nil, fmt.Errorf("LIKE %q: bad pattern: %v (use * or %% for any run of characters, ? or _ for one, [a-z] for a class)", glob, err)
	}
	return re, nil
}

// likeMatcher returns a matcher for the optional LIKE pattern (nil: all).
func likeMatcher(glob *string) (func(string) bool, error) {
	if glob == nil {
		return func(string) bool { return true }, nil
	}
	re, err := globRe(*glob)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}
