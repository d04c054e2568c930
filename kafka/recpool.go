package kafka

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recPool is one lane's pool of franz-go's record slabs (one []kgo.Record
// per record batch, kgo.PoolRecords), for an encoding reader: the lane
// encodes an answer's records as soon as they are decoded and drops them,
// so once it has encoded a Fetch's answers it takes back every slab that
// Fetch decoded into (reclaim), and its next Fetch decodes into the same
// slabs instead of allocating, and zeroing, about 160 B per record
// (measured on kfake, 1M records of 100 B: of the 400 MB a jsonl read
// allocated, 160 MB were slabs).
//
// The slabs are taken back whole, zeroed, not record by record through
// kgo's Record.Recycle: that costs a context lookup, an atomic and a
// zeroing per record, 5% of the read's CPU, for what one clear of the slab
// does. kgo's own put (PutRecords, for a batch none of whose records it
// kept) is left to reclaim as well.
//
// The record read (NewMerge) pools no slabs: its records wait in the
// budget's queue until the consumer is done with them, and a pool of a
// budget's worth pushed peak RSS over its goal (keypool.go). Here the pool
// holds one answer's slabs per lane, bounded (max bytes) all the same.
type recPool struct {
	mu     sync.Mutex
	free   [][]kgo.Record // zeroed
	out    [][]kgo.Record // handed out since the last reclaim
	pooled int64          // bytes in free
	max    int64
}

func newRecPool(max int64) *recPool { return &recPool{max: max} }

// recordBytes is what a slab's record costs, as recordOverhead without
// the pointer to it.
const recordBytes = recordOverhead - 8

// GetRecords returns a slab of capacity n or more, from the pool when one
// is large enough (kgo.PoolRecords).
func (p *recPool) GetRecords(n int) []kgo.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	var s []kgo.Record
	for i := len(p.free) - 1; i >= 0; i-- {
		if cap(p.free[i]) >= n {
			s = p.free[i][:0]
			p.dropLocked(i)
			break
		}
	}
	if s == nil {
		if len(p.free) > 0 {
			// None is large enough: the smallest makes room for the
			// one allocated now, which comes back later, so the pool
			// does not fill with slabs smaller than the batches.
			small := 0
			for i, f := range p.free {
				if cap(f) < cap(p.free[small]) {
					small = i
				}
			}
			p.dropLocked(small)
		}
		s = make([]kgo.Record, 0, n+n/8) // a little spare, for the next batches
	}
	p.out = append(p.out, s)
	return s
}

func (p *recPool) dropLocked(i int) {
	p.pooled -= int64(cap(p.free[i])) * recordBytes
	p.free[i] = p.free[len(p.free)-1]
	p.free[len(p.free)-1] = nil
	p.free = p.free[:len(p.free)-1]
}

// PutRecords is kgo's put of a slab none of whose records it kept: the
// slab is in out, and reclaim takes it back with the others.
func (p *recPool) PutRecords([]kgo.Record) {}

// reclaim takes back every slab handed out since the last reclaim,
// zeroed, so that nothing of a response stays reachable from the pool;
// what does not fit under max is left to the GC. The caller is done with
// every record decoded into them: with keep false (a record the lane did
// not encode is still referenced) the slabs are only let go.
func (p *recPool) reclaim(keep bool) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.out {
		p.out[i] = nil
		if !keep {
			continue
		}
		c := int64(cap(s)) * recordBytes
		if c == 0 || p.pooled+c > p.max {
			continue
		}
		clear(s[:cap(s)])
		p.free = append(p.free, s[:0])
		p.pooled += c
	}
	p.out = p.out[:0]
}
