package exec

import (
	"fmt"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/lang"
)

// filterOp is the plan's Filter: WHERE over the row or record the
// statement's compiler is set to. The record scan applies it in its own
// loop (it counts matches for LIMIT and SKIP as it reads); the metadata
// statements read it as filterFeed.
type filterOp struct {
	where *eval.Expr
}

// compileFilter compiles WHERE with c; a nil where keeps every row.
func compileFilter(c *eval.Compiler, where lang.Expr) (*filterOp, error) {
	if where == nil {
		return nil, nil
	}
	w, err := c.Compile(where)
	if err != nil {
		return nil, fmt.Errorf("WHERE %s: %w", lang.FormatExpr(where), err)
	}
	return &filterOp{where: w}, nil
}

// keeps reports whether WHERE is true for the current row (NULL is not).
func (f *filterOp) keeps() bool { return f.where.True() }

// filterFeed is Filter over a child feed: the rows WHERE keeps.
type filterFeed struct {
	rowFeed
	f *filterOp
}

func (ff *filterFeed) advance() bool {
	for ff.rowFeed.advance() {
		keep := ff.f.keeps()
		if ff.rowFeed.failed() {
			return false
		}
		if keep {
			return true
		}
	}
	return false
}
