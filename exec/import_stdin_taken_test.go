package exec

import (
	"testing"

	"github.com/stretchr/testify/require"

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
