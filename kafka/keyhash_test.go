package kafka

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeyPartitionerIsPartitionForKey(t *testing.T) {
	var p KeyPartitioner
	for i := range 1000 {
		key := []byte(fmt.Sprintf("k%d", i))
		for _, n := range []int{1, 3, 32} {
			require.Equal(t, PartitionForKey("t", key, n), p.Partition("t", key, n), "key %s of %d", key, n)
		}
	}
	require.Equal(t, PartitionForKey("t", []byte{}, 7), p.Partition("t", []byte{}, 7), "an empty key is a key")
}
