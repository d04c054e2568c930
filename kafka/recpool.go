package kafka

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recPool is an encoding reader's pool of franz-go's record slabs (one
// []kgo.Record per record batch, kgo.PoolRecords): a lane encodes an
// answer's records as soon as it has decoded them and then recycles them
// (Record.Recycle), so its next Fetch decodes into the same slabs instead
// of allocating, and zeroing, about 160 B per record (measured on kfake, 1M
// records of 100 B: half of the 400 MB a jsonl read allocated).
//
// The record read (NewMerge) does not pool slabs: its records wait in the
// budget's queue until the consumer is done with them, and a pool of a
// budget's worth pushed peak RSS over its goal (keypool.go). Here a slab
// comes back within the Fetch that filled it, so the pool holds about one
// answer per lane; it is bounded (max bytes) all the same, and belongs to
// one reader.
type recPool struct {
	mu     sync.Mutex
	slabs  [][]kgo.Record
	pooled int64 // bytes in slabs
	max    int64
}

func newRecPool(budget int64) *recPool { return &recPool{max: budget / 4} }

// recordBytes is what a slab's record costs, as recordOverhead without
// the pointer to it.
const recordBytes = recordOverhead - 8

// GetRecords returns a slab of capacity n or more, from the pool when one
// is large enough (kgo.PoolRecords).
func (p *recPool) GetRecords(n int) []kgo.Record {
	p.mu.Lock()
	for i := len(p.slabs) - 1; i >= 0; i-- {
		if s := p.slabs[i]; cap(s) >= n {
			p.pooled -= int64(cap(s)) * recordBytes
			p.slabs[i] = p.slabs[len(p.slabs)-1]
			p.slabs[len(p.slabs)-1] = nil
			p.slabs = p.slabs[:len(p.slabs)-1]
			p.mu.Unlock()
			return s[:0]
		}
	}
	if len(p.slabs) > 0 {
		// None is large enough: the smallest makes room for the one
		// allocated now, which comes back later, so the pool does not
		// fill with slabs smaller than the batches.
		small := 0
		for i, s := range p.slabs {
			if cap(s) < cap(p.slabs[small]) {
				small = i
			}
		}
		p.pooled -= int64(cap(p.slabs[small])) * recordBytes
		p.slabs[small] = p.slabs[len(p.slabs)-1]
		p.slabs[len(p.slabs)-1] = nil
		p.slabs = p.slabs[:len(p.slabs)-1]
	}
	p.mu.Unlock()
	// A little spare, for the next batches, a little longer.
	return make([]kgo.Record, 0, n+n/8)
}

// PutRecords takes back a slab whose kept records were all recycled; what
// does not fit under max is left to the GC.
func (p *recPool) PutRecords(s []kgo.Record) {
	c := int64(cap(s)) * recordBytes
	// Recycle zeroed the records handed out, not those of the batch
	// before the Fetch's offset: nothing of a response stays reachable
	// from the pool.
	clear(s[:cap(s)])
	p.mu.Lock()
	defer p.mu.Unlock()
	if c > 0 && p.pooled+c <= p.max {
		p.slabs = append(p.slabs, s[:0])
		p.pooled += c
	}
}
