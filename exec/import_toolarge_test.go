package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A record larger than the producer can hold (32 MiB) is failed by the
// producer before it is buffered, on its promise goroutine, which neither
// Flush nor the commit waits for: as the last record of an import the
// commit went through without it, and the import reported success with the
// record lost. The writer refuses it itself: the import fails, names it,
// and writes nothing.
func TestImportOfARecordLargerThanTheProducerFailsAndWritesNothing(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	line := `{"key":"k","value":"` + strings.Repeat("a", 33<<20) + `"}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(`{"key":"small","value":"v"}`+"\n"+line), 0o600))

	_, err := importFile(t, f.sess, "dst", path, "jsonl", false)
	require.Error(t, err, "a record the producer cannot hold is not silently dropped")
	require.ErrorContains(t, err, "larger than the 32 MiB the producer holds")
	require.ErrorContains(t, err, "nothing was committed")
	require.Empty(t, committedRows(t, f.sess, "dst"), "nothing of the import is visible")
}
