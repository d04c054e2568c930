package kafka

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribedGroup is one consumer group as its coordinator describes it,
// by DescribeGroups (the classic protocol) or ConsumerGroupDescribe (the
// consumer protocol of KIP-848).
type DescribedGroup struct {
	Group        string
	State        string // "Dead" for a group that does not exist (classic)
	ProtocolType string // "consumer" for consumers; "" for other users of the classic protocol (Connect, ...)
	Members      []GroupMember
}

// GroupMember is one member of a group.
type GroupMember struct {
	MemberID string
	ClientID string
	Host     string
	// Assignment is what the member was given, by topic: nil for a
	// classic group of another protocol type than consumer, or whose
	// assignment could not be decoded.
	Assignment []AssignedTopic
}

// AssignedTopic is one topic of a member's assignment. ConsumerGroupDescribe
// names a topic by id only: Topic is then "" and Metadata.TopicName finds it.
type AssignedTopic struct {
	Topic      string
	TopicID    [16]byte
	Partitions []int32
}

// DescribeGroups describes classic groups at their coordinators: one
// DescribeGroups per coordinator broker (Coordinators). A group the
// request failed for is in failed; a group of the consumer protocol
// (KIP-848) fails with GROUP_ID_NOT_FOUND (IsGroupNotFound) and is described
// by ConsumerGroupDescribe.
func (c *Cluster) DescribeGroups(ctx context.Context, groups []string) (map[string]DescribedGroup, map[string]*GroupError, error) {
	return Coordinators(ctx, c, groups, GroupRequest[DescribedGroup]{
		API: "DescribeGroups",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = groups
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[DescribedGroup] {
			var out []GroupAnswer[DescribedGroup]
			for _, g := range raw.(*kmsg.DescribeGroupsResponse).Groups {
				d := DescribedGroup{Group: g.Group, State: g.State, ProtocolType: g.ProtocolType}
				for _, mem := range g.Members {
					m := GroupMember{MemberID: mem.MemberID, ClientID: mem.ClientID, Host: mem.ClientHost}
					if g.ProtocolType == "consumer" && len(mem.MemberAssignment) > 0 {
						var a kmsg.ConsumerMemberAssignment
						if a.ReadFrom(mem.MemberAssignment) == nil {
							for _, t := range a.Topics {
								m.Assignment = append(m.Assignment, AssignedTopic{Topic: t.Topic, Partitions: t.Partitions})
							}
						}
					}
					d.Members = append(d.Members, m)
				}
				out = append(out, GroupAnswer[DescribedGroup]{Group: g.Group, Value: d, Code: g.ErrorCode})
			}
			return out
		},
	})
}

// ConsumerGroupDescribe describes groups of the consumer protocol (KIP-848)
// at their coordinators: one ConsumerGroupDescribe per coordinator broker.
// A broker before Kafka 4.0 does not know the request (IsBrokerTooOld).
func (c *Cluster) ConsumerGroupDescribe(ctx context.Context, groups []string) (map[string]DescribedGroup, map[string]*GroupError, error) {
	return Coordinators(ctx, c, groups, GroupRequest[DescribedGroup]{
		API: "ConsumerGroupDescribe",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.Groups = groups
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[DescribedGroup] {
			var out []GroupAnswer[DescribedGroup]
			for _, g := range raw.(*kmsg.ConsumerGroupDescribeResponse).Groups {
				d := DescribedGroup{Group: g.Group, State: g.State, ProtocolType: "consumer"}
				for _, mem := range g.Members {
					m := GroupMember{MemberID: mem.MemberID, ClientID: mem.ClientID, Host: mem.ClientHost}
					for _, t := range mem.Assignment.TopicPartitions {
						m.Assignment = append(m.Assignment, AssignedTopic{Topic: t.Topic, TopicID: t.TopicID, Partitions: t.Partitions})
					}
					d.Members = append(d.Members, m)
				}
				out = append(out, GroupAnswer[DescribedGroup]{Group: g.Group, Value: d, Code: g.ErrorCode})
			}
			return out
		},
	})
}

// CommittedOffset is one partition's commit. OffsetFetch v10+ names a topic
// by id only: Topic is then "" and Metadata.TopicName finds it.
type CommittedOffset struct {
	Topic     string
	TopicID   [16]byte
	Partition int32
	Offset    int64
}

// GroupOffsets is what one group committed: the partitions with a commit
// (offset -1, no commit, is left out), and those the coordinator answered
// with an error, whose commit is unknown (never "not committed").
type GroupOffsets struct {
	Offsets []CommittedOffset
	Failed  []*PartitionError // sorted by topic and partition
}

// FetchOffsets reads the committed offsets of groups at their
// coordinators: one OffsetFetch per coordinator broker carrying all its
// groups (v8+, KIP-709). A broker older than v8 answers one group per
// request, unnamed: a call for one group is answered; in a call for more,
// every group that broker coordinates fails as unmentioned (Parse does not
// see which groups a request carried), even one alone on it.
func (c *Cluster) FetchOffsets(ctx context.Context, groups []string) (map[string]GroupOffsets, map[string]*GroupError, error) {
	return c.fetchOffsets(ctx, groups, false)
}

// FetchStableOffsets is FetchOffsets with require_stable (KIP-447, v7+),
// for a statement that changes a group from what it reads. Kafka's group
// coordinator answers a plain OffsetFetch, like DescribeGroups, from its
// state as of the partition's high watermark; a broker that has just
// become coordinator (the old one stopped) may not have advanced that past
// the group's last commits yet, and for a moment answers that the group has
// no offsets at all. require_stable reads the newest state instead, once it
// is replicated, so a reset planned right after a coordinator moved sees
// the offsets the group has. A partition with a pending transactional
// commit fails with UNSTABLE_OFFSET_COMMIT rather than showing an old one.
// A group the coordinator does not know has no offsets: Kafka answers it
// with none, kfake with GROUP_ID_NOT_FOUND, and both mean the same here,
// so callers see one answer.
func (c *Cluster) FetchStableOffsets(ctx context.Context, groups []string) (map[string]GroupOffsets, map[string]*GroupError, error) {
	got, failed, err := c.fetchOffsets(ctx, groups, true)
	if err != nil {
		return nil, nil, err
	}
	for g, ge := range failed {
		if IsGroupNotFound(ge.Err) {
			delete(failed, g)
			got[g] = GroupOffsets{}
		}
	}
	return got, failed, nil
}

func (c *Cluster) fetchOffsets(ctx context.Context, groups []string, stable bool) (map[string]GroupOffsets, map[string]*GroupError, error) {
	const api = "OffsetFetch"
	answeredBy := map[string]int32{} // written under Coordinators' lock
	got, failed, err := Coordinators(ctx, c, groups, GroupRequest[[]kmsg.OffsetFetchResponseGroupTopic]{
		API: api,
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.Group = groups[0] // what a broker older than v8 reads
			req.RequireStable = stable
			for _, g := range groups {
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = g
				req.Groups = append(req.Groups, rg)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[[]kmsg.OffsetFetchResponseGroupTopic] {
			resp := raw.(*kmsg.OffsetFetchResponse)
			var out []GroupAnswer[[]kmsg.OffsetFetchResponseGroupTopic]
			if resp.Version < 8 {
				if len(groups) > 1 {
					return nil // groups is the call's, not this request's: which group answered is unknown, so none is taken as answered
				}
				var topics []kmsg.OffsetFetchResponseGroupTopic
				for _, t := range resp.Topics {
					gt := kmsg.NewOffsetFetchResponseGroupTopic()
					gt.Topic = t.Topic
					for _, p := range t.Partitions {
						gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
						gp.Partition, gp.Offset, gp.ErrorCode = p.Partition, p.Offset, p.ErrorCode
						gt.Partitions = append(gt.Partitions, gp)
					}
					topics = append(topics, gt)
				}
				// The one group a request before v8 carries.
				return append(out, GroupAnswer[[]kmsg.OffsetFetchResponseGroupTopic]{Group: groups[0], Value: topics, Code: resp.ErrorCode})
			}
			for _, g := range resp.Groups {
				out = append(out, GroupAnswer[[]kmsg.OffsetFetchResponseGroupTopic]{Group: g.Group, Value: g.Topics, Code: g.ErrorCode})
			}
			return out
		},
		Answered: func(group string, broker int32) { answeredBy[group] = broker },
	})
	if err != nil {
		return nil, nil, err
	}
	// A v10+ answer names topics by id only. The newest metadata may not
	// know a failed partition's topic (it may have asked for no topics:
	// SHOW GROUPS' ListGroups), so read the topics once rather than name
	// it "".
	name := c.topicName
	if c.unnamedFailure(got) {
		if m, err := c.Metadata(ctx, nil); err == nil {
			name = m.TopicName
		}
	}
	out := make(map[string]GroupOffsets, len(got))
	for g, topics := range got {
		var o GroupOffsets
		by := answeredBy[g]
		for _, t := range topics {
			for _, p := range t.Partitions {
				switch {
				case p.ErrorCode != 0:
					o.Failed = append(o.Failed, &PartitionError{API: api, Topic: name(t.Topic, t.TopicID), Partition: p.Partition, Broker: by, Addr: c.addr(by),
						Err: kerr.ErrorForCode(p.ErrorCode)})
				case p.Offset >= 0:
					o.Offsets = append(o.Offsets, CommittedOffset{Topic: t.Topic, TopicID: t.TopicID, Partition: p.Partition, Offset: p.Offset})
				}
			}
		}
		slices.SortFunc(o.Failed, func(a, b *PartitionError) int {
			return compareTP(TopicPartition{a.Topic, a.Partition}, TopicPartition{b.Topic, b.Partition})
		})
		out[g] = o
	}
	return out, failed, nil
}

// unnamedFailure reports a partition answered with an error whose topic,
// named by id only, the newest metadata does not know.
func (c *Cluster) unnamedFailure(got map[string][]kmsg.OffsetFetchResponseGroupTopic) bool {
	for _, topics := range got {
		for _, t := range topics {
			if c.topicName(t.Topic, t.TopicID) != "" {
				continue
			}
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return true
				}
			}
		}
	}
	return false
}

// TopicName is name, or, when an answer named the topic by id only, the
// name m gives that id ("" for a topic m does not know: deleted since).
func (m *Metadata) TopicName(name string, id [16]byte) string {
	if name != "" || id == [16]byte{} {
		return name
	}
	for n, t := range m.Topics {
		if t.ID == id {
			return n
		}
	}
	return ""
}
