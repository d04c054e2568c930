package exec

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

var showPartitionsCols = []result.Column{
	keyCol("topic", result.String), keyCol("partition", result.Int), col("leader", result.Int),
	col("replicas", result.Ints), col("in_sync_replicas", result.Ints), col("offline", result.Bool),
	col("under_replicated", result.Bool), col("earliest_offset", result.Int), col("latest_offset", result.Int),
	col("messages", result.Int), col("internal", result.Bool),
	col("size_bytes", result.Int), col("replicas_size_bytes", result.Int),
	col("records_last_minute", result.Int), col("last_write", result.Time),
}

// showPartitions is one row per partition of the cluster (or of one
// topic), internal topics included and marked: one Metadata, then the
// earliest and latest offsets, one ListOffsets per leader broker per bound,
// both bounds concurrently, and the replicas' sizes, one DescribeLogDirs to
// each broker holding a replica (concurrently with the offsets). A
// partition whose leader did not answer (or that has none: offline) keeps
// its row with NULL offsets, and the result is partial; a replica that
// could not be sized leaves NULL sizes and a warning (see sizeReplicas).
// showPartitionsOf is the topics SHOW PARTITIONS lists and the partitions
// whose offsets and sizes it asks for: the one topic named, or those the
// LIKE pattern matches. EXPLAIN lists its requests from the same answer.
func showPartitionsOf(m *kafka.Metadata, topic *string, match func(string) bool) ([]string, []kafka.TopicPartition) {
	var names []string
	var parts []kafka.TopicPartition
	for _, name := range m.TopicNames() {
		if (topic == nil || name == *topic) && match(name) {
			names = append(names, name)
			parts = append(parts, partitionsOf(m.Topics[name])...)
		}
	}
	return names, parts
}

func (s *Session) showPartitions(ctx context.Context, st *lang.ShowPartitions) (result.Result, error) {
	match, err := likeMatcher(st.Like)
	if err != nil {
		return nil, err
	}
	var topics []string
	if st.Topic != nil {
		topics = []string{*st.Topic}
	}
	m, err := s.cl.Metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	if st.Topic != nil && m.Topics[*st.Topic] == nil {
		return nil, &kafka.UnknownTopicError{Topic: *st.Topic}
	}
	names, parts := showPartitionsOf(m, st.Topic, match)
	var (
		// Each bound on its own: a partition whose latest offset was
		// read keeps it, and its write rates, if its earliest failed.
		lo, hi     kafka.Offsets
		rerr, serr error
		sizes      replicaSizes
		rates      = &writeRates{}
		wg         sync.WaitGroup
	)
	if len(parts) > 0 {
		wg.Go(func() {
			both := s.cl.OffsetsAt(ctx, m, parts, kafka.OffsetsOptions{}, kafka.OffsetQuery{At: kafka.Earliest}, kafka.OffsetQuery{At: kafka.Latest})
			lo, hi = both[0], both[1]
		})
		wg.Go(func() { sizes, serr = s.sizeReplicas(ctx, m, parts) })
		wg.Wait()
		// The write rates after the latest offsets they count from: two
		// more ListOffsets per leader broker, concurrently.
		if hi.Err == nil {
			rates, rerr = s.readWriteRates(ctx, m, parts, hi.Got)
		}
	}
	if rerr != nil {
		return nil, rerr
	}
	if serr != nil {
		return nil, serr
	}
	if err := kafka.FirstErr(lo, hi); err != nil {
		return nil, err
	}
	earliest, latest := lo.Got, hi.Got
	rows := make([]result.Row, 0, len(parts))
	for _, name := range names {
		t := m.Topics[name]
		ps := slices.Clone(t.Partitions)
		slices.SortFunc(ps, func(a, b kafka.Partition) int { return int(a.ID) - int(b.ID) })
		for _, p := range ps {
			tp := kafka.TopicPartition{Topic: name, Partition: p.ID}
			var leader, lo, hi, n any
			if p.Leader >= 0 {
				leader = int64(p.Leader)
			}
			e, eok := earliest[tp]
			l, lok := latest[tp]
			if eok {
				lo = e.Offset
			}
			if lok {
				hi = l.Offset
			}
			if eok && lok {
				sp := kafka.SpanOf(e, l) // the log's start may have passed the latest read
				lo, hi, n = sp.Start, sp.End, sp.End-sp.Start
			}
			var size, total any
			if v, ok := sizes.leader[tp]; ok {
				size = v
			}
			if v, ok := sizes.total[tp]; ok {
				total = v
			}
			recent, last := rates.partition(tp)
			rows = append(rows, result.Row{name, int64(p.ID), leader, slices.Clone(p.Replicas), slices.Clone(p.ISR),
				p.Leader < 0, len(p.ISR) < len(p.Replicas), lo, hi, n, t.Internal, size, total, recent, last})
		}
	}
	res := result.NewSlice(showPartitionsCols, rows)
	res.Notes = append(sizes.offlineNote(), rates.notes()...)
	res.Warns = sizes.warnings()
	if missing := onePerPartition(append(append(partitionErrors(lo.Failed), partitionErrors(hi.Failed)...), rates.missing...)); len(missing) > 0 {
		what := "SHOW PARTITIONS (offsets of some partitions)"
		if st.Topic != nil {
			what = fmt.Sprintf("SHOW PARTITIONS OF %q (offsets of some partitions)", *st.Topic)
		}
		res.Failure = &result.PartialError{What: what, Missing: missing}
	}
	return res, nil
}

// onePerPartition keeps the first error of each partition: a partition
// with no leader fails every ListOffsets the statement sends, and one line
// says so.
func onePerPartition(errs []error) []error {
	seen := map[kafka.TopicPartition]bool{}
	var out []error
	for _, err := range errs {
		if pe, ok := err.(*kafka.PartitionError); ok {
			tp := kafka.TopicPartition{Topic: pe.Topic, Partition: pe.Partition}
			if seen[tp] {
				continue
			}
			seen[tp] = true
		}
		out = append(out, err)
	}
	return out
}
