package exec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A NULL partition column is named NULL, as the SELECT wrote it, not Go's
// "<nil>".
func TestInsertNullPartitionIsNamedNULL(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 2)
	f.spread(t, "dst", 2)
	f.produce(t, "src", 2, 1)
	_, _, err := run(t, f.sess, parse(t, `INSERT INTO dst SELECT key, value, NULL AS partition FROM src`))
	require.Error(t, err)
	require.Contains(t, err.Error(), "goes to partition NULL,")
	require.NotContains(t, err.Error(), "<nil>")
}
