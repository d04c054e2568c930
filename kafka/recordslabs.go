package kafka

import (
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordSlabs is a reader's pool of the memory its Fetches decode into:
// kgo's record slabs (it is a kgo.PoolRecords: each record batch's
// records are one slab, and a slab whose records were all recycled, by
// kgo.Record.Recycle, which zeroes them, is decoded into again) and the
// chunks' key arrays (FetchAnswer.Keys). An ordered read hands each chunk
// back once the merge has copied its last record out (Reader.Spent); a
// lane recycles it before its next Fetch, off the merge's goroutine.
// Records a read never hands back (a follow read's, a chunk cut at the
// end, a read closed early) are collected by the GC as before. The
// records' keys and values are not in the slabs (they point into the
// fetch response), so what the merge copied out of a record stays valid
// after its slab is reused.
//
// Why: a 1M-record read of 100 B values decoded about 157 MB of
// kgo.Record slabs, over half of what it allocated; with the read's small
// live heap (the 8 MiB budget) that meant a GC cycle every few MiB, and
// the GC's marking and write barriers were a fifth of its CPU.
//
// The pool belongs to one reader and is bounded by its budget (max), so
// it holds no memory after the read and never grows with the records
// read.
type recordSlabs struct {
	mu     sync.Mutex
	free   [24][][]kgo.Record // zeroed slabs by log2 of their capacity
	keys   [][]RecordKey      // key arrays handed back
	pooled int                // records in free and keys
	// recycling: the consumer has handed chunks back (a read longer
	// than what is fetched ahead), so Fetches decode into the pool.
	recycling atomic.Bool
	max       int        // the most records pooled
	pools     []kgo.Pool // {the pool itself}, for ProcessFetchPartition
}

// newRecordSlabs is a pool for a reader with this budget: it keeps at
// most a budget's worth of record structs (the records the budget holds
// when values are empty), so pooled and buffered memory together stay
// within about twice the budget.
func newRecordSlabs(budget int64) *recordSlabs {
	p := &recordSlabs{max: int(max(budget/recordOverhead, 256))}
	p.pools = []kgo.Pool{p}
	return p
}

// poolsIfFree is the pool for ProcessFetchPartition once the consumer
// hands chunks back: decoding into a pool costs kgo two allocations per
// batch (the context a record's Recycle finds its slab by), which pay
// only when slabs come back to be decoded into again. A read short enough
// to be fetched before any chunk is spent never pools.
func (p *recordSlabs) poolsIfFree() []kgo.Pool {
	if p == nil || !p.recycling.Load() {
		return nil
	}
	return p.pools
}

// GetRecords is a slab with room for n records (kgo sets its length).
func (p *recordSlabs) GetRecords(n int) []kgo.Record {
	k := bits.Len(uint(max(n, 1) - 1))
	if k >= len(p.free) {
		return make([]kgo.Record, 0, n)
	}
	p.mu.Lock()
	// A slab of the next size up serves as well, at twice the memory.
	for c := k; c < min(k+2, len(p.free)); c++ {
		if l := len(p.free[c]); l > 0 {
			s := p.free[c][l-1]
			p.free[c][l-1] = nil
			p.free[c] = p.free[c][:l-1]
			p.pooled -= cap(s)
			p.mu.Unlock()
			return s
		}
	}
	p.mu.Unlock()
	return make([]kgo.Record, 0, 1<<k)
}

// PutRecords takes back a slab whose records were all recycled (zeroed).
func (p *recordSlabs) PutRecords(s []kgo.Record) {
	c := cap(s)
	if c == 0 || c&(c-1) != 0 || bits.Len(uint(c))-1 >= len(p.free) {
		return // not one of the pool's sizes
	}
	k := bits.Len(uint(c)) - 1
	p.mu.Lock()
	if p.pooled+c <= p.max {
		p.free[k] = append(p.free[k], s[:0])
		p.pooled += c
	}
	p.mu.Unlock()
}

// keysOf is each record's (timestamp in ms, offset), in a key array from
// the pool when one is big enough.
func (p *recordSlabs) keysOf(recs []*kgo.Record) []RecordKey {
	if len(recs) == 0 {
		return nil
	}
	var keys []RecordKey
	if p != nil {
		p.mu.Lock()
		if l := len(p.keys); l > 0 && cap(p.keys[l-1]) >= len(recs) {
			keys = p.keys[l-1][:len(recs)]
			p.keys[l-1] = nil
			p.keys = p.keys[:l-1]
			p.pooled -= cap(keys) / 8 // a key is about an eighth of a record
		}
		p.mu.Unlock()
	}
	if keys == nil {
		keys = make([]RecordKey, len(recs), max(len(recs), 256))
	}
	for i, rec := range recs {
		keys[i] = RecordKey{rec.Timestamp.UnixMilli(), rec.Offset}
	}
	return keys
}

// recycle hands each record of the spent chunks back to its slab and
// keeps their key arrays.
func (p *recordSlabs) recycle(spent []chunk) {
	if len(spent) > 0 && !p.recycling.Load() {
		p.recycling.Store(true)
	}
	for _, c := range spent {
		for _, rec := range c.recs {
			rec.Recycle()
		}
		if cap(c.keys) > 0 {
			p.mu.Lock()
			if p.pooled+cap(c.keys)/8 <= p.max {
				p.keys = append(p.keys, c.keys)
				p.pooled += cap(c.keys) / 8
			}
			p.mu.Unlock()
		}
	}
}
