package kafka

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// QuorumReplica is one member of the KRaft metadata quorum as the active
// controller sees it.
type QuorumReplica struct {
	Node         int32
	Role         string // "leader", "follower" (a voter) or "observer"
	LogEndOffset int64  // -1: unknown
	LastFetch    int64  // epoch ms of its last fetch from the leader; -1: unknown
	LastCaughtUp int64  // epoch ms it was last caught up to the leader; -1: unknown
}

// Quorum is DescribeQuorum's answer for the __cluster_metadata partition.
type Quorum struct {
	LeaderID      int32 // -1: no leader right now
	LeaderEpoch   int32
	HighWatermark int64
	Replicas      []QuorumReplica // voters by node id, then observers by node id
	// Listeners has the controller listener of each node DescribeQuorum
	// names (v2+), for a node no Metadata lists (a controller-only node).
	Listeners  map[int32]string
	AnsweredBy int32
}

// QuorumError is DescribeQuorum's refusal.
type QuorumError struct {
	Broker  int32
	Addr    string
	Err     error
	Message string
}

func (e *QuorumError) Error() string {
	msg := fmt.Sprintf("DescribeQuorum (answered by broker %d, %s): %s", e.Broker, e.Addr, describe(e.Err))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}
func (e *QuorumError) Unwrap() error { return e.Err }

// metadataTopic is KRaft's metadata log, the only partition with a quorum.
const metadataTopic = "__cluster_metadata"

// DescribeQuorum describes the KRaft metadata quorum. It goes to any
// broker: a broker forwards it to the active controller (KIP-836), which
// is the only node that knows how far each voter and observer has fetched.
func (c *Cluster) DescribeQuorum(ctx context.Context) (*Quorum, error) {
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = metadataTopic
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	raw, by, err := c.AnyBroker(ctx, "DescribeQuorum", []string{metadataTopic + "/0"}, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.DescribeQuorumResponse)
	fail := func(code int16, msg *string) error {
		return &QuorumError{Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(code), Message: deref(msg)}
	}
	if resp.ErrorCode != 0 {
		return nil, fail(resp.ErrorCode, resp.ErrorMessage)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return nil, fail(p.ErrorCode, p.ErrorMessage)
			}
			q := &Quorum{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark, AnsweredBy: by, Listeners: map[int32]string{}}
			add := func(states []kmsg.DescribeQuorumResponseTopicPartitionReplicaState, voter bool) {
				var rs []QuorumReplica
				for _, s := range states {
					role := "observer"
					if voter {
						role = "follower"
						if s.ReplicaID == p.LeaderID {
							role = "leader"
						}
					}
					r := QuorumReplica{Node: s.ReplicaID, Role: role, LogEndOffset: s.LogEndOffset, LastFetch: -1, LastCaughtUp: -1}
					if resp.Version >= 1 {
						r.LastFetch, r.LastCaughtUp = s.LastFetchTimestamp, s.LastCaughtUpTimestamp
					}
					rs = append(rs, r)
				}
				slices.SortFunc(rs, func(a, b QuorumReplica) int { return int(a.Node) - int(b.Node) })
				q.Replicas = append(q.Replicas, rs...)
			}
			add(p.CurrentVoters, true)
			add(p.Observers, false)
			for _, n := range resp.Nodes {
				if len(n.Listeners) > 0 {
					q.Listeners[n.NodeID] = fmt.Sprintf("%s:%d", n.Listeners[0].Host, n.Listeners[0].Port)
				}
			}
			return q, nil
		}
	}
	return nil, &QuorumError{Broker: by, Addr: c.addr(by), Err: ErrNotMentioned, Message: "no " + metadataTopic + " partition in the answer"}
}
