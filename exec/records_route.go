package exec

import (
	"fmt"
	"slices"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// deleteRecordsRoute is what DELETE RECORDS reads and deletes, decided
// from the statement and the topic's metadata alone: the partitions,
// sorted, and the offset each is deleted before. Planning runs it and
// EXPLAIN prints its steps, so both name the same partitions.
type deleteRecordsRoute struct {
	parts []kafka.TopicPartition
	want  map[kafka.TopicPartition]int64
}

func routeDeleteRecords(st *lang.DeleteRecords, t *kafka.Topic) (*deleteRecordsRoute, error) {
	r := &deleteRecordsRoute{want: map[kafka.TopicPartition]int64{}}
	var err error
	if st.BeforeOffset != nil {
		if r.parts, err = pickPartitions(t, st.Partitions, "PARTITION"); err != nil {
			return nil, fmt.Errorf("%s: %w", deleteWhat(st), err)
		}
		for _, tp := range r.parts {
			r.want[tp] = *st.BeforeOffset
		}
	} else {
		listed := make([]int32, len(st.Before))
		for i, po := range st.Before {
			listed[i] = po.Partition
		}
		if r.parts, err = pickPartitions(t, listed, "BEFORE"); err != nil {
			return nil, fmt.Errorf("%s: %w", deleteWhat(st), err)
		}
		for _, po := range st.Before {
			r.want[kafka.TopicPartition{Topic: st.Topic, Partition: po.Partition}] = po.Offset
		}
	}
	slices.SortFunc(r.parts, compareTP)
	return r, nil
}

// steps are the requests DELETE RECORDS sends, in order: the log range of
// every partition (logRange), then, with EXECUTE, DeleteRecords at the
// leaders, for the partitions that hold records before their offset
// (toDelete; the others send nothing).
func (r *deleteRecordsRoute) steps(execute bool) []adminStep {
	steps := logRangeSteps(r.parts)
	if execute {
		steps = append(steps, adminStep{api: "DeleteRecords", route: routeLeaders, parts: r.parts,
			cond: "each only if it holds records before its offset"})
	}
	return steps
}

// toDelete is the DeleteRecords the plan's rows send: each partition
// whose new log start is past its start now.
func toDelete(plan []deleteRow) map[kafka.TopicPartition]int64 {
	send := map[kafka.TopicPartition]int64{}
	for _, r := range plan {
		if r.target > r.before {
			send[r.tp] = r.target
		}
	}
	return send
}

// logRangeSteps are the requests of logRange over parts, in its order:
// every earliest offset, then every latest, at the leaders.
func logRangeSteps(parts []kafka.TopicPartition) []adminStep {
	return []adminStep{
		{api: "ListOffsets", route: routeLeaders, parts: parts, label: "earliest offset"},
		{api: "ListOffsets", route: routeLeaders, parts: parts, label: "latest offset"},
	}
}
