package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// An INSERT INTO t whose records keep their source partition (KEEP
// PARTITION, or a plain partition column, which says the same) or compute
// one must not send a record to a partition t lacks, and must find out
// before anything is written: a write that fails half-way has committed
// what came before, and its resume fails again on the same record.
//
//   - Keeping the source partition, the partitions the SELECT reads (after
//     PARTITION, FROM ANCHOR and WHERE's pushdown: the scan's own plan) are
//     what counts. When t has all of them, nothing is checked.
//   - When the read takes one t lacks and every record of it is copied (no
//     WHERE, no LIMIT), the statement is refused before anything is read.
//   - When WHERE or LIMIT may leave that partition's records out, or the
//     partition is computed, each record is checked: the check pass that
//     INSERT INTO TOPIC runs (insert's dry run), after which EXECUTE writes
//     exactly the records checked.
//
// Aggregates and ORDER BY write their rows only after the whole read, and
// the checked read (checkedRead: no LIMIT, source offsets) cannot stand
// for them: they are refused up front when they keep a partition t lacks,
// and a computed partition is checked row by row as they are written.

// insertPartitionCheck says whether an INSERT INTO dst must check each
// record's partition before writing; an error refuses the statement.
func (s *Session) insertPartitionCheck(ctx context.Context, in *lang.Insert, dst *kafka.Topic) (checkEach bool, err error) {
	sel := in.Select
	plain, computed := partitionColumn(sel)
	rowsAfterRead := sel.HasAggregates() || sel.OrderBy != nil
	if computed {
		return !rowsAfterRead, nil
	}
	if !in.KeepPartition && !plain {
		return false, nil // the key's partition, or round robin: one dst has
	}
	read, err := s.insertReadPartitions(ctx, sel)
	if err != nil {
		return false, err
	}
	var lacking, fit []kafka.TopicPartition
	for _, tp := range read {
		if hasPartition(dst, tp.Partition) {
			fit = append(fit, tp)
		} else {
			lacking = append(lacking, tp)
		}
	}
	if len(lacking) == 0 {
		return false, nil
	}
	if (sel.Where != nil || sel.Limit != nil) && !rowsAfterRead {
		return true, nil
	}
	what, without := "KEEP PARTITION", "without KEEP PARTITION"
	if plain {
		what, without = "the partition column", "without the partition column"
	}
	var fix []string
	if len(fit) > 0 {
		ids := make([]string, len(fit))
		for i, tp := range fit {
			ids[i] = fmt.Sprint(tp.Partition)
		}
		list := strings.Join(ids, ", ")
		fix = append(fix, fmt.Sprintf("read only %s %s with PARTITION (%s) or WHERE partition IN (%s)", plural(len(fit), "partition", "partitions"), partitionList(fit), list, list))
	}
	var need int32
	for _, tp := range lacking {
		need = max(need, tp.Partition+1)
	}
	fix = append(fix, fmt.Sprintf("add partitions with ALTER TOPIC %s PARTITIONS %d", lang.QuoteName(dst.Name), need),
		"or copy by key "+without)
	return false, fmt.Errorf("%s: the SELECT reads %s %s of %s, which %s lacks (its partitions are %s); nothing was read or written (%s)",
		what, plural(len(lacking), "partition", "partitions"), partitionList(lacking), sel.Topic, dst.Name, partitionRange(dst), strings.Join(fix, ", "))
}

// partitionColumn says whether sel's list has a partition column, and
// whether it is the source's own (plain) or computed.
func partitionColumn(sel *lang.Consume) (plain, computed bool) {
	for _, it := range sel.Projection {
		if !strings.EqualFold(it.Name(), "partition") {
			continue
		}
		return isColumn(it.X, "partition"), !isColumn(it.X, "partition")
	}
	return false, false
}

// insertReadPartitions is the partitions of its topic sel reads, as the
// scan plans them.
func (s *Session) insertReadPartitions(ctx context.Context, sel *lang.Consume) ([]kafka.TopicPartition, error) {
	m, err := s.cl.Metadata(ctx, []string{sel.Topic})
	if err != nil {
		return nil, err
	}
	st := m.Topics[sel.Topic]
	if st == nil {
		return nil, fmt.Errorf("topic %q does not exist", sel.Topic)
	}
	pl, _, err := s.planRecords(ctx, sel, st)
	if err != nil {
		return nil, err
	}
	return pl.parts, nil
}

// keptPartitionHint is what to do about a record whose source partition
// dst lacks: leave such records out, or copy by key.
func keptPartitionHint(sel *lang.Consume, dst *kafka.Topic) string {
	// A topic's partitions are 0 to n-1.
	return narrowWhere(sel, fmt.Sprintf("partition < %d", len(dst.Partitions))) + ", or copy by key without KEEP PARTITION"
}

// narrowWhere is the hint that adds cond to sel's WHERE.
func narrowWhere(sel *lang.Consume, cond string) string {
	if sel.Where == nil {
		return "narrow the SELECT with WHERE " + cond
	}
	return "narrow the SELECT's WHERE with AND " + cond
}
