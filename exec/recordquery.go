package exec

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// The record query: CONSUME and SELECT with WHERE, a SELECT list,
// aggregates, ORDER BY. The scan (consumeResult) evaluates WHERE on each
// record's bytes and counts only matches toward LIMIT and SKIP; the
// operators here sit on top of it: a projection builds a row only for a
// match, an aggregation or an ORDER BY reads the whole range and keeps
// bounded state (at most 100,000 groups; a top-LIMIT heap).

// pushdown is what the scan takes from WHERE instead of filtering record
// by record: which partitions to read and where each starts and ends.
// Every record read is still filtered by the whole predicate; pushdown only
// leaves out records the predicate would drop.
type pushdown struct {
	partitions []int32 // nil: every partition; else only these
	minOffset  int64   // offset >= minOffset; math.MinInt64 when none
	maxOffset  int64   // offset < maxOffset; math.MaxInt64 when none
	fromMs     *int64  // timestamp >= fromMs: start at ListOffsets by time
	toMs       *int64  // timestamp < toMs: end at ListOffsets by time
	notes      []string
}

// analyzePushdown reads the conjuncts of where that the scan can take.
func analyzePushdown(where lang.Expr, now time.Time) *pushdown {
	pd := &pushdown{minOffset: math.MinInt64, maxOffset: math.MaxInt64}
	if where == nil {
		return pd
	}
	var conj []lang.Expr
	var flatten func(e lang.Expr)
	flatten = func(e lang.Expr) {
		if b, ok := e.(*lang.Binary); ok && b.Op == lang.OpAnd {
			flatten(b.L)
			flatten(b.R)
			return
		}
		conj = append(conj, e)
	}
	flatten(where)
	for _, e := range conj {
		switch x := e.(type) {
		case *lang.Binary:
			col, op, lit, ok := columnComparison(x)
			if !ok {
				continue
			}
			switch col {
			case "partition":
				if n, ok := intLit(lit); ok && op == lang.OpEq {
					pd.restrict([]int32{int32(n)}, lang.FormatExpr(e))
				}
			case "offset":
				if n, ok := intLit(lit); ok {
					pd.offsetBound(op, n, lang.FormatExpr(e))
				}
			case "timestamp":
				if ms, ok := timeLit(lit, now); ok {
					pd.timeBound(op, ms, lang.FormatExpr(e))
				}
			}
		case *lang.In:
			if c, ok := x.X.(*lang.Column); !ok || x.Not || c.Name != "partition" || c.Path != nil {
				continue
			}
			var ps []int32
			all := true
			for _, it := range x.List {
				n, ok := intLit(it)
				if !ok {
					all = false
					break
				}
				ps = append(ps, int32(n))
			}
			if all {
				pd.restrict(ps, lang.FormatExpr(e))
			}
		case *lang.Between:
			c, ok := x.X.(*lang.Column)
			if !ok || x.Not || c.Path != nil {
				continue
			}
			switch c.Name {
			case "timestamp":
				lo, ok1 := timeLit(x.Lo, now)
				hi, ok2 := timeLit(x.Hi, now)
				if ok1 && ok2 {
					pd.timeBound(lang.OpGe, lo, lang.FormatExpr(e))
					pd.timeBound(lang.OpLe, hi, "")
				}
			case "offset":
				lo, ok1 := intLit(x.Lo)
				hi, ok2 := intLit(x.Hi)
				if ok1 && ok2 {
					pd.offsetBound(lang.OpGe, lo, lang.FormatExpr(e))
					pd.offsetBound(lang.OpLe, hi, "")
				}
			}
		}
	}
	return pd
}

// columnComparison matches `column op literal` or `literal op column` on
// a record column (no JSON path), turning the second into the first.
func columnComparison(b *lang.Binary) (string, lang.Op, lang.Expr, bool) {
	if !b.Op.IsComparison() {
		return "", 0, nil, false
	}
	if c, ok := b.L.(*lang.Column); ok && c.Path == nil {
		return c.Name, b.Op, b.R, true
	}
	if c, ok := b.R.(*lang.Column); ok && c.Path == nil {
		flip := map[lang.Op]lang.Op{lang.OpEq: lang.OpEq, lang.OpNe: lang.OpNe, lang.OpLt: lang.OpGt, lang.OpLe: lang.OpGe, lang.OpGt: lang.OpLt, lang.OpGe: lang.OpLe}
		return c.Name, flip[b.Op], b.L, true
	}
	return "", 0, nil, false
}

func intLit(e lang.Expr) (int64, bool) {
	if n, ok := e.(*lang.IntLit); ok {
		return n.V, true
	}
	return 0, false
}

// timeLit reads a time literal: TIMESTAMP '...', d AGO, or epoch ms.
func timeLit(e lang.Expr, now time.Time) (int64, bool) {
	switch x := e.(type) {
	case *lang.TimeLit:
		return x.Ms, true
	case *lang.AgoLit:
		return now.Add(-x.Ago).UnixMilli(), true
	case *lang.IntLit:
		return x.V, true
	}
	return 0, false
}

func (pd *pushdown) restrict(ps []int32, text string) {
	if pd.partitions == nil {
		pd.partitions = slices.Clone(ps)
	} else {
		pd.partitions = slices.DeleteFunc(pd.partitions, func(p int32) bool { return !slices.Contains(ps, p) })
	}
	if pd.partitions == nil {
		pd.partitions = []int32{}
	}
	pd.notes = append(pd.notes, text+": reads only the partitions it names")
}

// plusOne is n+1 without overflow: a bound at the int64 limit stays there
// (no offset or timestamp is past it), where n+1 would wrap to the least
// int64 and read nothing.
func plusOne(n int64) int64 {
	if n == math.MaxInt64 {
		return n
	}
	return n + 1
}

func (pd *pushdown) offsetBound(op lang.Op, n int64, text string) {
	switch op {
	case lang.OpGe:
		pd.minOffset = max(pd.minOffset, n)
	case lang.OpGt:
		pd.minOffset = max(pd.minOffset, plusOne(n))
	case lang.OpEq:
		pd.minOffset = max(pd.minOffset, n)
		pd.maxOffset = min(pd.maxOffset, plusOne(n))
	case lang.OpLt:
		pd.maxOffset = min(pd.maxOffset, n)
	case lang.OpLe:
		pd.maxOffset = min(pd.maxOffset, plusOne(n))
	default:
		return
	}
	if text != "" {
		pd.notes = append(pd.notes, text+": each partition's reading starts or ends at that offset")
	}
}

func (pd *pushdown) timeBound(op lang.Op, ms int64, text string) {
	from, to := pd.fromMs, pd.toMs
	setFrom := func(v int64) {
		if from == nil || v > *from {
			from = &v
		}
	}
	setTo := func(v int64) {
		if to == nil || v < *to {
			to = &v
		}
	}
	switch op {
	case lang.OpGe:
		setFrom(ms)
	case lang.OpGt:
		setFrom(plusOne(ms))
	case lang.OpEq:
		setFrom(ms)
		setTo(plusOne(ms))
	case lang.OpLt:
		setTo(ms)
	case lang.OpLe:
		setTo(plusOne(ms))
	default:
		return
	}
	pd.fromMs, pd.toMs = from, to
	if text != "" {
		pd.notes = append(pd.notes, text+": each partition starts (or ends) at the first offset with a timestamp at or after the bound (ListOffsets by time, one request per leader broker); records written later with an earlier timestamp are not read")
	}
}

// recordQuery is compiled once per statement: what the scan evaluates.
type recordQuery struct {
	comp *eval.Compiler
	// where is the plan's Filter (filterOp's compiled WHERE), which the
	// scan, the tail's key scan and FOLLOW apply in their own loops, for
	// they count matches as they read; nil: every record.
	where *eval.Expr
}

func compileRecordQuery(st *lang.Consume, now time.Time) (*recordQuery, error) {
	q := &recordQuery{comp: eval.NewRecordCompiler(eval.Options{Now: now})}
	f, err := compileFilter(q.comp, st.Where)
	if err != nil {
		return nil, err
	}
	if f != nil {
		q.where = f.where
	}
	return q, nil
}

// wrapQuery puts the operators a statement needs on top of its scan.
func wrapQuery(st *lang.Consume, r *consumeResult) (result.Result, error) {
	q := r.q
	switch {
	case st.HasAggregates():
		agg, err := eval.NewAggregation(q.comp, eval.GroupingOf(st))
		if err != nil {
			return nil, err
		}
		return &aggResult{scan: r, agg: agg, limit: r.plan.outLimit, skip: r.plan.outSkip}, nil
	case st.OrderBy != nil:
		ord, err := eval.NewOrder(q.comp, st.OrderBy, st.Projection)
		if err != nil {
			return nil, err
		}
		var proj *eval.Projection
		if st.Projection != nil {
			if proj, err = eval.NewProjection(q.comp, st.Projection); err != nil {
				return nil, err
			}
		}
		return newOrderResult(r, ord, proj), nil
	case st.Projection != nil:
		proj, err := eval.NewProjection(q.comp, st.Projection)
		if err != nil {
			return nil, err
		}
		return &projectResult{scan: r, proj: proj}, nil
	}
	return r, nil
}

// projectResult is a SELECT list over the scan's matching records.
type projectResult struct {
	scan *consumeResult
	proj *eval.Projection
}

func (p *projectResult) Columns() []result.Column { return p.proj.Columns() }
func (p *projectResult) Next() (result.Row, bool) {
	if _, ok := p.scan.NextRecord(); !ok {
		return nil, false
	}
	row := p.proj.Row()
	if p.scan.evalFailed() {
		return nil, false
	}
	return row, true
}
func (p *projectResult) Err() error           { return p.scan.Err() }
func (p *projectResult) Close()               { p.scan.Close() }
func (p *projectResult) Stats() *result.Stats { return p.scan.Stats() }

// aggResult reads the whole range, then returns the groups: SKIP of them
// first, then at most LIMIT.
type aggResult struct {
	scan  *consumeResult
	agg   *eval.Aggregation
	limit int64
	skip  int64
	rows  *result.Slice
	err   error
}

// satAdd is a + b for row counts, at most math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func (a *aggResult) Columns() []result.Column { return a.agg.Columns() }
func (a *aggResult) Next() (result.Row, bool) {
	if a.rows == nil {
		for {
			if _, ok := a.scan.NextRecord(); !ok {
				break
			}
			if err := a.agg.Add(); err != nil {
				a.err = err
				a.scan.Close()
				a.rows = result.NewSlice(a.agg.Columns(), nil)
				return nil, false
			}
		}
		if a.scan.Err() != nil {
			// A read cut short (Ctrl-C, --timeout, a partition given up):
			// the groups hold part of the range, and a count of part of it
			// is no answer. No row, as ORDER BY's TopK gives none; Err says
			// why.
			a.rows = result.NewSlice(a.agg.Columns(), nil)
			return nil, false
		}
		rows, err := a.agg.Rows(int(min(satAdd(a.limit, a.skip), math.MaxInt32)))
		if err != nil {
			a.err = err
			a.scan.Close()
			a.rows = result.NewSlice(a.agg.Columns(), nil)
			return nil, false
		}
		rows = rows[min(int64(len(rows)), a.skip):]
		a.rows = result.NewSlice(a.agg.Columns(), rows)
	}
	return a.rows.Next()
}
func (a *aggResult) Err() error {
	if a.err != nil {
		return a.err
	}
	return a.scan.Err()
}
func (a *aggResult) Close()               { a.scan.Close() }
func (a *aggResult) Stats() *result.Stats { return a.scan.Stats() }

// orderResult is ORDER BY over the scan's matching records: the plan's
// TopK, which keeps the first SKIP + LIMIT rows (the rows SKIP leaves out
// are among the first by ORDER BY too), then its Skip/Limit.
type orderResult struct {
	scan *consumeResult
	proj *eval.Projection // nil: the six record columns
	out  rowFeed
}

func newOrderResult(scan *consumeResult, ord *eval.Order, proj *eval.Projection) *orderResult {
	top := &topKFeed{rowFeed: &recordFeed{scan: scan, proj: proj}, ord: ord, keep: satAdd(scan.plan.outLimit, scan.plan.outSkip)}
	return &orderResult{scan: scan, proj: proj, out: &limitFeed{rowFeed: top, skip: scan.plan.outSkip, limit: scan.plan.outLimit}}
}

func (o *orderResult) Columns() []result.Column {
	if o.proj != nil {
		return o.proj.Columns()
	}
	return result.RecordColumns
}

func (o *orderResult) Next() (result.Row, bool) {
	if !o.out.advance() {
		return nil, false
	}
	return o.out.row(), true
}
func (o *orderResult) Err() error           { return o.scan.Err() }
func (o *orderResult) Close()               { o.scan.Close() }
func (o *orderResult) Stats() *result.Stats { return o.scan.Stats() }

// recordFeed is the scan's matching records as a rowFeed: a row (the
// SELECT list, or the six record columns) is built only for the records
// an operator keeps.
type recordFeed struct {
	scan *consumeResult
	proj *eval.Projection
	rec  *result.Record
}

func (f *recordFeed) advance() bool {
	rec, ok := f.scan.NextRecord()
	f.rec = rec
	return ok
}

func (f *recordFeed) row() result.Row {
	if f.proj != nil {
		return f.proj.Row()
	}
	return f.rec.Clone().Row()
}
func (f *recordFeed) failed() bool { return f.scan.evalFailed() }
func (f *recordFeed) err() error   { return f.scan.Err() }

// explainQuery adds what was pushed down, the notes on WHERE key = ...
// and the backward key scan, then the plan's operator tree, top first.
// keyPartition is the partition PARTITION FOR KEY would read for a key.
func explainQuery(p *planner, pl *consumePlan, keyPartition func([]byte) int32) {
	st := pl.stmt
	for _, n := range pl.pd.notes {
		p.rows = append(p.rows, result.Row{nil, "Pushdown", nil, "kql", n})
	}
	if key, ok := keyEquality(st.Where); ok && st.PartitionForKey == nil {
		reads := "reads every partition"
		if st.Partitions != nil || pl.pd.partitions != nil {
			reads = "reads the partitions chosen, not the key's"
		}
		p.rows = append(p.rows, result.Row{nil, "Note", nil, "kql", fmt.Sprintf(
			"WHERE key = ... %s: producers with other partitioners (librdkafka's default is CRC32) put keys elsewhere; PARTITION FOR KEY %s would read only partition %d (murmur2, the default of the Java client, franz-go and PRODUCE)",
			reads, lang.Quote(key), keyPartition(key))})
	}
	if pl.keyScan {
		p.rows = append(p.rows, result.Row{nil, "Scan", nil, "kql", "FROM NEWEST with WHERE: a first Fetch reads backwards from each partition's end, in windows that double, keeping only the (timestamp, offset) of matches until the partition holds LIMIT + SKIP of them or its start is reached (no match reads the whole range); a second Fetch reads the page"})
	}
	for i := len(pl.ops) - 1; i >= 0; i-- {
		op := pl.ops[i]
		indent := strings.Repeat("  ", len(pl.ops)-1-i)
		p.rows = append(p.rows, result.Row{nil, "Plan", nil, "kql", indent + op.name + ": " + op.detail})
	}
}

// tailScans reports whether st reads the last matches (FROM NEWEST or
// TAIL, or FOLLOW without FROM) with WHERE, which planTail finds with a
// backward scan of (timestamp, offset) keys before it reads the page.
func tailScans(st *lang.Consume) bool {
	if st.Where == nil || st.HasAggregates() || st.OrderBy != nil {
		return false
	}
	if st.From == nil {
		return st.Follow
	}
	return st.From.Kind == lang.FromNewest || st.From.Kind == lang.FromTail
}

// keyEquality finds `key = 'text'` (or x'..') among WHERE's conjuncts.
func keyEquality(where lang.Expr) ([]byte, bool) {
	var found []byte
	var walk func(e lang.Expr) bool
	walk = func(e lang.Expr) bool {
		b, ok := e.(*lang.Binary)
		if !ok {
			return false
		}
		if b.Op == lang.OpAnd {
			return walk(b.L) || walk(b.R)
		}
		col, op, lit, ok := columnComparison(b)
		if !ok || col != "key" || op != lang.OpEq {
			return false
		}
		if v, ok := lit.(*lang.BytesLit); ok {
			found = v.V
			return true
		}
		return false
	}
	if where == nil || !walk(where) {
		return nil, false
	}
	return found, true
}
