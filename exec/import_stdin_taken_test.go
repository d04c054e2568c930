package exec

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/lang"
)

// When kql reads its statements from standard input (the interactive
// shell, or echo "PRODUCE ... FROM STDIN;" | kql -f -), FROM STDIN says
// so for both cases, and how to run it instead; it does not claim a shell
// runs where none does.
func TestImportFromStdinThatHoldsTheStatementsNamesScriptFromStdin(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	_, _, err := run(t, f.sess, &lang.Produce{Topic: "t", From: &lang.ImportSource{Stdin: true, Format: "lines"}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "kql reads its statements from there (the interactive shell, or a script given as -f -)")
	require.Contains(t, err.Error(), "kql -f script.sql < records.jsonl")
}

// Standard input is read once: a second FROM STDIN in the same run (kql -e
// "PRODUCE INTO t FROM STDIN; PRODUCE INTO t FROM STDIN") found it at its
// end and imported nothing, with success. It is an error that says the
// first one read it, and how to import a second input.
func TestImportFromStdinASecondTimeIsAnError(t *testing.T) {
	f := newFake(t)
	f.spread(t, "kl", 1)
	f.sess.Stdin = strings.NewReader("{\"key\":\"a\"}\n")
	// A statement that fails before it reads stdin leaves it to the next.
	_, _, err := run(t, f.sess, &lang.Produce{Topic: "missing", From: &lang.ImportSource{Stdin: true, Format: "jsonl"}})
	require.ErrorContains(t, err, `no topic named "missing"`)
	st := &lang.Produce{Topic: "kl", From: &lang.ImportSource{Stdin: true, Format: "jsonl"}}
	// Nor does one whose transactional producer is refused (no WRITE on
	// transactional ids): its writer starts before stdin is read.
	var refused atomic.Bool
	f.ControlKey(int16(kmsg.InitProducerID), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		if refused.Swap(true) {
			return nil, nil, false
		}
		resp := kreq.ResponseKind().(*kmsg.InitProducerIDResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil, true
	})
	_, _, err = run(t, f.sess, st)
	require.ErrorContains(t, err, "the principal needs the WRITE ACL on transactional ids")
	mustRun(t, f.sess, st)
	_, _, err = run(t, f.sess, st)
	require.EqualError(t, err, "kql's standard input was already read by an earlier statement of this run (PRODUCE INTO kl FROM STDIN FORMAT jsonl), and it can be read only once: nothing was written; import another input with FROM FILE 'path', or in another run of kql")
	require.Len(t, committedRows(t, f.sess, "kl"), 1, "the first statement's record, once")
}
