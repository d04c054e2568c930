package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// producer returns the cluster's idempotent producer, created on first use.
// Writes go through kgo's producer rather than raw Produce requests so that
// a retried write is deduplicated by the broker (producer id + sequence):
// a PRODUCE that kql retries is never written twice. The partition is
// always chosen by the caller (ManualPartitioner), see PartitionForKey.
func (c *Cluster) producer() (*kgo.Client, error) {
	c.prodMu.Lock()
	defer c.prodMu.Unlock()
	if c.prod != nil {
		return c.prod, nil
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.cfg.Bootstrap...),
		kgo.ClientID(c.cfg.ClientID),
		kgo.DialTimeout(c.cfg.DialTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordDeliveryTimeout(30 * time.Second),
		// Retry a refused record (NOT_LEADER_OR_FOLLOWER while a broker
		// restarts, CONCURRENT_TRANSACTIONS) after 100 ms as Kafka's
		// producer does, not after kgo's next 5-second metadata refresh:
		// six refusals took the whole delivery timeout. See the writer.
		kgo.MetadataMinAge(writerRetryBackoff),
		kgo.UnknownTopicRetries(int(writerUnknownTopicWait / writerRetryBackoff)),
		kgo.WithHooks(produceTrace{c}),
		kgo.DisableClientMetrics(), // as in Dial: no requests kql does not route
	}
	if c.cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.cfg.TLS))
	}
	if c.cfg.SASL != nil {
		opts = append(opts, kgo.SASL(kgoSASL(c.cfg.SASL)))
	}
	p, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("producer options: %w", err)
	}
	c.prod = p
	return p, nil
}

// Produced is where a record was written.
type Produced struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time
}

// Produce writes one record to out.Partition, through the partition's
// leader (kgo's producer routes it), and returns where it was written.
// Cancelling ctx returns at once, even when the record is already in
// flight (the broker may then still write it, and the error says so).
func (c *Cluster) Produce(ctx context.Context, out *OutRecord) (Produced, error) {
	rec := &kgo.Record{Topic: out.Topic, Partition: out.Partition, Key: out.Key, Value: out.Value, Timestamp: out.Timestamp}
	for _, h := range out.Headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	w, err := c.produce(ctx, rec)
	if err != nil {
		return Produced{}, err
	}
	return Produced{Topic: w.Topic, Partition: w.Partition, Offset: w.Offset, Timestamp: w.Timestamp}, nil
}

func (c *Cluster) produce(ctx context.Context, rec *kgo.Record) (*kgo.Record, error) {
	p, err := c.producer()
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		out, err := produceOne(ctx, p, rec)
		// The producer keeps its own metadata: a partition added, or a
		// topic dropped and created again (a new topic id), since its last
		// refresh is unknown to it. Both answers mean nothing was written,
		// so refresh and try again; kgo keeps a topic's old id through a
		// refresh, so after a few tries start a fresh producer.
		stale := err != nil && (strings.Contains(err.Error(), "invalid record partitioning choice") || errors.Is(err, kerr.UnknownTopicID))
		if stale && attempt < 6 {
			if attempt >= 2 {
				if p, err = c.resetProducer(p); err != nil {
					return nil, err
				}
				continue
			}
			p.ForceMetadataRefresh()
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
				continue
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("PRODUCE to %s/%d cancelled: the record may still have been written; CONSUME the partition to check: %w", rec.Topic, rec.Partition, ctx.Err())
			}
			if errors.Is(err, kerr.ClusterAuthorizationFailed) || errors.Is(err, kerr.TopicAuthorizationFailed) {
				// kgo's idempotent producer first asks InitProducerId, which
				// Kafka 2.8+ allows with WRITE on any topic (KIP-679) and
				// older brokers only with IDEMPOTENT_WRITE on the cluster.
				return nil, fmt.Errorf("PRODUCE to %s/%d: not authorized to write to topic %q: the principal needs the WRITE ACL on the topic (kql's idempotent producer also needs IDEMPOTENT_WRITE on the cluster on brokers older than Kafka 2.8): %w",
					rec.Topic, rec.Partition, rec.Topic, err)
			}
			return nil, fmt.Errorf("PRODUCE to %s/%d (leader broker %s): %w", rec.Topic, rec.Partition, c.leaderAddr(rec.Topic, rec.Partition), err)
		}
		return out, nil
	}
}

// resetProducer replaces the producer old with a fresh one.
func (c *Cluster) resetProducer(old *kgo.Client) (*kgo.Client, error) {
	c.prodMu.Lock()
	if c.prod == old {
		c.prod = nil
	}
	c.prodMu.Unlock()
	old.Close()
	return c.producer()
}

func produceOne(ctx context.Context, p *kgo.Client, rec *kgo.Record) (*kgo.Record, error) {
	type answer struct {
		rec *kgo.Record
		err error
	}
	done := make(chan answer, 1)
	r := *rec // a record must not be reused while kgo holds it
	p.Produce(ctx, &r, func(r *kgo.Record, err error) { done <- answer{r, err} })
	select {
	case a := <-done:
		return a.rec, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Cluster) leaderAddr(topic string, p int32) string {
	c.metaMu.Lock()
	m := c.lastMeta
	c.metaMu.Unlock()
	if m == nil {
		return "unknown"
	}
	if t, ok := m.Topics[topic]; ok {
		for _, part := range t.Partitions {
			if part.ID == p {
				return fmt.Sprintf("%d at %s", part.Leader, m.Addr(part.Leader))
			}
		}
	}
	return "unknown"
}

// PartitionForKey is the partition Kafka's Java client picks for a keyed
// record (murmur2 of the key, positive, modulo the partition count), so kql
// and Java producers agree on where a key lives.
func PartitionForKey(topic string, key []byte, partitions int) int32 {
	if key != nil {
		return int32(keyHasher.Partition(&kgo.Record{Topic: topic, Key: key}, partitions))
	}
	tp := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
	return int32(tp.Partition(&kgo.Record{Topic: topic, Key: key}, partitions))
}

// keyHasher is built once: ForTopic seeds a random source on every call
// (about 20 us, which was most of an import's and an INSERT's CPU when it ran
// per record). A keyed record's partition is the murmur2 hash alone, with no
// state, so one partitioner serves every topic and goroutine; only a nil key
// (sticky, stateful) takes a partitioner of its own.
var keyHasher = kgo.StickyKeyPartitioner(nil).ForTopic("")

// produceTrace reports produce requests to the trace hook.
type produceTrace struct{ c *Cluster }

func (h produceTrace) OnBrokerE2E(meta kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	fn := h.c.trace.Load()
	if fn == nil || key != 0 { // 0: Produce
		return
	}
	err := e2e.WriteErr
	if err == nil {
		err = e2e.ReadErr
	}
	(*fn)(TraceEvent{API: "Produce", Broker: meta.NodeID, Addr: fmt.Sprintf("%s:%d", meta.Host, meta.Port), Duration: e2e.DurationE2E(), Err: err})
}
