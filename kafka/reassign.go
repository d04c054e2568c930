package kafka

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Replica moves and leader elections. All three requests are the
// controller's business; on KRaft any broker accepts them and forwards
// them to the active controller (KIP-590), so they go to any broker, as
// Kafka's own kafka-reassign-partitions.sh and kafka-leader-election.sh
// send them.

// adminTimeoutMillis is the TimeoutMillis of the controller requests: how
// long the broker waits for the controller before answering REQUEST_TIMED_OUT.
const adminTimeoutMillis = 30000

// Reassignment is one partition's replica move in progress.
type Reassignment struct {
	TP       TopicPartition
	Replicas []int32 // the full set while moving: the old and the new replicas
	Adding   []int32 // replicas being added
	Removing []int32 // replicas to be removed once the new ones are in sync
}

// ListReassignments lists the replica moves in progress: of parts, or of
// every partition when parts is nil.
func (c *Cluster) ListReassignments(ctx context.Context, parts []TopicPartition) ([]Reassignment, error) {
	const api = "ListPartitionReassignments"
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = adminTimeoutMillis
	items := []string{"every partition"}
	if parts != nil {
		items = tpStrings(parts)
		req.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{}
		for _, tp := range byTopic(parts) {
			rt := kmsg.NewListPartitionReassignmentsRequestTopic()
			rt.Topic, rt.Partitions = tp.topic, tp.partitions
			req.Topics = append(req.Topics, rt)
		}
	}
	raw, by, err := c.AnyBroker(ctx, api, items, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.ListPartitionReassignmentsResponse)
	if resp.ErrorCode != 0 {
		return nil, &AdminError{API: api, Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(resp.ErrorCode), Message: deref(resp.ErrorMessage)}
	}
	var out []Reassignment
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, Reassignment{TP: TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Replicas: p.Replicas, Adding: p.AddingReplicas, Removing: p.RemovingReplicas})
		}
	}
	slices.SortFunc(out, func(a, b Reassignment) int { return compareTP(a.TP, b.TP) })
	return out, nil
}

// AlterReassignments starts moving each partition to its new replicas
// (the first is the preferred leader), or cancels the move in progress
// when a partition's replicas are nil. Per-partition refusals come back
// in failed (NO_REASSIGNMENT_IN_PROGRESS for a cancel with nothing to
// cancel, INVALID_REPLICA_ASSIGNMENT, ...).
func (c *Cluster) AlterReassignments(ctx context.Context, moves map[TopicPartition][]int32) (map[TopicPartition]*PartitionError, error) {
	const api = "AlterPartitionReassignments"
	parts := make([]TopicPartition, 0, len(moves))
	for tp := range moves {
		parts = append(parts, tp)
	}
	slices.SortFunc(parts, compareTP)
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.TimeoutMillis = adminTimeoutMillis
	items := make([]string, len(parts))
	for i, tp := range parts {
		items[i] = tp.String() + " cancel"
		if r := moves[tp]; r != nil {
			items[i] = fmt.Sprintf("%s to %v", tp, r)
		}
	}
	for _, tp := range byTopic(parts) {
		rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
		rt.Topic = tp.topic
		for _, p := range tp.partitions {
			rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			rp.Partition = p
			rp.Replicas = moves[TopicPartition{Topic: tp.topic, Partition: p}] // nil: cancel
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	raw, by, err := c.AnyBroker(ctx, api, items, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.AlterPartitionAssignmentsResponse)
	if resp.ErrorCode != 0 {
		return nil, &AdminError{API: api, Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(resp.ErrorCode), Message: deref(resp.ErrorMessage)}
	}
	failed := map[TopicPartition]*PartitionError{}
	answered := map[TopicPartition]bool{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			tp := TopicPartition{Topic: t.Topic, Partition: p.Partition}
			answered[tp] = true
			if p.ErrorCode != 0 {
				failed[tp] = &PartitionError{API: api, Topic: t.Topic, Partition: p.Partition, Broker: by, Addr: c.addr(by),
					Err: withMessage(kerr.ErrorForCode(p.ErrorCode), p.ErrorMessage)}
			}
		}
	}
	for _, tp := range parts {
		if !answered[tp] {
			failed[tp] = &PartitionError{API: api, Topic: tp.Topic, Partition: tp.Partition, Broker: by, Addr: c.addr(by), Err: ErrNotMentioned}
		}
	}
	return failed, nil
}

// ElectionType is the kind of leader election ElectLeaders asks for.
type ElectionType int8

const (
	ElectPreferred ElectionType = 0 // move leadership to the first replica, if it is in sync
	ElectUnclean   ElectionType = 1 // give a leaderless partition a leader outside the ISR (may lose records)
)

// ElectLeaders asks the controller to elect leaders for parts (nil: every
// partition). Each partition answered is in the result with its error
// (nil: elected; ELECTION_NOT_NEEDED: the right replica already leads, an
// answer rather than a failure, so the caller decides how to show it).
func (c *Cluster) ElectLeaders(ctx context.Context, how ElectionType, parts []TopicPartition) (map[TopicPartition]error, error) {
	const api = "ElectLeaders"
	req := kmsg.NewPtrElectLeadersRequest()
	req.ElectionType = int8(how)
	req.TimeoutMillis = adminTimeoutMillis
	items := []string{"every partition"}
	if parts != nil {
		items = tpStrings(parts)
		req.Topics = []kmsg.ElectLeadersRequestTopic{}
		for _, tp := range byTopic(parts) {
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic, rt.Partitions = tp.topic, tp.partitions
			req.Topics = append(req.Topics, rt)
		}
	}
	raw, by, err := c.AnyBroker(ctx, api, items, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.ElectLeadersResponse)
	if resp.ErrorCode != 0 {
		return nil, &AdminError{API: api, Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(resp.ErrorCode)}
	}
	out := map[TopicPartition]error{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out[TopicPartition{Topic: t.Topic, Partition: p.Partition}] = withMessage(kerr.ErrorForCode(p.ErrorCode), p.ErrorMessage)
		}
	}
	for _, tp := range parts {
		if _, ok := out[tp]; !ok {
			out[tp] = ErrNotMentioned
		}
	}
	return out, nil
}

// withMessage adds the broker's explanation to a per-item error code.
func withMessage(err error, msg *string) error {
	if err == nil || msg == nil || *msg == "" {
		return err
	}
	return fmt.Errorf("%w: %s", err, *msg)
}
