package kafka

import (
	"context"
	"fmt"
	"maps"
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
//
// A broker learns of a new topic a little after the controller accepted
// it, so a topic another client has just created can be unknown to the
// broker asked and known to the others. Before saying a topic does not
// exist, Metadata asks the other brokers once each (a second opinion that
// costs nothing when every topic is known) and takes the first answer that
// knows every requested topic.
func (c *Cluster) Metadata(ctx context.Context, topics []string) (*Metadata, error) {
	raw, by, err := c.AnyBroker(ctx, "Metadata", topics, metadataRequest(topics))
	if err != nil {
		return nil, err
	}
	m, unknown, err := parseMetadata(raw.(*kmsg.MetadataResponse), by)
	if err != nil {
		return nil, err
	}
	if len(unknown) > 0 && len(topics) > 0 {
		if m, err = c.secondOpinion(ctx, m, topics, unknown); err != nil {
			return nil, err
		}
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

// WithTopic returns m if it has topic, else m with topic added from a
// Metadata request naming it. An all-topics answer comes from one broker,
// which may not know a topic created a moment ago; asking by name asks the
// other brokers before calling it missing (an *UnknownTopicError). m is
// not changed: it may be the cluster's shared newest metadata.
func (c *Cluster) WithTopic(ctx context.Context, m *Metadata, topic string) (*Metadata, error) {
	if _, ok := m.Topics[topic]; ok {
		return m, nil
	}
	named, err := c.Metadata(ctx, []string{topic})
	if err != nil {
		return nil, err
	}
	with := *m
	with.Topics = maps.Clone(m.Topics)
	with.Topics[topic] = named.Topics[topic]
	return &with, nil
}

// secondOpinion asks every broker of m other than the one that answered m
// (which did not know the topics in unknown) for the same topics,
// concurrently, and returns the first answer that knows them all. When
// none does, the error is ctx's, or another broker's error about a
// requested topic (e.g. TOPIC_AUTHORIZATION_FAILED, which says more than
// "unknown"), or an *UnknownTopicError naming a topic no broker that
// answered knows. A broker that cannot be reached has no say.
//
// It does not make that broker the one asked first next time: for a topic
// being deleted the broker that still lists it is the stale one.
func (c *Cluster) secondOpinion(parent context.Context, m *Metadata, topics, unknown []string) (*Metadata, error) {
	first := unknown[0]
	ctx, cancel := context.WithTimeout(parent, anyBrokerAttempt)
	defer cancel()
	type answer struct {
		m       *Metadata
		unknown []string
		err     error
	}
	answers := make(chan answer, len(m.Brokers))
	var wg sync.WaitGroup
	for _, b := range m.Brokers {
		if b.ID == m.AnsweredBy {
			continue
		}
		wg.Go(func() {
			// A request per broker: kgo sets the version on the request it sends.
			raw, err := c.send(ctx, "Metadata", b.ID, topics, metadataRequest(topics))
			if err != nil {
				answers <- answer{}
				return
			}
			other, unknown, err := parseMetadata(raw.(*kmsg.MetadataResponse), b.ID)
			answers <- answer{other, unknown, err}
		})
	}
	go func() { wg.Wait(); close(answers) }()
	var found *Metadata
	var topicErr error
	for a := range answers {
		switch {
		case found != nil:
		case a.err != nil:
			if topicErr == nil {
				topicErr = a.err
			}
		case a.m == nil: // could not be asked
		case len(a.unknown) == 0:
			found = a.m
			cancel() // the others need not finish
		default:
			// Keep only the topics this broker does not know either.
			unknown = slices.DeleteFunc(unknown, func(t string) bool { return !slices.Contains(a.unknown, t) })
		}
	}
	switch {
	case found != nil:
		return found, nil
	case parent.Err() != nil:
		return nil, parent.Err()
	case topicErr != nil:
		return nil, topicErr
	case len(unknown) > 0:
		return nil, &UnknownTopicError{Topic: unknown[0]}
	}
	// Each topic is known to some broker, none knows them all: name the
	// one the first broker did not know.
	return nil, &UnknownTopicError{Topic: first}
}

func metadataRequest(topics []string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	if topics != nil {
		req.Topics = make([]kmsg.MetadataRequestTopic, 0, len(topics))
		for _, t := range topics {
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(t)
			req.Topics = append(req.Topics, rt)
		}
	}
	return req
}

// parseMetadata indexes a Metadata answer from broker by. unknown lists
// the requested topics the broker does not know, in the answer's order;
// any other topic error is an error.
func parseMetadata(resp *kmsg.MetadataResponse, by int32) (m *Metadata, unknown []string, err error) {
	m = &Metadata{ControllerID: resp.ControllerID, Topics: make(map[string]*Topic, len(resp.Topics)), AnsweredBy: by}
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
				unknown = append(unknown, *t.Topic)
				continue
			}
			return nil, nil, fmt.Errorf("metadata for topic %q from broker %d (%s): %s", *t.Topic, by, m.Addr(by), describe(err))
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
	return m, unknown, nil
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
	return c.waitEveryBroker(ctx, topic, bound, func(t *kmsg.MetadataResponseTopic) bool {
		if known := t.ErrorCode == 0; known != exists {
			return false
		}
		return !exists || len(t.Partitions) > 0 && allLed(t)
	})
}

// waitEveryBroker asks every broker for topic's metadata every 100 ms
// until each answer satisfies agrees (a broker that cannot be reached has
// no say), up to bound or ctx. It reports whether they agreed in time.
func (c *Cluster) waitEveryBroker(ctx context.Context, topic string, bound time.Duration, agrees func(*kmsg.MetadataResponseTopic) bool) bool {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		if c.everyBrokerAgrees(ctx, topic, agrees) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) everyBrokerAgrees(ctx context.Context, topic string, agrees func(*kmsg.MetadataResponseTopic) bool) bool {
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
		for i := range raw.(*kmsg.MetadataResponse).Topics {
			if !agrees(&raw.(*kmsg.MetadataResponse).Topics[i]) {
				return false
			}
		}
	}
	return true
}

// allLed reports whether every partition of t has a leader.
func allLed(t *kmsg.MetadataResponseTopic) bool {
	for _, p := range t.Partitions {
		if p.Leader < 0 {
			return false
		}
	}
	return true
}
