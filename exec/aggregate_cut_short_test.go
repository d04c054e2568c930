package exec

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/result"
)

// An aggregate whose read is cut short (Ctrl-C, --timeout) prints no
// row: a count(*) of the records read so far is not the count of the
// range, and a script reading stdout would take it for the answer. The
// error says why, as for ORDER BY, which prints no row either. Partition
// 1's leader holds every Fetch past its first record (on kfake's control
// hook), so the read cannot be complete when it is cancelled.
func TestAggregateCutShortPrintsNoRow(t *testing.T) {
	for _, stmt := range []string{
		"SELECT count(*) FROM t",
		"SELECT partition, count(*) FROM t GROUP BY partition",
		"SELECT offset FROM t ORDER BY offset DESC LIMIT 1", // the rule aggregates now follow
	} {
		t.Run(stmt, func(t *testing.T) {
			f := waitFake(t)
			f.sess.cl.SetLeaderWait(time.Minute) // the hold, not the bound, is what the read meets
			held := make(chan struct{}, 1)
			hangLeader(t, f, kmsg.Fetch, f.LeaderFor(waitTopic, 1), func(req kmsg.Request) bool {
				if !pastFirstFetch(1)(req) {
					return false
				}
				select {
				case held <- struct{}{}:
				default:
				}
				return true
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res, err := f.sess.Execute(ctx, parse(t, stmt))
			require.NoError(t, err)
			type answer struct {
				rows []result.Row
				err  error
			}
			done := make(chan answer, 1)
			go func() {
				defer res.Close()
				var a answer
				for {
					row, ok := res.Next()
					if !ok {
						break
					}
					a.rows = append(a.rows, row)
				}
				a.err = res.Err()
				done <- a
			}()
			select {
			case <-held:
			case <-time.After(20 * time.Second):
				t.Fatal("the read never fetched partition 1 past its first record")
			}
			cancel() // Ctrl-C while partition 1's Fetch is held
			var a answer
			select {
			case a = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the read did not end within 20 s of its cancellation")
			}
			require.Error(t, a.err, "a read cut short must say so")
			require.Empty(t, a.rows, "rows of a read cut short: %v (err %v)", a.rows, a.err)
		})
	}
}
