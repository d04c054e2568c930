package exec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// Share groups (KIP-932, Kafka 4.x): a share group reads topics as queues.
// Each partition has a share-partition start offset (every record below it
// is done with) instead of a committed position, and its lag is what the
// broker still has to deliver or have acknowledged. The broker says the
// lag itself since Kafka 4.2 (DescribeShareGroupOffsets v1, KIP-1226, as
// kafka-share-groups.sh prints it); for an older broker kql counts it as
// latest offset - start offset.

var showShareGroupsCols = []result.Column{
	keyCol("group", result.String), col("state", result.String), col("coordinator", result.Int),
	col("members", result.Int), col("topics", result.String), col("lag", result.Int),
}

var describeShareGroupCols = []result.Column{
	keyCol("topic", result.String), keyCol("partition", result.Int), col("start_offset", result.Int),
	col("end_offset", result.Int), col("lag", result.Int), col("members", result.Int),
	col("member_ids", result.String), col("client_ids", result.String),
}

// isShareGroup says whether a listed group is a share group. ListGroups
// v5+ gives the type, and only the type says so: a classic group may name
// any protocol type, "share" too. An answer without types (v4 and older)
// comes from a broker before Kafka 4.0, which has no share groups.
func isShareGroup(g listedGroup) bool { return g.groupType == "share" }

func shareGroupsNotListed(n int) string {
	return fmt.Sprintf("notice: %d share %s not listed here: SHOW SHARE GROUPS lists them", n, plural(n, "group is", "groups are"))
}

// notAConsumerGroup is the error for a group the consumer-group requests
// do not know: a share group is named as one, with the statement that
// reads it, else the group does not exist. It asks the coordinator
// (ShareGroupDescribe) only on this path.
func (s *Session) notAConsumerGroup(ctx context.Context, group string) error {
	if _, found, err := s.shareStatus(ctx, group); err == nil && found {
		return fmt.Errorf("%q is a share group, not a consumer group: DESCRIBE SHARE GROUP %s reads it (SHOW SHARE GROUPS lists them)", group, lang.QuoteName(group))
	}
	return fmt.Errorf("no consumer group named %q (SHOW GROUPS lists the groups)", group)
}

func noShareGroup(group string) error {
	return fmt.Errorf("no share group named %q (SHOW SHARE GROUPS lists them; a consumer group is read with DESCRIBE GROUP)", group)
}

// shareStatus asks the group's coordinator for it (ShareGroupDescribe).
// found is false when there is no share group of that name.
func (s *Session) shareStatus(ctx context.Context, group string) (kafka.ShareGroup, bool, error) {
	got, failed, err := s.cl.DescribeShareGroups(ctx, []string{group})
	if err != nil {
		return kafka.ShareGroup{}, false, err
	}
	if ge := failed[group]; ge != nil {
		if kafka.IsGroupNotFound(ge) {
			return kafka.ShareGroup{}, false, nil
		}
		return kafka.ShareGroup{}, false, ge
	}
	g := got[group]
	return g, g.State != "Dead", nil
}

// shareLag is one partition's lag: the broker's when it counts lag (nil
// where it says it cannot, as kafka-share-groups.sh prints "-"), else
// latest - start; nil when neither is known.
func shareLag(so kafka.ShareOffset, end *int64) any {
	switch {
	case so.Err != nil || so.StartOffset < 0:
		return nil
	case so.Lag >= 0:
		return so.Lag
	case so.BrokerCountsLag:
		return nil
	case end != nil:
		return max(*end-so.StartOffset, 0)
	}
	return nil
}

// showShareGroups lists the share groups (ListGroups with the type filter
// "share" on every broker), then, for all of them at once and
// concurrently: ShareGroupDescribe and DescribeShareGroupOffsets, one
// request per coordinator each; then ListOffsets (one per leader broker)
// only for partitions whose lag the broker does not give. lag is the sum
// over the group's initialized partitions; NULL when it has none.
func (s *Session) showShareGroups(ctx context.Context, st *lang.ShowShareGroups) (result.Result, error) {
	match, err := likeMatcher(st.Like)
	if err != nil {
		return nil, err
	}
	listed, missing, err := s.cl.ListShareGroups(ctx)
	if err != nil {
		return nil, err
	}
	var groups []kafka.ListedShareGroup
	var names []string
	for _, g := range listed {
		if match(g.Group) {
			groups = append(groups, g)
			names = append(names, g.Group)
		}
	}
	res := result.NewSlice(showShareGroupsCols, nil)
	if len(groups) > 0 {
		var (
			desc       map[string]kafka.ShareGroup
			dfail      map[string]*kafka.GroupError
			offs       map[string][]kafka.ShareOffset
			ofail      map[string]*kafka.GroupError
			derr, oerr error
			wg         sync.WaitGroup
		)
		wg.Go(func() { desc, dfail, derr = s.cl.DescribeShareGroups(ctx, names) })
		wg.Go(func() { offs, ofail, oerr = s.cl.ShareGroupOffsets(ctx, names) })
		wg.Wait()
		if err := errors.Join(derr, oerr); err != nil {
			return nil, err
		}
		ends, efail, err := s.shareEnds(ctx, offs, false)
		if err != nil {
			return nil, err
		}
		missing = append(missing, partitionErrors(efail)...)
		for _, g := range groups {
			var state, members, lag any = g.State, nil, nil
			coordinator := g.Coordinator
			topics := map[string]bool{}
			if ge := dfail[g.Group]; ge != nil {
				missing = append(missing, ge)
			} else if d, ok := desc[g.Group]; ok {
				state, members, coordinator = d.State, int64(len(d.Members)), d.Coordinator
				for _, m := range d.Members {
					for _, t := range m.Subscribed {
						topics[t] = true
					}
				}
			}
			if ge := ofail[g.Group]; ge != nil {
				missing = append(missing, ge)
			} else {
				var sum int64
				known, counted := true, 0
				for _, so := range offs[g.Group] {
					topics[so.TP.Topic] = true
					if so.Err != nil {
						missing = append(missing, so.Err)
						known = false
						continue
					}
					if so.StartOffset < 0 {
						continue // not initialized: nothing delivered yet, nothing to count
					}
					l := shareLag(so, endOf(ends, so.TP))
					if l == nil {
						known = false
						continue
					}
					sum += l.(int64)
					counted++
				}
				if known && counted > 0 {
					lag = sum
				}
			}
			res.Rows = append(res.Rows, result.Row{g.Group, state, int64(coordinator), members, strings.Join(slices.Sorted(maps.Keys(topics)), ","), lag})
		}
	}
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: "SHOW SHARE GROUPS (each broker lists only the groups it coordinates)", Missing: missing}
	}
	return res, nil
}

func endOf(ends map[kafka.TopicPartition]kafka.OffsetAnswer, tp kafka.TopicPartition) *int64 {
	if e, ok := ends[tp]; ok {
		return &e.Offset
	}
	return nil
}

// shareEnds reads the latest offset of the groups' partitions from their
// leaders: of every initialized one with all set (DESCRIBE SHARE GROUP
// shows it), else only of those whose lag the broker does not give.
func (s *Session) shareEnds(ctx context.Context, offs map[string][]kafka.ShareOffset, all bool) (map[kafka.TopicPartition]kafka.OffsetAnswer, map[kafka.TopicPartition]*kafka.PartitionError, error) {
	set := map[kafka.TopicPartition]bool{}
	for _, os := range offs {
		for _, so := range os {
			if so.Err == nil && so.StartOffset >= 0 && (all || !so.BrokerCountsLag) {
				set[so.TP] = true
			}
		}
	}
	if len(set) == 0 {
		return nil, nil, nil
	}
	parts := slices.SortedFunc(maps.Keys(set), compareTP)
	m, err := s.cl.Metadata(ctx, topicsOfParts(parts))
	if err != nil {
		var ut *kafka.UnknownTopicError
		if !errors.As(err, &ut) {
			return nil, nil, err
		}
		// A topic deleted since: ask for the others.
		if m, err = s.cl.Metadata(ctx, nil); err != nil {
			return nil, nil, err
		}
		parts = slices.DeleteFunc(parts, func(tp kafka.TopicPartition) bool { return m.Topics[tp.Topic] == nil })
	}
	ends := s.cl.OffsetsOf(ctx, m, parts, kafka.OffsetQuery{At: kafka.Latest})
	return ends.Got, ends.Failed, ends.Err
}

func topicsOfParts(parts []kafka.TopicPartition) []string {
	var out []string
	for _, tp := range parts {
		if !slices.Contains(out, tp.Topic) {
			out = append(out, tp.Topic)
		}
	}
	return out
}

// describeShareGroup asks the group's coordinator what the group is
// (ShareGroupDescribe) first, so a group that does not exist is an error,
// not an empty grid; then its start offsets and lag (DescribeShareGroupOffsets,
// also the coordinator), then the latest offsets from the leaders. Every
// partition with share state or assigned to a member is a row.
func (s *Session) describeShareGroup(ctx context.Context, st *lang.DescribeShareGroup) (result.Result, error) {
	g, found, err := s.shareStatus(ctx, st.Group)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, noShareGroup(st.Group)
	}
	offs, ofail, err := s.cl.ShareGroupOffsets(ctx, []string{st.Group})
	if err != nil {
		return nil, err
	}
	if ge := ofail[st.Group]; ge != nil {
		return nil, ge
	}
	byTP := map[kafka.TopicPartition]kafka.ShareOffset{}
	for _, so := range offs[st.Group] {
		byTP[so.TP] = so
	}
	type owners struct{ ids, clients []string }
	assigned := map[kafka.TopicPartition]*owners{}
	for _, m := range g.Members {
		for _, tp := range m.Assigned {
			o := assigned[tp]
			if o == nil {
				o = &owners{}
				assigned[tp] = o
			}
			o.ids = append(o.ids, m.MemberID)
			if !slices.Contains(o.clients, m.ClientID) {
				o.clients = append(o.clients, m.ClientID)
			}
		}
	}
	set := map[kafka.TopicPartition]bool{}
	for tp := range byTP {
		set[tp] = true
	}
	for tp := range assigned {
		set[tp] = true
	}
	parts := slices.SortedFunc(maps.Keys(set), compareTP)
	var ends map[kafka.TopicPartition]kafka.OffsetAnswer
	var efail map[kafka.TopicPartition]*kafka.PartitionError
	if len(parts) > 0 {
		m, err := s.cl.Metadata(ctx, nil)
		if err != nil {
			return nil, err
		}
		live := slices.DeleteFunc(slices.Clone(parts), func(tp kafka.TopicPartition) bool { return m.Topics[tp.Topic] == nil })
		if len(live) > 0 {
			latest := s.cl.OffsetsOf(ctx, m, live, kafka.OffsetQuery{At: kafka.Latest})
			if latest.Err != nil {
				return nil, fmt.Errorf("latest offsets for share group %q: %w", st.Group, latest.Err)
			}
			ends, efail = latest.Got, latest.Failed
		}
	}
	var missing []error
	rows := make([]result.Row, 0, len(parts))
	for _, tp := range parts {
		var start, end, lag, ids, clients any
		var n int64
		so, ok := byTP[tp]
		if ok && so.Err != nil {
			missing = append(missing, so.Err)
		}
		if ok && so.Err == nil && so.StartOffset >= 0 {
			start = so.StartOffset
		}
		e := endOf(ends, tp)
		if e != nil {
			end = *e
		}
		if ok {
			lag = shareLag(so, e)
		}
		if o := assigned[tp]; o != nil {
			slices.Sort(o.ids)
			slices.Sort(o.clients)
			n, ids, clients = int64(len(o.ids)), strings.Join(o.ids, ","), strings.Join(o.clients, ",")
		}
		rows = append(rows, result.Row{tp.Topic, int64(tp.Partition), start, end, lag, n, ids, clients})
	}
	res := result.NewSlice(describeShareGroupCols, rows)
	missing = append(missing, partitionErrors(efail)...)
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: fmt.Sprintf("DESCRIBE SHARE GROUP %q (some partitions)", st.Group), Missing: missing}
	}
	return res, nil
}
