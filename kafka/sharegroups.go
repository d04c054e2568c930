package kafka

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Share groups (KIP-932, Kafka 4.x). Their routing is the consumer
// groups': each broker lists only the groups it coordinates (ListGroups to
// every broker, unioned), and everything about one group goes to its
// coordinator (FindCoordinator with key type group): ShareGroupDescribe and
// the three *ShareGroupOffsets requests. Latest offsets, for lag, come from
// the partitions' leaders (ListOffsets).

// ListedShareGroup is one share group as a broker lists it.
type ListedShareGroup struct {
	Group       string
	State       string
	Coordinator int32 // the broker that listed it: each lists only its own
}

// ListShareGroups unions ListGroups over every broker, asking each for
// groups of type "share" only (ListGroups v5+, KIP-848's type filter). A
// broker that cannot be asked, or answers with an error, is in missing, so
// the caller can say the list is partial.
func (c *Cluster) ListShareGroups(ctx context.Context) ([]ListedShareGroup, []error, error) {
	groups, missing, err := c.ListGroups(ctx, "share")
	if err != nil {
		return nil, nil, err
	}
	var out []ListedShareGroup
	for _, g := range groups {
		// Before v5 the filter is not sent and the type not
		// answered: such a broker (before Kafka 4.0) has no share
		// groups, and its other groups are not ones.
		if g.Type != "share" {
			continue
		}
		out = append(out, ListedShareGroup{Group: g.Group, State: g.State, Coordinator: g.Coordinator})
	}
	return out, missing, nil
}

// ShareMember is one member of a share group.
type ShareMember struct {
	MemberID    string
	ClientID    string
	ClientHost  string
	MemberEpoch int32
	Subscribed  []string         // topic names, sorted
	Assigned    []TopicPartition // sorted; a partition may be assigned to several members
}

// ShareGroup is a share group as its coordinator describes it.
type ShareGroup struct {
	Group           string
	State           string // Empty, Stable, Dead, ...
	Epoch           int32
	AssignmentEpoch int32
	Coordinator     int32
	Members         []ShareMember // sorted by member id
}

// DescribeShareGroups asks each group's coordinator (one ShareGroupDescribe
// per coordinator, carrying all its groups). A group that does not exist,
// or is not a share group, fails with GROUP_ID_NOT_FOUND.
func (c *Cluster) DescribeShareGroups(ctx context.Context, groups []string) (map[string]ShareGroup, map[string]*GroupError, error) {
	coords := map[string]int32{} // written under Coordinators' lock, read after it returns
	got, failed, err := Coordinators(ctx, c, groups, GroupRequest[ShareGroup]{
		API: "ShareGroupDescribe",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrShareGroupDescribeRequest()
			req.GroupIDs = groups
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[ShareGroup] {
			var out []GroupAnswer[ShareGroup]
			for _, g := range raw.(*kmsg.ShareGroupDescribeResponse).Groups {
				sg := ShareGroup{Group: g.GroupID, State: g.GroupState, Epoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch}
				for _, m := range g.Members {
					sm := ShareMember{MemberID: m.MemberID, ClientID: m.ClientID, ClientHost: m.ClientHost, MemberEpoch: m.MemberEpoch,
						Subscribed: slices.Sorted(slices.Values(m.SubscribedTopicNames))}
					for _, t := range m.Assignment.TopicPartitions {
						name := c.topicName(t.Topic, t.TopicID)
						for _, p := range t.Partitions {
							sm.Assigned = append(sm.Assigned, TopicPartition{Topic: name, Partition: p})
						}
					}
					slices.SortFunc(sm.Assigned, compareTP)
					sg.Members = append(sg.Members, sm)
				}
				slices.SortFunc(sg.Members, func(a, b ShareMember) int { return strings.Compare(a.MemberID, b.MemberID) })
				out = append(out, GroupAnswer[ShareGroup]{Group: g.GroupID, Value: sg, Code: g.ErrorCode, Msg: deref(g.ErrorMessage)})
			}
			return out
		},
		Answered: func(group string, broker int32) { coords[group] = broker },
	})
	if err != nil {
		return nil, nil, err
	}
	for g, sg := range got {
		sg.Coordinator = coords[g]
		got[g] = sg
	}
	return got, failed, nil
}

// ShareOffset is one partition's share-partition state: its start offset
// (every record below it is done with: acknowledged, archived or never to
// be delivered) and the broker's lag.
type ShareOffset struct {
	TP          TopicPartition
	StartOffset int64 // -1: the partition's share state is not initialized yet
	LeaderEpoch int32
	Lag         int64 // -1: the broker does not say (DescribeShareGroupOffsets v0, Kafka 4.0 and 4.1, or unknown)
	// BrokerCountsLag: the response has a lag field (v1+, Kafka 4.2+), so
	// Lag -1 means the broker cannot count it, not that it never does.
	BrokerCountsLag bool
	Err             *PartitionError // this partition's failure, with the coordinator that answered
}

// ShareGroupOffsets asks each group's coordinator for the start offsets
// and lag of every partition the group has state for (one
// DescribeShareGroupOffsets per coordinator, carrying all its groups, with
// no topics named: all of them).
func (c *Cluster) ShareGroupOffsets(ctx context.Context, groups []string) (map[string][]ShareOffset, map[string]*GroupError, error) {
	const api = "DescribeShareGroupOffsets"
	coords := map[string]int32{} // written under Coordinators' lock, read after it returns
	got, failed, err := Coordinators(ctx, c, groups, GroupRequest[[]ShareOffset]{
		API: api,
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
			for _, g := range groups {
				rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
				rg.GroupID = g
				rg.Topics = nil // every topic-partition the group has state for
				req.Groups = append(req.Groups, rg)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[[]ShareOffset] {
			resp := raw.(*kmsg.DescribeShareGroupOffsetsResponse)
			var out []GroupAnswer[[]ShareOffset]
			for _, g := range resp.Groups {
				var offs []ShareOffset
				for _, t := range g.Topics {
					name := c.topicName(t.Topic, t.TopicID)
					for _, p := range t.Partitions {
						so := ShareOffset{TP: TopicPartition{Topic: name, Partition: p.Partition}, StartOffset: p.StartOffset, LeaderEpoch: p.LeaderEpoch, Lag: p.Lag,
							BrokerCountsLag: resp.Version >= 1}
						if resp.Version < 1 {
							so.Lag = -1 // v0 has no lag
						}
						if p.ErrorCode != 0 {
							so.Err = &PartitionError{API: api, Topic: name, Partition: p.Partition, Broker: -1,
								Err: withBrokerMessage(kerr.ErrorForCode(p.ErrorCode), deref(p.ErrorMessage))}
						}
						offs = append(offs, so)
					}
				}
				slices.SortFunc(offs, func(a, b ShareOffset) int { return compareTP(a.TP, b.TP) })
				out = append(out, GroupAnswer[[]ShareOffset]{Group: g.GroupID, Value: offs, Code: g.ErrorCode, Msg: deref(g.ErrorMessage)})
			}
			return out
		},
		Answered: func(group string, broker int32) { coords[group] = broker },
	})
	if err != nil {
		return nil, nil, err
	}
	for g, offs := range got {
		for _, so := range offs {
			if so.Err != nil {
				so.Err.Broker, so.Err.Addr = coords[g], c.addr(coords[g])
			}
		}
	}
	return got, failed, nil
}

// AlterShareGroupOffsets sets the start offsets of a share group's
// partitions, at its coordinator. Kafka accepts it only for a group with
// no active members (GROUP_NOT_EMPTY otherwise). failed holds the
// partitions the coordinator refused, each naming the broker.
func (c *Cluster) AlterShareGroupOffsets(ctx context.Context, group string, offsets map[TopicPartition]int64) (map[TopicPartition]*PartitionError, error) {
	const api = "AlterShareGroupOffsets"
	parts := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		parts = append(parts, tp)
	}
	slices.SortFunc(parts, compareTP)
	type answer = map[TopicPartition]error
	var coordinator int32 = -1
	got, gfail, err := Coordinators(ctx, c, []string{group}, GroupRequest[answer]{
		API: api,
		Build: func([]string) kmsg.Request {
			req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
			req.GroupID = group
			for _, tps := range byTopic(parts) {
				rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
				rt.Topic = tps.topic
				for _, p := range tps.partitions {
					rp := kmsg.NewAlterShareGroupOffsetsRequestTopicPartition()
					rp.Partition = p
					rp.StartOffset = offsets[TopicPartition{tps.topic, p}]
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[answer] {
			resp := raw.(*kmsg.AlterShareGroupOffsetsResponse)
			errs := answer{}
			for _, t := range resp.Topics {
				name := c.topicName(t.Topic, t.TopicID)
				for _, p := range t.Partitions {
					errs[TopicPartition{name, p.Partition}] = withBrokerMessage(kerr.ErrorForCode(p.ErrorCode), deref(p.ErrorMessage))
				}
			}
			return []GroupAnswer[answer]{{Group: group, Value: errs, Code: resp.ErrorCode, Msg: deref(resp.ErrorMessage)}}
		},
		Answered: func(_ string, broker int32) { coordinator = broker },
	})
	if err != nil {
		return nil, err
	}
	if ge := gfail[group]; ge != nil {
		return nil, ge
	}
	failed := map[TopicPartition]*PartitionError{}
	for _, tp := range parts {
		perr, ok := got[group][tp]
		switch {
		case !ok:
			failed[tp] = &PartitionError{API: api, Topic: tp.Topic, Partition: tp.Partition, Broker: coordinator, Addr: c.addr(coordinator),
				Err: errors.New("the coordinator's response did not mention this partition")}
		case perr != nil:
			failed[tp] = &PartitionError{API: api, Topic: tp.Topic, Partition: tp.Partition, Broker: coordinator, Addr: c.addr(coordinator), Err: perr}
		}
	}
	if len(failed) == 0 {
		failed = nil
	}
	return failed, nil
}

// DeleteShareGroupOffsets deletes a share group's state for whole topics,
// at its coordinator (the group must have no active members). failed holds
// the topics the coordinator refused.
func (c *Cluster) DeleteShareGroupOffsets(ctx context.Context, group string, topics []string) (map[string]error, int32, error) {
	const api = "DeleteShareGroupOffsets"
	type answer = map[string]error
	var coordinator int32 = -1
	got, gfail, err := Coordinators(ctx, c, []string{group}, GroupRequest[answer]{
		API: api,
		Build: func([]string) kmsg.Request {
			req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
			req.GroupID = group
			for _, t := range topics {
				rt := kmsg.NewDeleteShareGroupOffsetsRequestTopic()
				rt.Topic = t
				req.Topics = append(req.Topics, rt)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[answer] {
			resp := raw.(*kmsg.DeleteShareGroupOffsetsResponse)
			errs := answer{}
			for _, t := range resp.Topics {
				errs[c.topicName(t.Topic, t.TopicID)] = withBrokerMessage(kerr.ErrorForCode(t.ErrorCode), deref(t.ErrorMessage))
			}
			return []GroupAnswer[answer]{{Group: group, Value: errs, Code: resp.ErrorCode, Msg: deref(resp.ErrorMessage)}}
		},
		Answered: func(_ string, broker int32) { coordinator = broker },
	})
	if err != nil {
		return nil, -1, err
	}
	if ge := gfail[group]; ge != nil {
		return nil, -1, ge
	}
	failed := map[string]error{}
	for _, t := range topics {
		terr, ok := got[group][t]
		switch {
		case !ok:
			failed[t] = errors.New("the coordinator's response did not mention this topic")
		case terr != nil:
			failed[t] = terr
		}
	}
	if len(failed) == 0 {
		failed = nil
	}
	return failed, coordinator, nil
}

// topicName is name, or, when a response carries only the topic's id, the
// name the latest metadata gives that id.
func (c *Cluster) topicName(name string, id [16]byte) string {
	if name != "" {
		return name
	}
	if m := c.Latest(); m != nil {
		for n, t := range m.Topics {
			if t.ID == id {
				return n
			}
		}
	}
	return name
}

// IsGroupNotFound reports whether err is Kafka's GROUP_ID_NOT_FOUND: no
// group of that name, or (for the describe of one group type) a group of
// another type.
func IsGroupNotFound(err error) bool { return errors.Is(err, kerr.GroupIDNotFound) }

// IsGroupNotEmpty reports whether err is Kafka's NON_EMPTY_GROUP: the
// group has active members.
func IsGroupNotEmpty(err error) bool { return errors.Is(err, kerr.NonEmptyGroup) }
