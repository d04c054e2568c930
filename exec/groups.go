package exec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// groupInfo is what SHOW GROUPS learns about one group beyond ListGroups.
type groupInfo struct {
	members   *int64
	topics    map[string]bool
	committed map[kafka.TopicPartition]int64
	failed    bool // a request about this group failed: its members or lag are unknown
}

// showGroups lists the groups (ListGroups on every broker), then, for all
// of them at once: DescribeGroups and OffsetFetch, one request per
// coordinator each, concurrently with Metadata; then, concurrently,
// ConsumerGroupDescribe (one per coordinator) for groups of the new
// consumer protocol, which the classic DescribeGroups does not know, and
// ListOffsets (one per leader broker) for the end of every committed
// partition. lag is the sum of end - committed over the partitions the
// group committed; NULL when it committed nothing. Then max_lag_ms: the
// records at the lagging committed offsets, one Fetch per leader broker
// for all groups (readLagTimes).
func (s *Session) showGroups(ctx context.Context, st *lang.ShowGroups) (result.Result, error) {
	match, err := likeMatcher(st.Like)
	if err != nil {
		return nil, err
	}
	listed, missing, err := s.listGroups(ctx)
	if err != nil {
		return nil, err
	}
	var groups []listedGroup
	var names []string
	shares := 0
	for _, g := range listed {
		if isShareGroup(g) {
			// A share group answers no consumer-group request: here it
			// would be an empty group of no members and no lag.
			if match(g.name) {
				shares++
			}
			continue
		}
		if match(g.name) {
			groups = append(groups, g)
			names = append(names, g.name)
		}
	}
	res := result.NewSlice(showGroupsCols, nil)
	if len(groups) > 0 {
		infos, more, lagNotes, err := s.groupDetails(ctx, names)
		if err != nil {
			return nil, err
		}
		missing = append(missing, more...)
		res.Notes = append(res.Notes, lagNotes...)
		for _, g := range groups {
			info := infos[g.name]
			var state, members, lag, maxLagMs any
			if g.state != "" {
				state = g.state
			}
			if info.members != nil {
				members = *info.members
			}
			if len(info.committed) > 0 && !info.failed {
				lag = info.lag
			}
			if info.maxLagMs != nil && !info.failed {
				maxLagMs = *info.maxLagMs
			}
			topics := make([]string, 0, len(info.topics))
			for t := range info.topics {
				topics = append(topics, t)
			}
			slices.Sort(topics)
			res.Rows = append(res.Rows, result.Row{g.name, state, g.protocolType, int64(g.coordinator), members, strings.Join(topics, ","), lag, maxLagMs})
		}
	}
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: "SHOW GROUPS (each broker lists only the groups it coordinates)", Missing: missing}
	}
	if shares > 0 {
		res.Notes = append(res.Notes, shareGroupsNotListed(shares))
	}
	return res, nil
}

type groupDetail struct {
	groupInfo
	lag      int64
	maxLagMs *int64 // the largest lag_ms of its committed partitions whose record could be read
}

func (s *Session) groupDetails(ctx context.Context, names []string) (map[string]*groupDetail, []error, []string, error) {
	infos := make(map[string]*groupDetail, len(names))
	for _, n := range names {
		infos[n] = &groupDetail{groupInfo: groupInfo{topics: map[string]bool{}}}
	}
	var missing []error
	var mu sync.Mutex
	fail := func(group string, err error) {
		mu.Lock()
		defer mu.Unlock()
		infos[group].failed = true
		missing = append(missing, err)
	}

	// Step 1: Metadata, DescribeGroups and OffsetFetch, concurrently.
	var (
		m                *kafka.Metadata
		merr, derr, oerr error
		desc             map[string]kafka.DescribedGroup
		dfail            map[string]*kafka.GroupError
		offsets          map[string]kafka.GroupOffsets
		ofail            map[string]*kafka.GroupError
		wg               sync.WaitGroup
	)
	wg.Go(func() { m, merr = s.cl.Metadata(ctx, nil) })
	wg.Go(func() { desc, dfail, derr = s.cl.DescribeGroups(ctx, names) })
	wg.Go(func() { offsets, ofail, oerr = s.cl.FetchOffsets(ctx, names) })
	wg.Wait()
	if err := errors.Join(merr, derr, oerr); err != nil {
		return nil, nil, nil, err
	}
	var newProtocol []string
	for _, n := range names {
		info := infos[n]
		if ge := dfail[n]; ge != nil {
			if kafka.IsGroupNotFound(ge.Err) {
				newProtocol = append(newProtocol, n) // KIP-848: ask ConsumerGroupDescribe
			} else {
				fail(n, ge)
			}
		} else if g, ok := desc[n]; ok {
			k := int64(len(g.Members))
			info.members = &k
			for _, mem := range g.Members {
				for _, t := range mem.Assignment {
					info.topics[t.Topic] = true
				}
			}
		}
		if ge := ofail[n]; ge != nil {
			fail(n, ge)
			continue
		}
		info.committed = make(map[kafka.TopicPartition]int64)
		for _, pe := range offsets[n].Failed {
			// A partition whose commit is unknown leaves the lag unknown;
			// the coordinator still named it, so its topic is the group's.
			fail(n, pe)
			if pe.Topic != "" {
				info.topics[pe.Topic] = true
			}
		}
		for _, c := range offsets[n].Offsets {
			name := m.TopicName(c.Topic, c.TopicID)
			if name == "" {
				continue // a topic deleted since the commit
			}
			info.committed[kafka.TopicPartition{Topic: name, Partition: c.Partition}] = c.Offset
			info.topics[name] = true
		}
	}

	// Step 2: ConsumerGroupDescribe for new-protocol groups and the end
	// offsets of every committed partition, concurrently.
	partSet := map[kafka.TopicPartition]bool{}
	for _, info := range infos {
		for tp := range info.committed {
			if _, ok := m.Topics[tp.Topic]; ok {
				partSet[tp] = true
			}
		}
	}
	parts := make([]kafka.TopicPartition, 0, len(partSet))
	for tp := range partSet {
		parts = append(parts, tp)
	}
	var (
		ends       map[kafka.TopicPartition]kafka.OffsetAnswer
		efail      map[kafka.TopicPartition]*kafka.PartitionError
		lerr, cerr error
	)
	if len(parts) > 0 {
		wg.Go(func() {
			latest := s.cl.OffsetsOf(ctx, m, parts, kafka.OffsetQuery{At: kafka.Latest})
			ends, efail, lerr = latest.Got, latest.Failed, latest.Err
		})
	}
	if len(newProtocol) > 0 {
		wg.Go(func() {
			var got map[string]kafka.DescribedGroup
			var cfail map[string]*kafka.GroupError
			got, cfail, cerr = s.cl.ConsumerGroupDescribe(ctx, newProtocol)
			for _, n := range newProtocol {
				if ge := cfail[n]; ge != nil {
					fail(n, ge)
					continue
				}
				g, ok := got[n]
				if !ok {
					continue
				}
				mu.Lock()
				k := int64(len(g.Members))
				infos[n].members = &k
				for _, mem := range g.Members {
					for _, t := range mem.Assignment {
						if name := m.TopicName(t.Topic, t.TopicID); name != "" { // "": a topic deleted since
							infos[n].topics[name] = true
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(lerr, cerr); err != nil {
		return nil, nil, nil, err
	}
	missing = append(missing, partitionErrors(efail)...)
	for _, info := range infos {
		for tp, off := range info.committed {
			end, ok := ends[tp]
			if !ok {
				info.failed = true // the end of this partition is unknown, so the total is too
				continue
			}
			info.lag += max(end.Offset-off, 0)
		}
	}

	// Step 3: lag in time, one Fetch per leader broker for every lagging
	// partition of every group (see readLagTimes).
	committed := make(map[string]map[kafka.TopicPartition]int64, len(infos))
	for n, info := range infos {
		if len(info.committed) > 0 && !info.failed {
			committed[n] = info.committed
		}
	}
	lt, err := s.readLagTimes(ctx, m, committed, ends)
	if err != nil {
		return nil, nil, nil, err
	}
	missing = append(missing, lt.missing...)
	unknown := map[string]bool{} // a lagging partition's record could not be read: the max is unknown
	for gc := range lt.failed {
		unknown[gc.group] = true
	}
	for gc, ms := range lt.ms {
		if unknown[gc.group] {
			continue
		}
		info := infos[gc.group]
		if info.maxLagMs == nil || ms > *info.maxLagMs {
			v := ms
			info.maxLagMs = &v
		}
	}
	// A lagging partition whose record is gone or unread is left out of
	// the max; but a max of 0 would then say "caught up" of a group that
	// is not: NULL instead.
	for gc := range lt.gone {
		if info := infos[gc.group]; info.maxLagMs != nil && *info.maxLagMs == 0 {
			info.maxLagMs = nil
		}
	}
	for gc := range lt.unread {
		if info := infos[gc.group]; info.maxLagMs != nil && *info.maxLagMs == 0 {
			info.maxLagMs = nil
		}
	}
	return infos, missing, lt.goneNotes("max_lag_ms leaves out a partition: its lag_ms", true), nil
}
