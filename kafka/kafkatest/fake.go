package kafkatest

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Fake is franz-go's in-process fake cluster behind the Backend interface.
// The embedded *kfake.Cluster gives a test its controls: MoveTopicPartition,
// LeaderFor, CoordinatorFor, RehashCoordinators, ShufflePartitionLeaders,
// Fault, ControlKey, ... AddNode and RemoveNode are wrapped so Brokers stays
// right.
//
// Unlike real Kafka, kfake answers admin requests (CreateTopics,
// DeleteTopics, CreatePartitions) only on the broker Metadata names as
// controller, with NOT_CONTROLLER elsewhere; kgo routes them there itself.
type Fake struct {
	*kfake.Cluster

	mu    sync.Mutex
	addrs map[int32]string // node id -> address
}

// NewFake starts a 3-broker kfake cluster on 127.0.0.1 (node ids 0, 1, 2),
// closed when the test ends. Like the real test cluster, a topic created
// without a partition count gets one partition and topics are never
// auto-created; opts are applied after those defaults and may override them.
func NewFake(t testing.TB, opts ...kfake.Opt) *Fake {
	t.Helper()
	all := append([]kfake.Opt{kfake.NumBrokers(3), kfake.DefaultNumPartitions(1)}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	t.Cleanup(c.Close)
	// kfake numbers its initial brokers 0..n-1 in ListenAddrs order.
	f := &Fake{Cluster: c, addrs: make(map[int32]string)}
	for i, a := range c.ListenAddrs() {
		f.addrs[int32(i)] = a
	}
	return f
}

// Name is "kfake".
func (f *Fake) Name() string { return KFake }

// Bootstrap returns every broker's address.
func (f *Fake) Bootstrap() []string {
	var out []string
	for _, b := range f.Brokers() {
		out = append(out, b.Addr)
	}
	return out
}

// Brokers lists the brokers, sorted by id.
func (f *Fake) Brokers() []Broker {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Broker, 0, len(f.addrs))
	for id, a := range f.addrs {
		out = append(out, Broker{ID: id, Addr: a})
	}
	slices.SortFunc(out, func(a, b Broker) int { return int(a.ID) - int(b.ID) })
	return out
}

// AddNode adds a broker (nodeID -1: the next free id; port 0: any port) and
// returns its id and port.
func (f *Fake) AddNode(nodeID int32, port int) (int32, int, error) {
	id, p, err := f.Cluster.AddNode(nodeID, port)
	if err != nil {
		return id, p, err
	}
	f.mu.Lock()
	f.addrs[id] = fmt.Sprintf("127.0.0.1:%d", p)
	f.mu.Unlock()
	return id, p, nil
}

// RemoveNode removes a broker; its partitions get new leaders.
func (f *Fake) RemoveNode(nodeID int32) error {
	if err := f.Cluster.RemoveNode(nodeID); err != nil {
		return err
	}
	f.mu.Lock()
	delete(f.addrs, nodeID)
	f.mu.Unlock()
	return nil
}
