package kafka

// The routing primitives when leaders and coordinators move: a retry asks
// again only for what moved and never drops a partition or a group that
// answered.

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// tracedFake is a 3-broker kfake with a Cluster that records every request
// it sends.
type tracedFake struct {
	*kfake.Cluster
	cl  *Cluster
	adm *kadm.Client

	mu     sync.Mutex
	events []TraceEvent
}

func newTracedFake(t *testing.T) *tracedFake {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		return net.Listen(network, "127.0.0.1:0")
	}))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	f := &tracedFake{Cluster: c}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.cl, err = Dial(ctx, Config{Bootstrap: c.ListenAddrs(), Trace: func(e TraceEvent) {
		f.mu.Lock()
		f.events = append(f.events, e)
		f.mu.Unlock()
	}})
	require.NoError(t, err)
	t.Cleanup(f.cl.Close)
	kcl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	t.Cleanup(kcl.Close)
	f.adm = kadm.NewClient(kcl)
	return f
}

func (f *tracedFake) topic(t *testing.T, name string, n int32) []TopicPartition {
	t.Helper()
	_, err := f.adm.CreateTopic(context.Background(), n, 3, nil, name)
	require.NoError(t, err)
	var parts []TopicPartition
	for p := int32(0); p < n; p++ {
		require.NoError(t, f.MoveTopicPartition(name, p, p%3))
		parts = append(parts, TopicPartition{name, p})
	}
	return parts
}

// forget drops the requests seen so far.
func (f *tracedFake) forget() {
	f.mu.Lock()
	f.events = nil
	f.mu.Unlock()
}

func (f *tracedFake) sent(api string) []TraceEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []TraceEvent
	for _, e := range f.events {
		if e.API == api {
			out = append(out, e)
		}
	}
	return out
}

// Every partition asked for comes back either answered or failed: never
// neither. Here partition 1 fails for good and partition 2 needs the retry.
func TestLeadersNeverDropsAPartition(t *testing.T) {
	f := newTracedFake(t)
	parts := f.topic(t, "t", 3)
	fatal := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{1}, Err: kerr.UnknownServerError, Count: -1})
	defer fatal.Remove()
	moved := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{2}, Err: kerr.NotLeaderForPartition, Count: 1})
	defer moved.Remove()
	got, failed, err := f.cl.ListOffsets(context.Background(), nil, parts, Latest, false)
	require.NoError(t, err)
	require.Equal(t, 1, moved.Hits())
	for _, tp := range parts {
		_, ok := got[tp]
		_, bad := failed[tp]
		require.True(t, ok != bad, "%s: answered=%v failed=%v (got %v, failed %v)", tp, ok, bad, got, failed)
	}
	require.ErrorIs(t, failed[parts[1]], kerr.UnknownServerError)
}

// The retry carries only the partitions that need it, to their new leader,
// and one request per broker.
func TestLeadersRetryOnlyWhatMoved(t *testing.T) {
	f := newTracedFake(t)
	parts := f.topic(t, "t", 6)
	m, err := f.cl.Metadata(context.Background(), []string{"t"})
	require.NoError(t, err)
	// Both move after kql read the metadata: the old leader answers
	// NOT_LEADER (the fault makes that certain), the retry finds the new one.
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Nodes: []int32{1}, Topic: "t", Partitions: []int32{1, 4}, Err: kerr.NotLeaderForPartition, Count: 2})
	defer h.Remove()
	require.NoError(t, f.MoveTopicPartition("t", 1, 2))
	require.NoError(t, f.MoveTopicPartition("t", 4, 0))
	got, failed, err := f.cl.ListOffsets(context.Background(), m, parts, Latest, false)
	require.NoError(t, err)
	require.Nil(t, failed)
	require.Len(t, got, 6)
	evs := f.sent("ListOffsets")
	require.Len(t, evs, 5, "3 brokers, then the 2 new leaders of the moved partitions: %v", evs)
	retried := map[int32][]string{}
	for _, e := range evs[3:] {
		retried[e.Broker] = append(retried[e.Broker], e.Items...)
	}
	require.Equal(t, map[int32][]string{2: {"t/1"}, 0: {"t/4"}}, retried)
}

// Two groups on two coordinators, one of which keeps answering
// NOT_COORDINATOR: the other group's answer is kept, the failing one named.
func TestCoordinatorsKeepTheGroupsThatAnswered(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 1)
	var a, b string
	for i := 0; a == "" || b == ""; i++ {
		g := fmt.Sprintf("g%d", i)
		switch f.CoordinatorFor(g) {
		case 0:
			a = g
		case 1:
			b = g
		}
	}
	for _, g := range []string{a, b} {
		_, err := f.adm.CommitOffsets(context.Background(), g, kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 1}))
		require.NoError(t, err)
	}
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeGroups}, Group: b, Err: kerr.NotCoordinator, Count: -1})
	defer h.Remove()
	got, failed, err := Coordinators(context.Background(), f.cl, []string{a, b}, GroupRequest[string]{
		API: "DescribeGroups",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = groups
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[string] {
			var out []GroupAnswer[string]
			for _, g := range raw.(*kmsg.DescribeGroupsResponse).Groups {
				out = append(out, GroupAnswer[string]{Group: g.Group, Value: g.State, Code: g.ErrorCode})
			}
			return out
		},
	})
	require.NoError(t, err)
	require.Equal(t, map[string]string{a: "Empty"}, got)
	require.Len(t, failed, 1)
	require.ErrorIs(t, failed[b], kerr.NotCoordinator)
	require.Contains(t, failed[b].Error(), fmt.Sprintf("group %q on coordinator broker 1 (", b))
	var finds int
	for _, e := range f.sent("FindCoordinator") {
		if slices.Contains(e.Items, b) {
			finds++
		}
	}
	require.Greater(t, finds, 1, "the coordinator was looked up again before giving up")
}

// A request no broker of the cluster knows (kfake has no DescribeQuorum)
// fails with that reason said once, naming how many brokers were asked,
// rather than as each broker's failed attempt.
func TestAnyBrokerRequestNoBrokerKnowsSaysSoOnce(t *testing.T) {
	f := newTracedFake(t)
	_, err := f.cl.DescribeQuorum(context.Background())
	require.Error(t, err)
	require.True(t, IsBrokerTooOld(err), "%v", err)
	require.ErrorContains(t, err, "none of the cluster's 3 brokers knows this request")
	require.Equal(t, 1, strings.Count(err.Error(), "broker is too old"), "one reason, once: %v", err)
}
