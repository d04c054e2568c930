package exec

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/lang"
)

// Topics() and Groups() (the completer) run while a statement streams; run
// under -race.
func TestCompletionNamesWhileAStatementRuns(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	f.produce(t, "t", 6, 200)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				f.sess.namesMu.Lock()
				f.sess.namesAt = time.Time{} // force a refresh each time
				f.sess.namesMu.Unlock()
				topics, err := f.sess.Topics(context.Background())
				if err == nil && !slices.Contains(topics, "t") {
					t.Errorf("Topics() = %v", topics)
				}
				groups, err := f.sess.Groups(context.Background())
				if err == nil && !slices.Contains(groups, "g") {
					t.Errorf("Groups() = %v", groups)
				}
			}
		}()
	}
	for _, st := range []*lang.Consume{{Topic: "t", Limit: i64(1200)}, {Topic: "t", From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(700)}} {
		rows := consumeAll(t, f.sess, st)
		require.Len(t, rows, int(*st.Limit))
	}
	mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	close(stop)
	wg.Wait()
}

// The completer's names follow the session's own CREATE and DROP at once,
// not up to 30 s later.
func TestCompletionNamesFollowCreateAndDrop(t *testing.T) {
	f := newFake(t)
	_, err := f.sess.Topics(ctxT(t))
	require.NoError(t, err)
	mustRun(t, f.sess, &lang.CreateTopic{Topic: "fresh", Partitions: i32(1)})
	names, err := f.sess.Topics(ctxT(t))
	require.NoError(t, err)
	require.Contains(t, names, "fresh")
	mustRun(t, f.sess, &lang.DropTopic{Topic: "fresh"})
	names, err = f.sess.Topics(ctxT(t))
	require.NoError(t, err)
	require.NotContains(t, names, "fresh")
}
