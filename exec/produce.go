package exec

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

var produceCols = []result.Column{col("topic", result.String), col("partition", result.Int), col("offset", result.Int), col("timestamp", result.Time)}

var produceSchemaCols = append(append([]result.Column(nil), produceCols...), col("key_schema_id", result.Int), col("value_schema_id", result.Int))

// encodedID is the schema id a key or value was written with; NULL when it
// was written without one.
func encodedID(e *schema.Encoded) any {
	if e == nil {
		return nil
	}
	return int64(e.ID)
}

// roundRobin spreads records with a null key and no PARTITION.
var roundRobin atomic.Uint32

// choosePartition picks the partition of a PRODUCE: the explicit one (which
// must exist), else Kafka's murmur2 partition of the key, else round robin.
// key is the key as written to Kafka (encoded, with a KEY SCHEMA): the
// partition is the murmur2 of those bytes, as the Java producer computes it
// after the Confluent serializer ran.
func choosePartition(t *kafka.Topic, st *lang.Produce, key []byte) (int32, error) {
	n := len(t.Partitions)
	if n == 0 {
		return 0, fmt.Errorf("topic %q has no partitions", t.Name)
	}
	if st.Partition != nil {
		for _, p := range t.Partitions {
			if p.ID == *st.Partition {
				return p.ID, nil
			}
		}
		return 0, fmt.Errorf("topic %q has no partition %d; its partitions are %s", t.Name, *st.Partition, partitionRange(t))
	}
	if key != nil {
		return kafka.PartitionForKey(t.Name, key, n), nil
	}
	return t.Partitions[int(roundRobin.Add(1))%n].ID, nil
}

// nextRoundRobin is the partition the next keyless PRODUCE without
// PARTITION will pick, without taking it (for EXPLAIN).
func nextRoundRobin(t *kafka.Topic) int32 {
	return t.Partitions[int(roundRobin.Load()+1)%len(t.Partitions)].ID
}

func literalBytes(l *lang.Literal) []byte {
	if l == nil || l.Null {
		return nil
	}
	if l.Bytes == nil {
		return []byte{}
	}
	return l.Bytes
}

func (s *Session) produce(ctx context.Context, st *lang.Produce) (result.Result, error) {
	if st.From != nil {
		return s.importRecords(ctx, st)
	}
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	// Encoded before anything is written: a value that does not fit its
	// schema writes nothing.
	key, kenc, err := s.encodeSide(ctx, st.Topic, "key", st.Key, st.KeySchema, st.KeyAs)
	if err != nil {
		return nil, err
	}
	value, venc, err := s.encodeSide(ctx, st.Topic, "value", st.Value, st.ValueSchema, st.ValueAs)
	if err != nil {
		return nil, err
	}
	p, err := choosePartition(m.Topics[st.Topic], st, key)
	if err != nil {
		return nil, err
	}
	rec := &kafka.OutRecord{Topic: st.Topic, Partition: p, Key: key, Value: value}
	for _, h := range st.Headers {
		rec.Headers = append(rec.Headers, kafka.Header{Key: h.Key, Value: literalBytes(&h.Value)})
	}
	out, err := s.cl.Produce(ctx, rec)
	if err != nil {
		return nil, err
	}
	row := result.Row{out.Topic, int64(out.Partition), out.Offset, out.Timestamp}
	if st.KeySchema == nil && st.ValueSchema == nil {
		return result.NewSlice(produceCols, []result.Row{row}), nil
	}
	// With a SCHEMA clause, also which schema ids wrote the record.
	return result.NewSlice(produceSchemaCols, []result.Row{append(row, encodedID(kenc), encodedID(venc))}), nil
}
