package exec

import (
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/lang"
)

// quietStdin starts an import from a pipe the test writes to, and returns
// the pipe's writing end and the import's outcome.
func quietStdin(t *testing.T, f *fake, age time.Duration) (*io.PipeWriter, <-chan error) {
	old := streamTxnAge
	streamTxnAge = age
	t.Cleanup(func() { streamTxnAge = old })
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	f.sess.Stdin = pr
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Execute(ctxT(t), &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "lines"}})
		done <- err
	}()
	return pw, done
}

// sendLines writes lines from-to in one write: one read of the import
// takes them all, so none is left blocked in the pipe if it ends.
func sendLines(t *testing.T, pw *io.PipeWriter, from, to int) {
	var b []byte
	for i := from; i <= to; i++ {
		b = fmt.Appendf(b, "line-%d\n", i)
	}
	_, err := pw.Write(b)
	require.NoError(t, err)
}

// A pipe that sends a few records and goes quiet (tail -f app.log | kql
// -e "PRODUCE ... FROM STDIN") gets them committed on time alone, while it
// stays open: a read_committed reader sees them without waiting for
// 10,000 more records or the end of the input, and the coordinator never
// aborts the transaction at its timeout.
func TestImportFromAQuietStdinCommitsOnTime(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	pw, done := quietStdin(t, f, 20*time.Millisecond)

	sendLines(t, pw, 1, 5)
	require.Len(t, committedEventually(t, f.sess, "dst", 5), 5, "the first 5 lines committed while the pipe is open and quiet")
	sendLines(t, pw, 6, 8)
	require.Len(t, committedEventually(t, f.sess, "dst", 8), 8, "the next 3 too")
	select {
	case err := <-done:
		t.Fatalf("the import ended (%v) before its input did", err)
	default:
	}
	require.NoError(t, pw.Close())
	require.NoError(t, <-done)
	got := committedRows(t, f.sess, "dst")
	require.Len(t, got, 8, "every line exactly once")
}

// A commit the timer makes that the coordinator refuses ends the import
// at once, though its input is still open, and the report says what was
// committed before it.
func TestImportFromAQuietStdinFailedTimedCommit(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	// Every commit once lines 1-5 are visible is refused: however the
	// timer split them into transactions, the next one holds line 6 on.
	var refuse atomic.Bool
	f.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if !req.(*kmsg.EndTxnRequest).Commit || !refuse.Load() {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.TransactionAbortable.Code
		return resp, nil, true
	})
	pw, done := quietStdin(t, f, 20*time.Millisecond)
	sendLines(t, pw, 1, 5)
	require.Len(t, committedEventually(t, f.sess, "dst", 5), 5)
	refuse.Store(true)
	sendLines(t, pw, 6, 8)
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the import did not end after its timed commit failed")
	}
	require.Error(t, err)
	require.Regexp(t, `input lines 1-5 were committed \(\d+ transactions?\); resume with the lines after 5$`, err.Error())
	require.ErrorContains(t, err, "nothing of it is visible to read_committed readers")
	require.NotContains(t, err.Error(), "cancelled")
	require.Len(t, committedRows(t, f.sess, "dst"), 5)
}
