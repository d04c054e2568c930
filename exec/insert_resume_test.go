package exec

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// The resume statement of a failed INSERT INTO TOPIC expr ... LIMIT n
// EXECUTE ends where the failed INSERT's check ended: records that arrived
// after the check (here in partition 1, which was empty, with older
// timestamps, so they come first in the merge) are copied neither by the
// INSERT nor by its resume, and the resume finishes the checked records
// without a duplicate. The late records arrive while the test holds the
// writer's InitProducerId; the INSERT is cancelled while its second commit
// is held.
func TestInsertToTopicExprResumeEndsWhereTheCheckEnded(t *testing.T) {
	ls := newLateSource(t, 12)
	f := ls.f
	old := insertTxnRecords
	insertTxnRecords = 5
	t.Cleanup(func() { insertTxnRecords = old })

	ls.lateWhenTheWriterStarts(t)
	release := holdSecondCommit(t, f)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- drain(f.sess.Execute(ctx, parse(t, "INSERT INTO TOPIC header('to') SELECT * FROM src WHERE value = 'v' LIMIT 8 EXECUTE")))
	}()
	select {
	case <-release.held:
	case err := <-done:
		t.Fatalf("the INSERT ended (%v) before its second commit", err)
	}
	cancel()
	err := <-done
	release.now()
	require.Error(t, err)
	resume := resumeIfNotCommitted(t, err.Error())
	require.Contains(t, resume, "WHERE value = 'v' AND (partition = 0 AND offset <= 7) LIMIT 3 EXECUTE", "the resume ends at the last offset checked")
	require.Len(t, committedRows(t, f.sess, "dst"), 5, "the first transaction")

	rows, _ := mustRun(t, f.sess, parse(t, resume))
	require.Equal(t, int64(3), sumRecords(rows), "the resume writes the 3 checked records left: %v", rows)
	seen := map[string]bool{}
	for _, r := range committedEventually(t, f.sess, "dst", 8) {
		k := string(r[3].([]byte))
		require.False(t, seen[k], "%s copied twice", k)
		require.Regexp(t, `^k-0-[0-7]$`, k, "a record the check saw")
		seen[k] = true
	}
	require.Len(t, seen, 8)
}
