//go:build unix

package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// PauseBroker sends SIGSTOP to broker id: a hung broker. Its sockets stay
// open and accept connections, but nothing is answered, which is what a
// broker in a long GC pause or on a frozen host looks like. ResumeBroker
// undoes it; Close kills a paused broker like any other.
func (r *Real) PauseBroker(id int32) error { return r.signal(id, syscall.SIGSTOP) }

// ResumeBroker sends SIGCONT to a paused broker and returns once the
// cluster is healthy again (the controller may have fenced it meanwhile),
// with leadership back on the preferred replicas.
func (r *Real) ResumeBroker(id int32) error {
	if err := r.signal(id, syscall.SIGCONT); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.waitBrokers(ctx); err != nil {
		return fmt.Errorf("resuming broker %d: %w", id, err)
	}
	if err := r.WaitHealthy(ctx); err != nil {
		return fmt.Errorf("resuming broker %d: %w", id, err)
	}
	if err := r.electPreferred(ctx); err != nil {
		return fmt.Errorf("resuming broker %d: %w", id, err)
	}
	return nil
}

func (r *Real) signal(id int32, sig syscall.Signal) error {
	n, err := r.node(id)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.runningLocked() {
		return fmt.Errorf("broker %d is not running", id)
	}
	return n.jvm.proc.Signal(sig)
}

// CreateTopicAssigned creates topic with an explicit replica assignment:
// assignment[p] lists partition p's replicas, the first being its
// preferred leader. It waits until every broker's metadata shows every
// partition led.
func (r *Real) CreateTopicAssigned(ctx context.Context, topic string, assignment [][]int32) error {
	cl, err := r.adminClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, replicas := range assignment {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = int32(p), replicas
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("creating %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return fmt.Errorf("creating %s: %w", topic, err)
		}
	}
	return r.awaitTopic(ctx, topic, len(assignment), func(p, leader int32) bool { return leader == assignment[p][0] })
}

// AwaitTopic waits until every running broker's metadata lists topic with
// its n partitions, each led. A controller accepts CreateTopics before the
// brokers learn of the topic, so a test that creates a topic with another
// client and then asks kql about it waits here first.
func (r *Real) AwaitTopic(ctx context.Context, topic string, n int) error {
	return r.awaitTopic(ctx, topic, n, func(_, leader int32) bool { return leader >= 0 })
}

func (r *Real) awaitTopic(ctx context.Context, topic string, n int, led func(partition, leader int32) bool) error {
	return r.poll(ctx, "waiting for "+topic+" to be led everywhere", func() string {
		leads := map[*node][]int32{} // each leader's partitions, as the leader itself sees them
		for _, v := range r.views(ctx, true) {
			if v.err != nil {
				return v.err.Error()
			}
			found := false
			for _, t := range v.resp.Topics {
				if t.Topic == nil || *t.Topic != topic {
					continue
				}
				found = len(t.Partitions) == n
				for _, p := range t.Partitions {
					if !led(p.Partition, p.Leader) {
						return fmt.Sprintf("broker %d: %s/%d led by %d", v.node.id, topic, p.Partition, p.Leader)
					}
					if p.Leader == v.node.id {
						leads[v.node] = append(leads[v.node], p.Partition)
					}
				}
			}
			if !found {
				return fmt.Sprintf("broker %d does not list %s with %d partitions yet", v.node.id, topic, n)
			}
		}
		// A broker's metadata can name it leader a moment before it acts
		// as one (NOT_LEADER_OR_FOLLOWER): ask each leader itself.
		for nd, parts := range leads {
			if problem := answersAsLeader(ctx, nd, topic, parts); problem != "" {
				return problem
			}
		}
		return ""
	})
}

// answersAsLeader asks node for the end offsets of topic's parts, pinned to
// it, and says what is wrong if it does not answer for each as leader.
func answersAsLeader(ctx context.Context, nd *node, topic string, parts []int32) string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(nd.addr()), kgo.DialTimeout(2*time.Second))
	if err != nil {
		return err.Error()
	}
	defer cl.Close()
	rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, p := range parts {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p, -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(rctx, req)
	if err != nil {
		return fmt.Sprintf("broker %d: ListOffsets: %v", nd.id, err)
	}
	for _, t := range resp.(*kmsg.ListOffsetsResponse).Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Sprintf("broker %d: %s/%d: %v", nd.id, topic, p.Partition, err)
			}
		}
	}
	return ""
}
