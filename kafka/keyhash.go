package kafka

import "github.com/twmb/franz-go/pkg/kgo"

// KeyPartitioner is PartitionForKey for a keyed record, for one goroutine:
// it hashes through a record of its own, where PartitionForKey allocates
// one per call (the hasher is an interface, so the record escapes), which
// was a tenth of an import's CPU.
type KeyPartitioner struct{ r kgo.Record }

// Partition is the partition of topic (of n) that key (non-nil) hashes to,
// as PartitionForKey says.
func (p *KeyPartitioner) Partition(topic string, key []byte, n int) int32 {
	p.r.Topic, p.r.Key = topic, key
	part := keyHasher.Partition(&p.r, n)
	p.r.Key = nil
	return int32(part)
}
