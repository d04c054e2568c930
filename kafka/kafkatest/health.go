package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every readiness check here asks each running broker for its own Metadata,
// pinned to it, and requires all of them to agree. Asking "any broker" is not
// enough: a broker restarted after a kill answers from the metadata it
// loaded from disk before it has caught up, listing brokers that are gone and
// replicas that are not in sync, which made a restart look finished while
// the other brokers still had it fenced.

// view is one broker's answer to Metadata.
type view struct {
	node *node
	resp *kmsg.MetadataResponse
	err  error
}

// views asks every running broker for Metadata (all topics when allTopics,
// else none), concurrently, each request pinned to that broker.
func (r *Real) views(ctx context.Context, allTopics bool) []view {
	var running []*node
	for _, n := range r.nodes {
		n.mu.Lock()
		if n.runningLocked() {
			running = append(running, n)
		}
		n.mu.Unlock()
	}
	out := make([]view, len(running))
	done := make(chan struct{}, len(running))
	for i, n := range running {
		go func() {
			defer func() { done <- struct{}{} }()
			out[i] = view{node: n}
			cl, err := kgo.NewClient(kgo.SeedBrokers(n.addr()), kgo.DialTimeout(2*time.Second))
			if err != nil {
				out[i].err = err
				return
			}
			defer cl.Close()
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			req := kmsg.NewPtrMetadataRequest()
			if !allTopics {
				req.Topics = []kmsg.MetadataRequestTopic{}
			}
			resp, err := cl.SeedBrokers()[0].Request(rctx, req)
			if err != nil {
				out[i].err = err
				return
			}
			out[i].resp = resp.(*kmsg.MetadataResponse)
		}()
	}
	for range running {
		<-done
	}
	return out
}

func (r *Real) runningIDs() []int32 {
	var ids []int32
	for _, n := range r.nodes {
		n.mu.Lock()
		if n.runningLocked() {
			ids = append(ids, n.id)
		}
		n.mu.Unlock()
	}
	return ids
}

func brokerIDsOf(resp *kmsg.MetadataResponse) []int32 {
	var ids []int32
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids
}

// poll runs check every 200ms until it reports nothing wrong, a node that
// should run has died, or ctx ends; what says what the wait was for.
func (r *Real) poll(ctx context.Context, what string, check func() string) error {
	for {
		if err := r.nodeDied(); err != nil {
			return err
		}
		problem := check()
		if problem == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last seen: %s)%s", what, ctx.Err(), problem, r.allTails())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitBrokers waits until every running broker's Metadata lists exactly the
// running brokers, failing fast when a node's JVM exits.
func (r *Real) waitBrokers(ctx context.Context) error {
	return r.poll(ctx, "waiting for every broker to be listed in Metadata", func() string {
		want := r.runningIDs()
		var bad []string
		for _, v := range r.views(ctx, false) {
			switch {
			case v.err != nil:
				bad = append(bad, fmt.Sprintf("broker %d: %v", v.node.id, v.err))
			case !slices.Equal(brokerIDsOf(v.resp), want):
				bad = append(bad, fmt.Sprintf("broker %d lists brokers %v, want %v", v.node.id, brokerIDsOf(v.resp), want))
			}
		}
		return strings.Join(bad, "; ")
	})
}

// WaitHealthy waits until every broker of the cluster is running and each
// one's Metadata lists them all, with every partition of every topic led and
// fully in sync: the state to start a test from after a broker was stopped
// and started again. It fails at once if a broker's JVM died, and on ctx's
// end with what was still wrong.
func (r *Real) WaitHealthy(ctx context.Context) error {
	return r.poll(ctx, "waiting for a healthy cluster", func() string {
		if running := r.runningIDs(); len(running) != len(r.nodes) {
			return fmt.Sprintf("only brokers %v of %v are running (StartBroker the others)", running, r.ids())
		}
		var bad []string
		for _, v := range r.views(ctx, true) {
			if v.err != nil {
				bad = append(bad, fmt.Sprintf("broker %d: %v", v.node.id, v.err))
				continue
			}
			if ids := brokerIDsOf(v.resp); !slices.Equal(ids, r.ids()) {
				bad = append(bad, fmt.Sprintf("broker %d lists brokers %v", v.node.id, ids))
				continue
			}
			if p := unhealthyPartitions(v.resp); p != "" {
				bad = append(bad, fmt.Sprintf("broker %d sees %s", v.node.id, p))
			}
		}
		return strings.Join(bad, "; ")
	})
}

func unhealthyPartitions(resp *kmsg.MetadataResponse) string {
	var bad []string
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		for _, p := range t.Partitions {
			err := kerr.ErrorForCode(p.ErrorCode)
			switch {
			case err != nil && !errors.Is(err, kerr.ReplicaNotAvailable):
				bad = append(bad, fmt.Sprintf("%s/%d: %v", name, p.Partition, err))
			case p.Leader < 0:
				bad = append(bad, fmt.Sprintf("%s/%d has no leader", name, p.Partition))
			case len(p.ISR) != len(p.Replicas):
				bad = append(bad, fmt.Sprintf("%s/%d has %v of replicas %v in sync", name, p.Partition, p.ISR, p.Replicas))
			}
		}
	}
	slices.Sort(bad)
	if len(bad) > 5 {
		bad = append(bad[:5], fmt.Sprintf("and %d more", len(bad)-5))
	}
	return strings.Join(bad, ", ")
}

// electPreferred hands every partition's leadership back to its preferred
// (first) replica and waits until every broker's Metadata shows it.
func (r *Real) electPreferred(ctx context.Context) error {
	cl, err := r.adminClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	return r.poll(ctx, "restoring preferred leaders", func() string {
		moved := kadm.TopicsSet{}
		var bad []string
		for _, v := range r.views(ctx, true) {
			if v.err != nil {
				bad = append(bad, fmt.Sprintf("broker %d: %v", v.node.id, v.err))
				continue
			}
			for _, t := range v.resp.Topics {
				for _, p := range t.Partitions {
					if t.Topic != nil && len(p.Replicas) > 0 && p.Leader != p.Replicas[0] {
						moved.Add(*t.Topic, p.Partition)
					}
				}
			}
		}
		if len(moved) > 0 {
			// Per-partition answers (ELECTION_NOT_NEEDED, a replica not
			// yet in sync) are not errors here: the next look decides.
			if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, moved); err != nil {
				bad = append(bad, fmt.Sprintf("ElectLeaders: %v", err))
			}
			bad = append(bad, fmt.Sprintf("not led by their preferred replica: %v", moved.Sorted()))
		}
		return strings.Join(bad, "; ")
	})
}

// warmCoordinators creates the offsets topic now (FindCoordinator does that)
// so the first group a test uses does not wait for it, and so a started
// cluster has proven it can answer group requests.
func (r *Real) warmCoordinators(ctx context.Context) error {
	cl, err := r.adminClient()
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	return r.poll(ctx, "waiting for the group coordinator", func() string {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := adm.FindGroupCoordinators(rctx, "kql-kafkatest-warmup").Error(); err != nil {
			return err.Error()
		}
		return ""
	})
}
