package exec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// Partition selection, part of planning: PARTITION, FROM TAIL and ANCHOR
// lists, checked against the topic.

// selectPartitions applies PARTITION and the partitions a TAIL or ANCHOR
// list names; a partition the topic does not have is an error naming the
// ones it has, never silently dropped.
func selectPartitions(t *kafka.Topic, st *lang.Consume) ([]kafka.TopicPartition, error) {
	have := make(map[int32]bool, len(t.Partitions))
	for _, p := range t.Partitions {
		have[p.ID] = true
	}
	check := func(what string, ps []int32) error {
		for _, p := range ps {
			if !have[p] {
				return fmt.Errorf("topic %q has no partition %d (%s); its partitions are %s", t.Name, p, what, partitionRange(t))
			}
		}
		return nil
	}
	want := st.Partitions
	if err := check("in PARTITION", want); err != nil {
		return nil, err
	}
	if st.From != nil && (st.From.Kind == lang.FromTail || st.From.Kind == lang.FromAnchor) {
		var listed []int32
		for _, po := range st.From.Positions {
			listed = append(listed, po.Partition)
		}
		kw := "TAIL"
		if st.From.Kind == lang.FromAnchor {
			kw = "ANCHOR"
		}
		if err := check("in FROM "+kw, listed); err != nil {
			return nil, err
		}
		if want != nil {
			for _, p := range want {
				if !slices.Contains(listed, p) {
					return nil, fmt.Errorf("PARTITION %d is not in the FROM %s list, which names partitions %v: name each partition to read in the list", p, kw, listed)
				}
			}
		} else {
			want = listed
		}
	}
	var out []kafka.TopicPartition
	for _, p := range t.Partitions {
		if want == nil || slices.Contains(want, p.ID) {
			out = append(out, kafka.TopicPartition{Topic: t.Name, Partition: p.ID})
		}
	}
	return out, nil
}

func partitionRange(t *kafka.Topic) string {
	n := len(t.Partitions)
	if n == 0 {
		return "none"
	}
	if int(t.Partitions[n-1].ID) == n-1 {
		if n == 1 {
			return "0"
		}
		return "0-" + strconv.Itoa(n-1)
	}
	ids := make([]string, n)
	for i, p := range t.Partitions {
		ids[i] = strconv.Itoa(int(p.ID))
	}
	return strings.Join(ids, ", ")
}

func tailOffset(from *lang.Start, p int32) int64 {
	for _, po := range from.Positions {
		if po.Partition == p {
			return po.Offset
		}
	}
	return 0
}
