package exec

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// metaQuery parses a SHOW or DESCRIBE statement: the statement and its
// WHERE / ORDER BY / LIMIT.
func metaQuery(t *testing.T, src string) (lang.Statement, *lang.Query) {
	t.Helper()
	st := parse(t, src)
	return st, st.(lang.Queryable).MetaQuery()
}

// TestPlanMetaQueryOperators: a metadata statement's plan has the record
// path's operators, only those its clauses ask for, scan first; planning
// is pure.
func TestPlanMetaQueryOperators(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string // name: detail
	}{
		{"SHOW TOPICS", nil},
		{"SHOW TOPICS WHERE partitions > 2", []string{
			"Scan: the rows of SHOW TOPICS, as the requests above answer them",
			"Filter: WHERE partitions > 2 on every row"}},
		{"SHOW BROKERS LIMIT 2", []string{
			"Scan: the rows of SHOW BROKERS, as the requests above answer them",
			"Skip/Limit: LIMIT 2"}},
		{"DESCRIBE GROUP g ORDER BY lag DESC, partition", []string{
			"Scan: the rows of DESCRIBE GROUP, as the requests above answer them",
			"Sort: ORDER BY lag DESC, partition (rows that tie keep the statement's order), every row"}},
		{"SHOW PARTITIONS WHERE partition < 3 ORDER BY messages DESC LIMIT 4", []string{
			"Scan: the rows of SHOW PARTITIONS, as the requests above answer them",
			"Filter: WHERE partition < 3 on every row",
			"TopK: ORDER BY messages DESC (rows that tie keep the statement's order), keeps the first 4",
			"Skip/Limit: LIMIT 4"}},
	} {
		t.Run(tc.src, func(t *testing.T) {
			st, q := metaQuery(t, tc.src)
			pl := planMetaQuery(st, q)
			if tc.want == nil {
				require.Nil(t, pl)
				return
			}
			var got []string
			for _, op := range pl.ops {
				got = append(got, op.name+": "+op.detail)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

var metaTestCols = []result.Column{col("topic", result.String), col("partitions", result.Int)}

func metaTestRows() []result.Row {
	return []result.Row{{"a", int64(1)}, {"b", int64(3)}, {"c", int64(2)}, {"d", int64(3)}, {"e", int64(1)}}
}

func runMeta(t *testing.T, src string, res result.Result) ([]result.Row, result.Result, error) {
	t.Helper()
	st, q := metaQuery(t, src)
	out, err := planMetaQuery(st, q).run(res, time.Now())
	if err != nil {
		return nil, nil, err
	}
	var rows []result.Row
	for {
		row, ok := out.Next()
		if !ok {
			break
		}
		rows = append(rows, row)
	}
	return rows, out, nil
}

func names(rows []result.Row) string {
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprint(r[0]))
	}
	return strings.Join(out, " ")
}

// TestMetaPlanRuns: Filter, TopK (stable: rows that tie keep the
// statement's order), Sort and Skip/Limit over a statement's rows; a
// partial result keeps its rows and its error; any other failure fails
// the statement; LIMIT without ORDER BY stops reading.
func TestMetaPlanRuns(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"SHOW TOPICS WHERE partitions > 1", "b c d"},
		{"SHOW TOPICS ORDER BY partitions DESC", "b d c a e"},
		{"SHOW TOPICS ORDER BY partitions DESC LIMIT 3", "b d c"},
		{"SHOW TOPICS WHERE partitions < 3 ORDER BY partitions LIMIT 2", "a e"},
		{"SHOW TOPICS ORDER BY partitions, topic DESC LIMIT 10", "e a c d b"},
		{"SHOW TOPICS LIMIT 2", "a b"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			rows, _, err := runMeta(t, tc.src, result.NewSlice(metaTestCols, metaTestRows()))
			require.NoError(t, err)
			require.Equal(t, tc.want, names(rows))
		})
	}

	t.Run("LIMIT stops evaluating", func(t *testing.T) {
		// c would overflow the sum: past the LIMIT-th row WHERE is not
		// evaluated.
		rows := metaTestRows()
		rows[2][1] = int64(math.MaxInt64)
		rows2, _, err := runMeta(t, "SHOW TOPICS WHERE partitions + 1 > 2 LIMIT 1", result.NewSlice(metaTestCols, rows))
		require.NoError(t, err)
		require.Equal(t, "b", names(rows2))
	})

	t.Run("partial", func(t *testing.T) {
		partial := &result.PartialError{What: "SHOW TOPICS", Missing: []error{errors.New("broker 2 did not answer")}}
		in := &result.Slice{Cols: metaTestCols, Rows: metaTestRows(), Failure: partial}
		rows, out, err := runMeta(t, "SHOW TOPICS ORDER BY partitions DESC LIMIT 2", in)
		require.NoError(t, err)
		require.Equal(t, "b d", names(rows))
		require.ErrorIs(t, out.Err(), partial)
	})

	// LIMIT without ORDER BY takes the first rows, but the error of a
	// partial result comes after the last row: it must not be lost
	// because LIMIT stopped before it, nor must another failure.
	t.Run("partial after the LIMIT-th row", func(t *testing.T) {
		partial := &result.PartialError{What: "SHOW TOPICS", Missing: []error{errors.New("broker 2 did not answer")}}
		for _, src := range []string{"SHOW TOPICS LIMIT 2", "SHOW TOPICS WHERE partitions > 1 LIMIT 1"} {
			in := &result.Slice{Cols: metaTestCols, Rows: metaTestRows(), Failure: partial}
			_, out, err := runMeta(t, src, in)
			require.NoError(t, err, src)
			require.ErrorIs(t, out.Err(), partial, src)
		}
		boom := errors.New("the cluster went away")
		in := &result.Slice{Cols: metaTestCols, Rows: metaTestRows(), Failure: boom}
		_, _, err := runMeta(t, "SHOW TOPICS LIMIT 1", in)
		require.ErrorIs(t, err, boom)
	})

	t.Run("failure", func(t *testing.T) {
		boom := errors.New("the cluster went away")
		in := &result.Slice{Cols: metaTestCols, Rows: metaTestRows(), Failure: boom}
		_, _, err := runMeta(t, "SHOW TOPICS ORDER BY partitions LIMIT 2", in)
		require.ErrorIs(t, err, boom)
	})

	t.Run("warning", func(t *testing.T) {
		in := &result.Slice{Cols: metaTestCols, Rows: metaTestRows(), Warns: []string{"the statement's own"}}
		rows, out, err := runMeta(t, "SHOW TOPICS WHERE partitions = 'x'", in)
		require.NoError(t, err)
		require.Empty(t, rows)
		w := out.Stats().Warnings()
		require.Len(t, w, 2)
		require.Equal(t, "the statement's own", w[0])
		require.Contains(t, w[1], "cannot be compared")
	})
}

// TestExplainMetaQueryPrintsItsPlan: EXPLAIN of a SHOW with WHERE, ORDER
// BY and LIMIT ends with the operator tree, top first, printed from the
// plan the statement runs.
func TestExplainMetaQueryPrintsItsPlan(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	src := "SHOW TOPICS WHERE partitions > 1 ORDER BY topic DESC LIMIT 2"
	rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: parse(t, src)})
	var plan []string
	for _, r := range rows {
		if r[1] == "Plan" {
			plan = append(plan, r[4].(string))
		}
	}
	st, q := metaQuery(t, src)
	pl := planMetaQuery(st, q)
	require.Len(t, plan, len(pl.ops))
	for i, op := range pl.ops {
		line := plan[len(plan)-1-i]
		require.Equal(t, strings.Repeat("  ", len(pl.ops)-1-i)+op.name+": "+op.detail, line)
	}
	require.Equal(t, "Skip/Limit: LIMIT 2", plan[0])
	require.Equal(t, "      Scan: the rows of SHOW TOPICS, as the requests above answer them", plan[3])

	// Without WHERE, ORDER BY or LIMIT there is no operator to print.
	rows, _ = mustRun(t, f.sess, &lang.Explain{Stmt: parse(t, "SHOW TOPICS")})
	for _, r := range rows {
		require.NotEqual(t, "Plan", r[1])
	}
}
