package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

var describeTopicCols = []result.Column{
	keyCol("partition", result.Int), col("leader", result.Int), col("replicas", result.Ints),
	col("in_sync_replicas", result.Ints), col("earliest_offset", result.Int), col("latest_offset", result.Int),
	col("messages", result.Int), col("lso", result.Int), col("lso_lag", result.Int),
}

func partitionsOf(t *kafka.Topic) []kafka.TopicPartition {
	parts := make([]kafka.TopicPartition, len(t.Partitions))
	for i, p := range t.Partitions {
		parts[i] = kafka.TopicPartition{Topic: t.Name, Partition: p.ID}
	}
	return parts
}

func asErrors(pes []*kafka.PartitionError) []error {
	out := make([]error, len(pes))
	for i, pe := range pes {
		out[i] = pe
	}
	return out
}

func partitionErrors(m map[kafka.TopicPartition]*kafka.PartitionError) []error {
	var out []error
	for _, e := range kafka.SortedPartitionErrors(m) {
		out = append(out, e)
	}
	return out
}

// describeTopic reads offsets from each partition's leader, one ListOffsets
// per leader broker per bound. A partition whose leader did not answer keeps
// its row with NULL offsets and makes the result partial: it is never shown
// as an empty 0/0 partition.
func (s *Session) describeTopic(ctx context.Context, st *lang.DescribeTopic) (result.Result, error) {
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	t := m.Topics[st.Topic]
	parts := partitionsOf(t)
	// The last stable offset (where a read_committed consumer stops; it
	// trails the high watermark while a transaction is open, and stays
	// behind for good while one hangs) is read concurrently with the
	// earliest offsets, so before the high watermark: records written
	// between the two answers then make lso_lag larger for a moment, never
	// negative (the LSO is at most the high watermark), at no extra round trip.
	first := s.cl.OffsetsAt(ctx, m, parts, kafka.OffsetsOptions{}, kafka.OffsetQuery{At: kafka.Earliest}, kafka.OffsetQuery{At: kafka.Latest, ReadCommitted: true})
	if err := kafka.FirstErr(first...); err != nil {
		return nil, err
	}
	hw := s.cl.OffsetsAt(ctx, m, parts, kafka.OffsetsOptions{}, kafka.OffsetQuery{At: kafka.Latest})[0]
	if hw.Err != nil {
		return nil, hw.Err
	}
	earliest, stable, latest := first[0].Got, first[1].Got, hw.Got
	rows := make([]result.Row, 0, len(parts))
	for _, p := range t.Partitions {
		tp := kafka.TopicPartition{Topic: t.Name, Partition: p.ID}
		var leader, lo, hi, n, lso, lsoLag any
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
			// The high watermark is read after the earliest, but a leader
			// that moved in between can answer one below it: the rule of
			// every span (kafka.SpanOf), an empty log, never a negative count.
			sp := kafka.SpanOf(e, l)
			lo, hi, n = sp.Start, sp.End, sp.End-sp.Start
		}
		if sa, ok := stable[tp]; ok {
			lso = sa.Offset
			if lok {
				lsoLag = l.Offset - sa.Offset
			}
		}
		rows = append(rows, result.Row{int64(p.ID), leader, slices.Clone(p.Replicas), slices.Clone(p.ISR), lo, hi, n, lso, lsoLag})
	}
	res := result.NewSlice(describeTopicCols, rows)
	missing := append(append(partitionErrors(first[0].Failed), partitionErrors(hw.Failed)...), partitionErrors(first[1].Failed)...)
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: fmt.Sprintf("DESCRIBE TOPIC %q (offsets of some partitions)", st.Topic), Missing: missing}
	}
	return res, nil
}

var describeGroupCols = []result.Column{
	keyCol("topic", result.String), keyCol("partition", result.Int), col("committed_offset", result.Int),
	col("end_offset", result.Int), col("lag", result.Int), col("member_id", result.String),
	col("client_id", result.String), col("host", result.String), col("lag_ms", result.Int),
}

type groupMember struct{ memberID, clientID, host string }

// describeGroup asks the group's coordinator first (DescribeGroups), so a
// group that does not exist is an error rather than an empty grid that looks
// like a real group with nothing committed; then its committed offsets
// (OffsetFetch, also the coordinator), then end offsets from the leaders.
func (s *Session) describeGroup(ctx context.Context, st *lang.DescribeGroup) (result.Result, error) {
	group := st.Group
	desc, dfail, err := s.cl.DescribeGroups(ctx, []string{group})
	if err != nil {
		return nil, err
	}
	// All topics: OffsetFetch v10+ and ConsumerGroupDescribe name topics
	// by id, and the end offsets below reuse this read instead of asking again.
	m, err := s.cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	notFound := func() error { return s.notAConsumerGroup(ctx, group) }
	owners := make(map[kafka.TopicPartition]groupMember)
	committedUnknown := make(map[kafka.TopicPartition]bool)
	if ge := dfail[group]; ge != nil {
		if !kafka.IsGroupNotFound(ge.Err) {
			return nil, ge
		}
		// Kafka answers GROUP_ID_NOT_FOUND to the classic DescribeGroups
		// for a group of the new consumer protocol (KIP-848): ask
		// ConsumerGroupDescribe before saying the group does not exist.
		found, err := s.describeConsumerGroup(ctx, group, m, owners)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, notFound()
		}
	} else {
		g := desc[group]
		if g.State == "Dead" {
			return nil, notFound()
		}
		addOwners(owners, m, g)
	}

	committed, cfail, err := s.committedOffsets(ctx, group, m)
	if err != nil {
		return nil, err
	}
	// A partition whose commit could not be read gets its row, with NULL
	// committed_offset, and makes the result partial.
	for _, pe := range cfail {
		committedUnknown[kafka.TopicPartition{Topic: pe.Topic, Partition: pe.Partition}] = true
	}
	// Every partition of a topic the group committed to gets a row, so a
	// partition it never committed shows NULL lag instead of vanishing.
	all := make(map[kafka.TopicPartition]bool)
	for tp := range committed {
		all[tp] = true
		if t, ok := m.Topics[tp.Topic]; ok {
			for _, p := range partitionsOf(t) {
				all[p] = true
			}
		}
	}
	for tp := range owners {
		all[tp] = true
	}
	for tp := range committedUnknown {
		all[tp] = true
	}
	parts := make([]kafka.TopicPartition, 0, len(all))
	var named []kafka.TopicPartition // the partitions whose end can be asked
	for tp := range all {
		parts = append(parts, tp)
		// A failed commit of a topic OffsetFetch named by id only, which
		// no metadata knows (deleted since), has no name to ask its end
		// by: its row is the OffsetFetch error's, not also a leader wait.
		if tp.Topic != "" {
			named = append(named, tp)
		}
	}
	slices.SortFunc(parts, func(a, b kafka.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	slices.SortFunc(named, compareTP)
	var ends map[kafka.TopicPartition]kafka.OffsetAnswer
	var efail map[kafka.TopicPartition]*kafka.PartitionError
	if len(named) > 0 {
		latest := s.cl.OffsetsOf(ctx, m, named, kafka.OffsetQuery{At: kafka.Latest})
		if latest.Err != nil {
			return nil, fmt.Errorf("end offsets for group %q: %w", group, latest.Err)
		}
		ends, efail = latest.Got, latest.Failed
	}
	// Lag in time: one Fetch per leader broker for the lagging partitions.
	lt, err := s.readLagTimes(ctx, m, map[string]map[kafka.TopicPartition]int64{group: committed}, ends)
	if err != nil {
		return nil, fmt.Errorf("lag in time for group %q: %w", group, err)
	}
	rows := make([]result.Row, 0, len(parts))
	for _, tp := range parts {
		var co, end, lag, mid, cid, host, lagMs any
		if off, ok := committed[tp]; ok {
			co = off
		}
		if e, ok := ends[tp]; ok {
			end = e.Offset
		}
		if co != nil && end != nil {
			lag = max(end.(int64)-co.(int64), 0)
		}
		if o, ok := owners[tp]; ok {
			mid, cid, host = o.memberID, o.clientID, o.host
		}
		if ms, ok := lt.ms[groupCommit{group, tp}]; ok {
			lagMs = ms
		}
		rows = append(rows, result.Row{tp.Topic, int64(tp.Partition), co, end, lag, mid, cid, host, lagMs})
	}
	res := result.NewSlice(describeGroupCols, rows)
	res.Notes = lt.goneNotes("lag_ms", false)
	if len(cfail) > 0 {
		res.Failure = &result.PartialError{What: fmt.Sprintf("DESCRIBE GROUP %q (committed offsets, end offsets or lag in time of some partitions)", group), Missing: append(append(asErrors(cfail), partitionErrors(efail)...), lt.missing...)}
	} else if missing := append(partitionErrors(efail), lt.missing...); len(missing) > 0 {
		res.Failure = &result.PartialError{What: fmt.Sprintf("DESCRIBE GROUP %q (end offsets or lag in time of some partitions)", group), Missing: missing}
	}
	return res, nil
}

// committedOffsets fetches every offset the group committed, from its
// coordinator. Partitions with no commit (offset -1) are left out, so their
// lag stays NULL rather than becoming a number; partitions the coordinator
// answered with an error are in failed, their commit unknown.
func (s *Session) committedOffsets(ctx context.Context, group string, m *kafka.Metadata) (map[kafka.TopicPartition]int64, []*kafka.PartitionError, error) {
	return committedFrom(s.cl.FetchOffsets, group, m, ctx)
}

// stableCommittedOffsets is committedOffsets as a statement that changes
// the group reads them: the coordinator's newest state (require_stable),
// never a stale view of a coordinator that has just taken over.
func (s *Session) stableCommittedOffsets(ctx context.Context, group string, m *kafka.Metadata) (map[kafka.TopicPartition]int64, []*kafka.PartitionError, error) {
	return committedFrom(s.cl.FetchStableOffsets, group, m, ctx)
}

type fetchOffsetsFunc func(context.Context, []string) (map[string]kafka.GroupOffsets, map[string]*kafka.GroupError, error)

func committedFrom(fetch fetchOffsetsFunc, group string, m *kafka.Metadata, ctx context.Context) (map[kafka.TopicPartition]int64, []*kafka.PartitionError, error) {
	got, failed, err := fetch(ctx, []string{group})
	if err != nil {
		return nil, nil, err
	}
	if ge := failed[group]; ge != nil {
		return nil, nil, ge
	}
	out := map[kafka.TopicPartition]int64{}
	for _, c := range got[group].Offsets {
		out[kafka.TopicPartition{Topic: m.TopicName(c.Topic, c.TopicID), Partition: c.Partition}] = c.Offset
	}
	return out, got[group].Failed, nil
}

// committedOrFail is committedOffsets for a statement that changes the
// group: a partition whose commit is unknown fails it, rather than being
// taken for one never committed.
func (s *Session) committedOrFail(ctx context.Context, group string, m *kafka.Metadata) (map[kafka.TopicPartition]int64, error) {
	committed, failed, err := s.stableCommittedOffsets(ctx, group, m)
	if err != nil {
		return nil, err
	}
	if len(failed) > 0 {
		return nil, fmt.Errorf("the committed offsets of group %q: %w", group, failed[0])
	}
	return committed, nil
}

// addOwners records, for each partition assigned to a member of g, the
// member that owns it.
func addOwners(owners map[kafka.TopicPartition]groupMember, m *kafka.Metadata, g kafka.DescribedGroup) {
	for _, mem := range g.Members {
		for _, t := range mem.Assignment {
			name := m.TopicName(t.Topic, t.TopicID)
			for _, p := range t.Partitions {
				owners[kafka.TopicPartition{Topic: name, Partition: p}] = groupMember{mem.MemberID, mem.ClientID, mem.Host}
			}
		}
	}
}

// describeConsumerGroup asks ConsumerGroupDescribe (KIP-848) for a group of
// the new consumer protocol and fills owners from its members' assignments.
// found is false when the group does not exist there either (or the
// cluster does not know the API).
func (s *Session) describeConsumerGroup(ctx context.Context, group string, m *kafka.Metadata, owners map[kafka.TopicPartition]groupMember) (bool, error) {
	got, failed, err := s.cl.ConsumerGroupDescribe(ctx, []string{group})
	if err != nil {
		return false, err
	}
	if ge := failed[group]; ge != nil {
		if kafka.IsGroupNotFound(ge.Err) || kafka.IsUnsupportedVersion(ge.Err) {
			return false, nil
		}
		if kafka.IsBrokerTooOld(ge.Err) {
			return false, nil // the broker does not know ConsumerGroupDescribe
		}
		return false, ge
	}
	g := got[group]
	if g.State == "Dead" {
		return false, nil
	}
	addOwners(owners, m, g)
	return true, nil
}
