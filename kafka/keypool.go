package kafka

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// keyPool is a reader's pool of the chunks' key arrays
// (FetchAnswer.Keys): an ordered read hands each chunk back once the merge
// has copied its last record out (Reader.Spent), and its key array is
// filled again by a later Fetch, so the keys cost no allocation per chunk.
//
// franz-go's record slabs (kgo.PoolRecords) are not pooled. That was
// built and measured (2026-12-01, kfake, 1M records of 100 B): with a
// budget's worth of records pooled a read allocated 185 MB instead of 295
// MB and used about a tenth less user CPU, but what a pool keeps is live
// heap, which the GC lets the heap grow to twice of: peak RSS went from
// 45 to 65-70 MiB, over the 64 MiB goal. A pool of a quarter of that kept
// RSS at 53-57 MiB but saved only 26 MB of the 295 (slabs come back in
// bursts, as the merge finishes chunks, and most were turned away).
//
// The pool belongs to one reader and is bounded by its budget (max), so
// it holds no memory after the read and never grows with the records read.
type keyPool struct {
	mu     sync.Mutex
	keys   [][]RecordKey // key arrays handed back
	pooled int           // keys in the arrays of keys
	max    int           // the most keys pooled
}

// newKeyPool is a pool for a reader with this budget: at most the
// keys of the records the budget holds when values are empty (16 B a key
// against 168 B a record: under a tenth of the budget).
func newKeyPool(budget int64) *keyPool {
	return &keyPool{max: int(max(budget/recordOverhead, 256))}
}

// keysOf is each record's (timestamp in ms, offset), in a key array from
// the pool when one is big enough. A read with no pool (nil: FOLLOW's,
// which hands records out as they come and compares no keys) gets none.
func (p *keyPool) keysOf(recs []*kgo.Record) []RecordKey {
	if len(recs) == 0 || p == nil {
		return nil
	}
	var keys []RecordKey
	p.mu.Lock()
	if l := len(p.keys); l > 0 && cap(p.keys[l-1]) >= len(recs) {
		keys = p.keys[l-1][:len(recs)]
		p.keys[l-1] = nil
		p.keys = p.keys[:l-1]
		p.pooled -= cap(keys)
	}
	p.mu.Unlock()
	if keys == nil {
		// A quarter spare, so that the next chunks, a little longer or
		// shorter, reuse it; not a fixed minimum: a chunk of one small
		// record (a tail, a topic of single-record batches) would hold
		// kilobytes of keys that the budget does not count.
		keys = make([]RecordKey, len(recs), len(recs)+len(recs)/4)
	}
	for i, rec := range recs {
		keys[i] = RecordKey{rec.Timestamp.UnixMilli(), rec.Offset}
	}
	return keys
}

// recycle keeps the spent chunks' key arrays.
func (p *keyPool) recycle(spent [][]RecordKey) {
	if len(spent) == 0 || p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, keys := range spent {
		if cap(keys) > 0 && p.pooled+cap(keys) <= p.max {
			p.keys = append(p.keys, keys)
			p.pooled += cap(keys)
		}
	}
}
