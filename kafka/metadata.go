package kafka

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return tp.Topic + "/" + strconv.Itoa(int(tp.Partition)) }

// Broker is one broker as the cluster advertises it.
type Broker struct {
	ID   int32
	Host string
	Port int32
	Rack *string
}

// Addr is the advertised host:port.
func (b Broker) Addr() string { return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))) }

// Partition is one partition's metadata.
type Partition struct {
	ID       int32
	Leader   int32 // -1: no leader
	Epoch    int32
	Replicas []int32
	ISR      []int32
	Offline  []int32
	Err      error // a partition-level metadata error (e.g. LEADER_NOT_AVAILABLE), nil if none
}

// Topic is one topic's metadata; Partitions is sorted by ID.
type Topic struct {
	Name       string
	ID         [16]byte
	Internal   bool
	Partitions []Partition
}

// Metadata is one Metadata answer, indexed.
type Metadata struct {
	ClusterID    string
	ControllerID int32    // Metadata's controller_id: under KRaft a random live broker, not the quorum leader
	Brokers      []Broker // sorted by ID
	Topics       map[string]*Topic
	AnsweredBy   int32 // the broker that answered
}

// Broker returns the broker with id, and whether the metadata knows it.
func (m *Metadata) Broker(id int32) (Broker, bool) {
	for _, b := range m.Brokers {
		if b.ID == id {
			return b, true
		}
	}
	return Broker{}, false
}

// Addr returns the advertised address of broker id, or "unknown address".
func (m *Metadata) Addr(id int32) string {
	if b, ok := m.Broker(id); ok {
		return b.Addr()
	}
	return "unknown address"
}

// TopicNames returns the topic names, sorted.
func (m *Metadata) TopicNames() []string {
	names := make([]string, 0, len(m.Topics))
	for n := range m.Topics {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// UnknownTopicError says a topic does not exist.
type UnknownTopicError struct{ Topic string }

func (e *UnknownTopicError) Error() string {
	return fmt.Sprintf("no topic named %q (SHOW TOPICS lists the topics)", e.Topic)
}

// Metadata asks any broker for the cluster's metadata. topics nil means all
// topics. A requested topic that does not exist is an *UnknownTopicError.
func (c *Cluster) Metadata(ctx context.Context, topics []string) (*Metadata, error) {
	req := kmsg.NewPtrMetadataRequest()
	if topics != nil {
		req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(topics))
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	raw, by, err := c.AnyBroker(ctx, "Metadata", topics, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.MetadataResponse)
	m := &Metadata{ControllerID: resp.ControllerID, Topics: make(map[string]*Topic, len(resp.Topics)), AnsweredBy: by}
	if resp.ClusterID != nil {
		m.ClusterID = *resp.ClusterID
	}
	for _, b := range resp.Brokers {
		m.Brokers = append(m.Brokers, Broker{ID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
	}
	slices.SortFunc(m.Brokers, func(a, b Broker) int { return int(a.ID) - int(b.ID) })
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if t.ErrorCode == kerr.UnknownTopicOrPartition.Code {
				return nil, &UnknownTopicError{Topic: *t.Topic}
			}
			return nil, fmt.Errorf("metadata for topic %q from broker %d (%s): %s", *t.Topic, by, m.Addr(by), describe(err))
		}
		top := &Topic{Name: *t.Topic, ID: t.TopicID, Internal: t.IsInternal}
		for _, p := range t.Partitions {
			top.Partitions = append(top.Partitions, Partition{
				ID: p.Partition, Leader: p.Leader, Epoch: p.LeaderEpoch,
				Replicas: p.Replicas, ISR: p.ISR, Offline: p.OfflineReplicas,
				Err: kerr.ErrorForCode(p.ErrorCode),
			})
		}
		slices.SortFunc(top.Partitions, func(a, b Partition) int { return int(a.ID) - int(b.ID) })
		m.Topics[top.Name] = top
	}
	c.metaMu.Lock()
	c.lastMeta = m
	byID := make(map[int32]*kgo.Broker, len(c.seeds))
	for i, addr := range c.cfg.Bootstrap {
		for _, b := range m.Brokers {
			if b.Addr() == addr && i < len(c.seeds) {
				byID[b.ID] = c.seeds[i]
				if i == c.seedAnswered {
					// The next any-broker request goes where this one
					// went, over the same connection.
					c.lastAnswered = b.ID
					c.seedAnswered = -1
				}
			}
		}
	}
	c.seedByID = byID
	c.metaMu.Unlock()
	return m, nil
}

// Latest returns the newest metadata read by any statement (nil before the
// first), so a long statement can follow a leader that moved while it ran.
func (c *Cluster) Latest() *Metadata {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	return c.lastMeta
}

// addr returns the advertised address of broker id from the newest metadata.
func (c *Cluster) addr(id int32) string {
	c.metaMu.Lock()
	m := c.lastMeta
	c.metaMu.Unlock()
	if m == nil {
		return "unknown address"
	}
	return m.Addr(id)
}

// metaCache is embedded in Cluster.
type metaCache struct {
	metaMu       sync.Mutex
	lastMeta     *Metadata
	lastAnswered int32
	// seedAnswered is the index of the bootstrap seed that answered last
	// before any broker id was known (Dial's Metadata), or -1.
	seedAnswered int
	// seedByID maps a broker id to the bootstrap seed at its advertised
	// address, from the newest metadata.
	seedByID map[int32]*kgo.Broker
}

// seedFor returns the seed connection of broker id, or nil.
func (c *Cluster) seedFor(id int32) *kgo.Broker {
	c.metaMu.Lock()
	defer c.metaMu.Unlock()
	return c.seedByID[id]
}

// WaitTopic waits (up to a bound, or ctx) until every broker's metadata
// agrees that topic exists with a leader for every partition, or, with
// exists false, that it is gone. A controller accepts CreateTopics before
// the brokers learn of the topic; without this, the statement right after
// CREATE TOPIC could read metadata from a broker that says "no such topic".
// It reports whether they agreed in time.
func (c *Cluster) WaitTopic(ctx context.Context, topic string, exists bool, bound time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		if c.topicAgreed(ctx, topic, exists) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) topicAgreed(ctx context.Context, topic string, exists bool) bool {
	m := c.Latest()
	if m == nil {
		return false
	}
	for _, b := range m.Brokers {
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, rt)
		raw, err := c.send(ctx, "Metadata", b.ID, []string{topic}, req)
		if err != nil {
			continue // a broker that cannot be reached has no say
		}
		resp := raw.(*kmsg.MetadataResponse)
		for _, t := range resp.Topics {
			known := t.ErrorCode == 0
			if known != exists {
				return false
			}
			if exists {
				if len(t.Partitions) == 0 {
					return false
				}
				for _, p := range t.Partitions {
					if p.Leader < 0 {
						return false
					}
				}
			}
		}
	}
	return true
}
