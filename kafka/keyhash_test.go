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

// The partition of a key is the Java client's: toPositive(murmur2(key)) %
// n. The hashes are Kafka's own (Utils.murmur2) for these keys, so this
// fails if kql's partitioner drifts from Java's, not only from itself.
func TestKeyPartitionerIsJavasMurmur2(t *testing.T) {
	var p KeyPartitioner
	for key, javaHash := range map[string]int32{"1": -1993445489, "12": 126087238, "123": -267702483, "1234": -1614185708, "12345": -1188365604} {
		positive := int64(uint32(javaHash) & 0x7fffffff)
		for _, n := range []int{3, 7, 1000003} {
			require.Equal(t, int32(positive%int64(n)), p.Partition("t", []byte(key), n), "key %q of %d partitions", key, n)
		}
	}
}
