package exec

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

// The resume of a resume, itself cancelled after its first commit, gives a
// statement with one bound per source partition, not the first resume's
// bound AND its own: each interruption would otherwise add a copy. The
// bound stays the original statement's, though records arrived in between
// (the second read captures later ends), and the user's WHERE is kept
// once; running the last resume copies exactly the original's records.
func TestInsertResumeOfAResumeBoundsOnce(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		src, dst, cl, base := skipSource(t, b)
		insertTxnsOf(t, 5)
		cancelledAfterFirstCommit := func(stmt string) string {
			t.Helper()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := sessionAtCommit(t, b, 1, cancel)
			err := drain(s.Execute(ctx, parse(t, stmt)))
			require.Error(t, err)
			msg := err.Error()
			if strings.Contains(msg, "its outcome is unknown") {
				return resumeIfCommitted(t, msg) // the cancel came at the commit's answer: it committed
			}
			return resumeIfNotCommitted(t, msg)
		}
		resume := cancelledAfterFirstCommit(fmt.Sprintf("INSERT INTO %q SELECT * FROM %q WHERE value = 'v' EXECUTE", dst, src))
		bound := `partition = 0 AND offset <= 9 OR partition = 1 AND offset <= 9 OR partition = 2 AND offset <= 5`
		require.Contains(t, resume, ` WHERE value = 'v' AND (`+bound+`) EXECUTE`)

		// Records that arrive now are not the original statement's: the
		// second read's ends are past them, its resume must not be.
		late := []*kgo.Record{
			{Topic: src, Partition: 0, Key: []byte("late-0"), Value: []byte("v"), Timestamp: base.Add(time.Minute)},
			{Topic: src, Partition: 2, Key: []byte("late-2"), Value: []byte("v"), Timestamp: base.Add(time.Minute)},
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), late...).FirstErr())

		again := cancelledAfterFirstCommit(resume)
		require.Equal(t, 1, strings.Count(again, "partition = 0 AND offset <= 9"), "one bound, not one per interruption: %s", again)
		require.Equal(t, 1, strings.Count(again, "value = 'v'"), "the user's WHERE once: %s", again)
		require.Regexp(t, `^INSERT INTO \S+ SELECT \* FROM \S+ FROM ANCHOR \(0:\d+, 1:\d+, 2:\d+\) WHERE value = 'v' AND \(`+bound+`\) EXECUTE$`, again)

		s, _ := session(t, b)
		mustRun(t, s, parse(t, again))
		var want []string
		for o := range 10 {
			want = append(want, fmt.Sprintf("0-%d", o), fmt.Sprintf("1-%d", o))
		}
		for o := range 6 {
			want = append(want, fmt.Sprintf("2-%d", o))
		}
		requireCopiedOnce(t, s, dst, want)
	})
}

// resumeOf narrows a bound the statement already has (a resume's) instead
// of adding a second: per partition the lower of its offset and the new
// one, a partition the old bound leaves out stays out, and a WHERE that is
// only a bound (a resume of an INSERT without WHERE) is replaced whole.
func TestInsertResumeNarrowsTheBoundItHas(t *testing.T) {
	rd := &sourceRead{starts: map[int32]int64{0: 4, 1: 0, 2: 7}, ends: map[int32]int64{0: 30, 1: 30, 2: 30}, skipped: map[int32]int64{}}
	for _, c := range []struct{ stmt, want string }{
		{"INSERT INTO d SELECT * FROM s FROM ANCHOR (0:4, 1:0, 2:7) WHERE (value = 'v' AND key > 'a') AND (partition = 0 AND offset <= 9 OR partition = 1 AND offset <= 40 OR partition = 2) EXECUTE",
			"INSERT INTO d SELECT * FROM s FROM ANCHOR (0:6, 1:0, 2:7) WHERE value = 'v' AND key > 'a' AND (partition = 0 AND offset <= 9 OR partition = 1 AND offset <= 29 OR partition = 2 AND offset <= 29) EXECUTE"},
		{"INSERT INTO d SELECT * FROM s FROM ANCHOR (0:4, 1:0, 2:7) WHERE partition = 0 AND offset <= 9 OR partition = 2 AND offset <= 8 EXECUTE",
			"INSERT INTO d SELECT * FROM s FROM ANCHOR (0:6, 2:7) WHERE partition = 0 AND offset <= 9 OR partition = 2 AND offset <= 8 EXECUTE"},
		{"INSERT INTO d SELECT * FROM s FROM ANCHOR (0:4, 1:0, 2:7) WHERE value = 'v' EXECUTE",
			"INSERT INTO d SELECT * FROM s FROM ANCHOR (0:6, 1:0, 2:7) WHERE value = 'v' AND (partition = 0 AND offset <= 29 OR partition = 1 AND offset <= 29 OR partition = 2 AND offset <= 29) EXECUTE"},
	} {
		st, err := lang.Parse(c.stmt)
		require.NoError(t, err)
		p := &insertPlan{in: st.(*lang.Insert)}
		got, none, err := p.resumeOf(rd, map[int32]int64{0: 5}, 3)
		require.NoError(t, err)
		require.Empty(t, none)
		require.Equal(t, c.want, got)
	}
}
