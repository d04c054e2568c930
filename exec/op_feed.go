package exec

import "github.com/kql-dev/kql/result"

// rowFeed is what an operator of the plan reads from its child: one row at
// a time, each evaluated by the statement's compiler (the child sets it to
// the row before advance returns), and built only when an operator keeps
// it. Filter, TopK and Skip/Limit are rowFeeds over a rowFeed, so the record
// path (CONSUME ... ORDER BY) and the metadata statements (SHOW ... WHERE
// ... ORDER BY ... LIMIT) run the same operators.
type rowFeed interface {
	// advance moves to the next row; false: no more rows (see err).
	advance() bool
	// row is the current row, one the caller may keep past advance.
	row() result.Row
	// failed reports whether an expression met an error (an integer
	// overflow) on the current row: the read ends with it.
	failed() bool
	// err is what ended the rows (nil: they all came).
	err() error
}

// resultFeed is a result's rows as a rowFeed: the Scan of a metadata
// statement, whose rows the statement has already built.
type resultFeed struct {
	res  result.Result
	set  func(result.Row) // the compiler's SetRow
	cur  result.Row
	fail func() bool
}

func (f *resultFeed) advance() bool {
	row, ok := f.res.Next()
	if !ok {
		return false
	}
	f.cur = row
	f.set(row)
	return true
}
func (f *resultFeed) row() result.Row { return f.cur }
func (f *resultFeed) failed() bool    { return f.fail() }
func (f *resultFeed) err() error      { return f.res.Err() }

// drainFeed reads every row of f.
func drainFeed(f rowFeed) []result.Row {
	var rows []result.Row
	for f.advance() {
		rows = append(rows, f.row())
	}
	return rows
}
