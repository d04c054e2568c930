package exec

import (
	"slices"
	"time"

	"github.com/kql-dev/kql/lang"
)

// fixedTimes is in with every relative time of its SELECT (`d AGO` in an
// expression, FROM d AGO) made the absolute time it means at now, the
// statement's start. The dry run, the write and a resume statement then
// all mean the same records: a resume run an hour later that said
// `timestamp >= 20000h AGO` would copy a different set. in is not changed.
func fixedTimes(in *lang.Insert, now time.Time) *lang.Insert {
	out := *in
	sel := *in.Select
	out.Select = &sel
	if sel.From != nil && sel.From.Kind == lang.FromAgo {
		sel.From = &lang.Start{Kind: lang.FromTimestamp, Timestamp: now.Add(-sel.From.Ago).UnixMilli()}
	}
	sel.Where = fixAgo(sel.Where, now)
	if sel.Projection != nil {
		sel.Projection = slices.Clone(sel.Projection)
		for i := range sel.Projection {
			sel.Projection[i].X = fixAgo(sel.Projection[i].X, now)
		}
	}
	if sel.GroupBy != nil {
		sel.GroupBy = slices.Clone(sel.GroupBy)
		for i := range sel.GroupBy {
			sel.GroupBy[i] = fixAgo(sel.GroupBy[i], now)
		}
	}
	if sel.OrderBy != nil {
		sel.OrderBy = slices.Clone(sel.OrderBy)
		for i := range sel.OrderBy {
			sel.OrderBy[i].X = fixAgo(sel.OrderBy[i].X, now)
		}
	}
	out.TopicExpr = fixAgo(in.TopicExpr, now)
	return &out
}

// fixAgo is e with each AgoLit a TimeLit at now; nodes above one are
// copied, the rest shared (e is not changed).
func fixAgo(e lang.Expr, now time.Time) lang.Expr {
	if e == nil || !hasAgo(e) {
		return e
	}
	list := func(xs []lang.Expr) []lang.Expr {
		out := make([]lang.Expr, len(xs))
		for i, x := range xs {
			out[i] = fixAgo(x, now)
		}
		return out
	}
	switch e := e.(type) {
	case *lang.AgoLit:
		return &lang.TimeLit{Ms: now.Add(-e.Ago).UnixMilli()}
	case *lang.Unary:
		c := *e
		c.X = fixAgo(e.X, now)
		return &c
	case *lang.Binary:
		c := *e
		c.L, c.R = fixAgo(e.L, now), fixAgo(e.R, now)
		return &c
	case *lang.Like:
		c := *e
		c.X = fixAgo(e.X, now)
		return &c
	case *lang.Regex:
		c := *e
		c.X = fixAgo(e.X, now)
		return &c
	case *lang.In:
		c := *e
		c.X, c.List = fixAgo(e.X, now), list(e.List)
		return &c
	case *lang.Between:
		c := *e
		c.X, c.Lo, c.Hi = fixAgo(e.X, now), fixAgo(e.Lo, now), fixAgo(e.Hi, now)
		return &c
	case *lang.IsNull:
		c := *e
		c.X = fixAgo(e.X, now)
		return &c
	case *lang.Call:
		c := *e
		c.Args = list(e.Args)
		return &c
	}
	return e
}

func hasAgo(e lang.Expr) bool {
	found := false
	lang.Walk(e, func(x lang.Expr) bool {
		if _, ok := x.(*lang.AgoLit); ok {
			found = true
		}
		return !found
	})
	return found
}
