package exec

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// The plan of a SHOW or DESCRIBE statement's WHERE, ORDER BY and LIMIT:
// the statement builds its rows (its requests), and the record path's
// operators run over them: Filter, TopK, Skip/Limit. EXPLAIN prints the
// operators from the plan value execution runs, so they cannot disagree.

// metaPlan is a metadata statement's operator chain, scan first.
type metaPlan struct {
	q   *lang.Query
	ops []metaOp
}

type metaOpKind int

const (
	metaScan metaOpKind = iota
	metaFilter
	metaTopK
	metaLimit
)

// metaOp is one operator and what EXPLAIN says it does.
type metaOp struct {
	kind metaOpKind
	planOp
}

// planMetaQuery plans q over the rows of the statement st (nil: q is empty,
// the rows are the statement's as they are). Pure: no I/O.
func planMetaQuery(st lang.Statement, q *lang.Query) *metaPlan {
	if q == nil || q.IsZero() {
		return nil
	}
	pl := &metaPlan{q: q}
	add := func(k metaOpKind, name, detail string) {
		pl.ops = append(pl.ops, metaOp{k, planOp{name, detail}})
	}
	add(metaScan, "Scan", "the rows of "+statementHead(st)+", as the requests above answer them")
	if q.Where != nil {
		add(metaFilter, "Filter", "WHERE "+lang.FormatExpr(q.Where)+" on every row")
	}
	if q.OrderBy != nil {
		// TopK holds LIMIT rows; without LIMIT it is a sort of every row.
		name, keeps := "Sort", "every row"
		if q.Limit != nil {
			name, keeps = "TopK", fmt.Sprintf("keeps the first %d", *q.Limit)
		}
		add(metaTopK, name, "ORDER BY "+formatOrder(q.OrderBy)+" (rows that tie keep the statement's order), "+keeps)
	}
	if q.Limit != nil {
		add(metaLimit, "Skip/Limit", fmt.Sprintf("LIMIT %d", *q.Limit))
	}
	return pl
}

// statementHead is the statement's first words as written (SHOW TOPICS,
// DESCRIBE GROUP), for the Scan's detail.
func statementHead(st lang.Statement) string {
	text := lang.Format(st)
	words := strings.Fields(text)
	if len(words) > 2 {
		words = words[:2]
	}
	return strings.TrimSuffix(strings.Join(words, " "), ";")
}

// formatOrder writes ORDER BY's items as the statement would.
func formatOrder(items []lang.OrderItem) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = lang.FormatExpr(it.X)
		if it.Desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

// run runs the plan's operators over res, the statement's own rows: the
// rows that come are filtered, sorted (stable) and cut. A partial result
// stays partial: its error follows the rows that are left. Values that
// could not be compared make one warning. A nil plan returns res.
func (pl *metaPlan) run(res result.Result, now time.Time) (result.Result, error) {
	if pl == nil {
		return res, nil
	}
	defer res.Close()
	cols := res.Columns()
	c := eval.NewRowCompiler(cols, eval.Options{Now: now})
	var feed rowFeed = &resultFeed{res: res, set: c.SetRow, fail: func() bool { return c.Err() != nil }}
	for _, op := range pl.ops {
		switch op.kind {
		case metaFilter:
			f, err := compileFilter(c, pl.q.Where)
			if err != nil {
				return nil, err
			}
			feed = &filterFeed{rowFeed: feed, f: f}
		case metaTopK:
			ord, err := eval.NewOrder(c, pl.q.OrderBy, nil)
			if err != nil {
				return nil, fmt.Errorf("ORDER BY: %w", err)
			}
			keep := int64(math.MaxInt64)
			if pl.q.Limit != nil {
				keep = *pl.q.Limit
			}
			feed = &topKFeed{rowFeed: feed, ord: ord, keep: keep, partialOK: true}
		case metaLimit:
			feed = &limitFeed{rowFeed: feed, limit: *pl.q.Limit}
		}
	}
	rows := drainFeed(feed)
	// Skip/Limit stops before the statement's last row, but a result's
	// error comes after it (result.Slice: a partial answer's missing
	// brokers): read the rest, unevaluated, so the error is not lost.
	for {
		if _, ok := res.Next(); !ok {
			break
		}
	}
	if err := c.Err(); err != nil {
		return nil, err
	}
	failure := res.Err()
	if failure != nil && !result.IsPartial(failure) {
		return nil, failure
	}
	out := &result.Slice{Cols: cols, Rows: rows, Failure: failure}
	out.Notes = res.Stats().Notices()
	// The statement's own warnings (SHOW SUBJECTS: a subject whose details
	// could not be read) stay; WHERE's come after them.
	out.Warns = append(out.Warns, res.Stats().Warnings()...)
	if w := c.Warnings.String(); w != "" {
		out.Warns = append(out.Warns, w)
	}
	return out, nil
}

// explain adds the plan's operator tree, top first, as the record
// statements print theirs.
func (pl *metaPlan) explain(p *planner) {
	if pl == nil {
		return
	}
	for i := len(pl.ops) - 1; i >= 0; i-- {
		op := pl.ops[i]
		indent := strings.Repeat("  ", len(pl.ops)-1-i)
		p.rows = append(p.rows, result.Row{nil, "Plan", nil, "kql", indent + op.name + ": " + op.detail})
	}
}
