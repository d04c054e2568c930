package exec

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// Records written to a partition after a CONSUME pinned its end, but before
// the read's first Fetch, come back in the same Fetch answer as the records
// before the end. The read leaves them out (they are past its end), and the
// next page must start at them: the page after a read that stopped at
// LIMIT neither overlaps nor skips, also for a partition that was read to
// its end.
func TestReview9_NextPageAfterRecordsWrittenPastTheEnd(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	f.produceAt(t, "t", 0, base, 0, 1, 2)
	var p1 []int
	for i := 0; i < 20; i++ {
		p1 = append(p1, 10+i)
	}
	f.produceAt(t, "t", 1, base, p1...)

	res, err := f.sess.Execute(ctxT(t), &lang.Consume{Topic: "t", Limit: i64(10)})
	require.NoError(t, err)
	// The ends are pinned; now partition 0 grows before the first Fetch.
	f.produceAt(t, "t", 0, base, 100, 101, 102)
	var rows []result.Row
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		rows = append(rows, row)
	}
	require.NoError(t, res.Err())
	require.Equal(t, []string{"0/0", "0/1", "0/2", "1/0", "1/1", "1/2", "1/3", "1/4", "1/5", "1/6"}, ids(rows))
	next, ok := res.(Pager).NextPage()
	require.True(t, ok)
	for _, po := range next.From.Positions {
		if po.Partition == 0 {
			require.Equal(t, int64(3), po.Offset, "the next page %v starts partition 0 after records 0/3..0/5, which no page shows", next.From.Positions)
		}
	}
	rest := forwardJoined(pages(t, f.sess, next, 10))
	seen := map[string]bool{}
	for _, id := range append(ids(rows), ids(rest)...) {
		require.False(t, seen[id], "%s shown twice", id)
		seen[id] = true
	}
	for p, n := range []int{6, 20} {
		for o := 0; o < n; o++ {
			require.True(t, seen[fmt.Sprintf("%d/%d", p, o)], "%d/%d is on no page", p, o)
		}
	}
}
