package exec

import (
	"math"
	"slices"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// Paging: the statement \next runs after a page.

// NextPage returns the statement that reads the next page: for a tail
// read, the older records (FROM TAIL pinned where this page begins in each
// partition); for a forward read, the records after this page (FROM ANCHOR
// at each partition's next position). Every partition the statement
// selected stays in the list, also one that failed on this page, so it is
// read again (or its failure reported again) rather than silently dropped.
func (r *consumeResult) NextPage() (*lang.Consume, bool) {
	if r.plan.stmt.HasAggregates() || r.plan.stmt.OrderBy != nil || r.plan.stmt.LimitAll {
		return nil, false // the whole range was read
	}
	next := &lang.Consume{Topic: r.plan.stmt.Topic, Partitions: r.plan.stmt.Partitions,
		Where: r.plan.stmt.Where, Projection: r.plan.stmt.Projection}
	limit := r.plan.limit
	next.Limit = &limit
	pos := make(map[kafka.TopicPartition]int64, len(r.plan.parts))
	switch r.plan.from.Kind {
	case lang.FromNewest, lang.FromTail:
		for _, tp := range r.plan.parts {
			cut, ok := r.cuts[tp]
			if !ok { // failed: pin nothing, the end clamps it
				cut = math.MaxInt64
			}
			pos[tp] = cut
		}
		if !r.olderExist && len(r.mg.allMissing()) == 0 {
			return nil, false
		}
		next.From = &lang.Start{Kind: lang.FromTail, Positions: sortedPositions(pos)}
		return next, true
	default:
		more := len(r.mg.allMissing()) > 0
		for _, tp := range r.plan.parts {
			pos[tp] = 0 // failed: the earliest offset, clamped when run
		}
		for _, rg := range r.mg.ranges {
			// The next record not shown: the first one still buffered, or
			// the read's position, which has moved past transaction
			// markers and aborted batches.
			p, left := r.mg.nextUnread(rg.TP)
			pos[rg.TP] = p
			if left {
				more = true
			}
		}
		if !more {
			return nil, false
		}
		next.From = &lang.Start{Kind: lang.FromAnchor, Positions: sortedPositions(pos)}
		return next, true
	}
}

func sortedPositions(m map[kafka.TopicPartition]int64) []lang.PartitionOffset {
	out := make([]lang.PartitionOffset, 0, len(m))
	for tp, o := range m {
		out = append(out, lang.PartitionOffset{Partition: tp.Partition, Offset: o})
	}
	slices.SortFunc(out, func(a, b lang.PartitionOffset) int { return int(a.Partition) - int(b.Partition) })
	return out
}
