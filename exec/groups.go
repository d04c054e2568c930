package exec

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
		desc             map[string]kmsg.DescribeGroupsResponseGroup
		dfail            map[string]*kafka.GroupError
		offsets          map[string][]committedOffset
		ofail            map[string]*kafka.GroupError
		wg               sync.WaitGroup
	)
	wg.Go(func() { m, merr = s.cl.Metadata(ctx, nil) })
	wg.Go(func() { desc, dfail, derr = s.describeGroups(ctx, names) })
	wg.Go(func() { offsets, ofail, oerr = s.fetchOffsets(ctx, names) })
	wg.Wait()
	if err := errors.Join(merr, derr, oerr); err != nil {
		return nil, nil, nil, err
	}
	idNames := make(map[[16]byte]string, len(m.Topics))
	for name, t := range m.Topics {
		idNames[t.ID] = name
	}
	var newProtocol []string
	for _, n := range names {
		info := infos[n]
		if ge := dfail[n]; ge != nil {
			ke := (*kerr.Error)(nil)
			if errors.As(ge.Err, &ke) && ke.Code == kerr.GroupIDNotFound.Code {
				newProtocol = append(newProtocol, n) // KIP-848: ask ConsumerGroupDescribe
			} else {
				fail(n, ge)
			}
		} else if g, ok := desc[n]; ok {
			k := int64(len(g.Members))
			info.members = &k
			for _, mem := range g.Members {
				if g.ProtocolType != "consumer" || len(mem.MemberAssignment) == 0 {
					continue
				}
				var a kmsg.ConsumerMemberAssignment
				if a.ReadFrom(mem.MemberAssignment) == nil {
					for _, t := range a.Topics {
						info.topics[t.Topic] = true
					}
				}
			}
		}
		if ge := ofail[n]; ge != nil {
			fail(n, ge)
			continue
		}
		info.committed = make(map[kafka.TopicPartition]int64)
		for _, c := range offsets[n] {
			name := c.topic
			if name == "" {
				name = idNames[c.topicID]
			}
			if name == "" {
				continue // a topic deleted since the commit
			}
			info.committed[kafka.TopicPartition{Topic: name, Partition: c.partition}] = c.offset
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
		wg.Go(func() { ends, efail, lerr = s.cl.ListOffsets(ctx, m, parts, kafka.Latest, false) })
	}
	if len(newProtocol) > 0 {
		wg.Go(func() {
			var got map[string]kmsg.ConsumerGroupDescribeResponseGroup
			var cfail map[string]*kafka.GroupError
			got, cfail, cerr = s.consumerGroupDescribe(ctx, newProtocol)
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
					for _, t := range mem.Assignment.TopicPartitions {
						name := t.Topic
						if name == "" {
							name = idNames[t.TopicID]
						}
						infos[n].topics[name] = true
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

// describeGroups asks DescribeGroups for many groups: one request per
// coordinator.
func (s *Session) describeGroups(ctx context.Context, groups []string) (map[string]kmsg.DescribeGroupsResponseGroup, map[string]*kafka.GroupError, error) {
	return kafka.Coordinators(ctx, s.cl, groups, kafka.GroupRequest[kmsg.DescribeGroupsResponseGroup]{
		API: "DescribeGroups",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = groups
			return req
		},
		Parse: func(raw kmsg.Response) []kafka.GroupAnswer[kmsg.DescribeGroupsResponseGroup] {
			var out []kafka.GroupAnswer[kmsg.DescribeGroupsResponseGroup]
			for _, g := range raw.(*kmsg.DescribeGroupsResponse).Groups {
				out = append(out, kafka.GroupAnswer[kmsg.DescribeGroupsResponseGroup]{Group: g.Group, Value: g, Code: g.ErrorCode})
			}
			return out
		},
	})
}

// consumerGroupDescribe asks ConsumerGroupDescribe (KIP-848) for many
// groups: one request per coordinator.
func (s *Session) consumerGroupDescribe(ctx context.Context, groups []string) (map[string]kmsg.ConsumerGroupDescribeResponseGroup, map[string]*kafka.GroupError, error) {
	return kafka.Coordinators(ctx, s.cl, groups, kafka.GroupRequest[kmsg.ConsumerGroupDescribeResponseGroup]{
		API: "ConsumerGroupDescribe",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.Groups = groups
			return req
		},
		Parse: func(raw kmsg.Response) []kafka.GroupAnswer[kmsg.ConsumerGroupDescribeResponseGroup] {
			var out []kafka.GroupAnswer[kmsg.ConsumerGroupDescribeResponseGroup]
			for _, g := range raw.(*kmsg.ConsumerGroupDescribeResponse).Groups {
				out = append(out, kafka.GroupAnswer[kmsg.ConsumerGroupDescribeResponseGroup]{Group: g.Group, Value: g, Code: g.ErrorCode})
			}
			return out
		},
	})
}

// committedOffset is one partition's commit as OffsetFetch names it: by
// topic name, or (v10+) by topic id only.
type committedOffset struct {
	topic     string
	topicID   [16]byte
	partition int32
	offset    int64
}

// fetchOffsets asks OffsetFetch for the committed offsets of many groups,
// one request per coordinator carrying all its groups (v8+, KIP-709).
// Partitions with no commit (offset -1) are left out.
func (s *Session) fetchOffsets(ctx context.Context, groups []string) (map[string][]committedOffset, map[string]*kafka.GroupError, error) {
	return kafka.Coordinators(ctx, s.cl, groups, kafka.GroupRequest[[]committedOffset]{
		API: "OffsetFetch",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Group = groups[0] // what a broker older than v8 reads
			for _, g := range groups {
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = g
				req.Groups = append(req.Groups, rg)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []kafka.GroupAnswer[[]committedOffset] {
			resp := raw.(*kmsg.OffsetFetchResponse)
			if resp.Version < 8 {
				return nil // one group per request before v8: the groups are reported as unanswered
			}
			var answers []kafka.GroupAnswer[[]committedOffset]
			for _, g := range resp.Groups {
				var out []committedOffset
				for _, t := range g.Topics {
					for _, p := range t.Partitions {
						if p.Offset >= 0 {
							out = append(out, committedOffset{topic: t.Topic, topicID: t.TopicID, partition: p.Partition, offset: p.Offset})
						}
					}
				}
				answers = append(answers, kafka.GroupAnswer[[]committedOffset]{Group: g.Group, Value: out, Code: g.ErrorCode})
			}
			return answers
		},
	})
}
