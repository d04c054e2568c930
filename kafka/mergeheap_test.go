package kafka

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// OrderKeys puts a tail read's keys in the order Merge hands records out:
// timestamp, then partition; a partition's keys keep their offset order
// even where its timestamps go back (a producer's clock, CreateTime).
func TestOrderKeysRowOrder(t *testing.T) {
	tp := func(p int32) TopicPartition { return TopicPartition{Topic: "t", Partition: p} }
	keys := map[TopicPartition][]RecordKey{
		tp(0): {{Timestamp: 10, Offset: 0}, {Timestamp: 30, Offset: 1}, {Timestamp: 20, Offset: 2}},
		tp(1): {{Timestamp: 10, Offset: 5}, {Timestamp: 25, Offset: 6}},
		tp(2): {},
		tp(3): {{Timestamp: 5, Offset: 9}},
	}
	var got []string
	for _, k := range OrderKeys(keys) {
		got = append(got, fmt.Sprintf("%s@%d", k.TP, k.Key.Offset))
	}
	require.Equal(t, []string{"t/3@9", "t/0@0", "t/1@5", "t/1@6", "t/0@1", "t/0@2"}, got)
	require.Empty(t, OrderKeys(nil))
}

// With ascending timestamps in every partition, the merge is the keys
// sorted by (timestamp, partition, offset), for any number of partitions.
func TestOrderKeysIsSortedMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		keys := map[TopicPartition][]RecordKey{}
		var want []KeyRef
		for p := range int32(rng.IntN(12)) {
			tp := TopicPartition{Topic: "t", Partition: p}
			ts := int64(0)
			for off := range int64(rng.IntN(40)) {
				ts += int64(rng.IntN(3)) // equal timestamps across partitions are common
				keys[tp] = append(keys[tp], RecordKey{Timestamp: ts, Offset: off})
				want = append(want, KeyRef{tp, RecordKey{ts, off}})
			}
		}
		slices.SortFunc(want, func(a, b KeyRef) int {
			return cmp.Or(cmp.Compare(a.Key.Timestamp, b.Key.Timestamp), cmp.Compare(a.TP.Partition, b.TP.Partition), cmp.Compare(a.Key.Offset, b.Key.Offset))
		})
		got := OrderKeys(keys)
		if len(want) == 0 {
			require.Empty(t, got)
			continue
		}
		require.Equal(t, want, got)
	}
}
