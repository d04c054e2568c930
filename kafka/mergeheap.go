package kafka

import "github.com/twmb/franz-go/pkg/kgo"

// The ordered merge's one heap: each source is one partition's run in
// offset order (a chunk of fetched records for Merge, a tail read's keys
// for OrderKeys), and the heap holds the sources with a head left, the
// one whose head comes first in row order (timestamp, partition, offset)
// at the top. Both merges order rows with it, so a tail read's page and
// the rows read for it come in the same order.

// mergeSource is one partition's place in a merge: the run its heads are
// taken from, as (timestamp, offset) keys, and for Merge the records the
// keys are of.
type mergeSource struct {
	tp   TopicPartition
	i    int           // the head's index in keys (and recs)
	keys []RecordKey   // the run's keys
	recs []*kgo.Record // Merge: the chunk being handed out, keys[i] is recs[i]'s
	// An encoding Merge's chunk (NewEncodedMerge): record i's bytes are
	// enc[ends[i-1]:ends[i]].
	enc  []byte
	ends []int32
}

// heapEntry is a source's head as the heap orders it. The heap holds its
// keys by value, not a pointer to the source: a sift compares adjacent
// memory instead of chasing a pointer per comparison, and its swaps write
// no pointers, so they pay no GC write barrier (a read sifts once per
// record, and a read allocates enough that the GC is often marking).
type heapEntry struct {
	ts   int64 // the head's timestamp in ms
	off  int64 // the head's offset
	part int32 // the source's partition
	src  int32 // the source's index in the merge's sources
}

// mergeHeap is a binary min-heap of sources' heads.
type mergeHeap []heapEntry

// headLess orders heads: timestamp, partition, offset.
func headLess(a, b *heapEntry) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.part != b.part {
		return a.part < b.part
	}
	return a.off < b.off
}

// headOf is source src's head as a heap entry.
func headOf(s *mergeSource, src int) heapEntry {
	k := s.keys[s.i]
	return heapEntry{ts: k.Timestamp, off: k.Offset, part: s.tp.Partition, src: int32(src)}
}

func (h *mergeHeap) push(e heapEntry) {
	*h = append(*h, e)
	hh := *h
	i := len(hh) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !headLess(&hh[i], &hh[parent]) {
			break
		}
		hh[i], hh[parent] = hh[parent], hh[i]
		i = parent
	}
}

// fixTop restores the order after the top entry's keys moved on.
func (h mergeHeap) fixTop() { h.down(0) }

// popTop removes the top entry (its run is done).
func (h *mergeHeap) popTop() {
	hh := *h
	last := len(hh) - 1
	hh[0] = hh[last]
	*h = hh[:last]
	if last > 0 {
		h.down(0)
	}
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && headLess(&h[r], &h[l]) {
			m = r
		}
		if !headLess(&h[m], &h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// KeyRef is one key of a tail read's first pass, with its partition.
type KeyRef struct {
	TP  TopicPartition
	Key RecordKey
}

// OrderKeys merges each partition's keys (each in offset order) into row
// order, the order Merge hands the records out in: (timestamp,
// partition, offset).
func OrderKeys(keys map[TopicPartition][]RecordKey) []KeyRef {
	srcs := make([]mergeSource, 0, len(keys))
	total := 0
	for tp, ks := range keys {
		total += len(ks)
		if len(ks) > 0 {
			srcs = append(srcs, mergeSource{tp: tp, keys: ks})
		}
	}
	h := make(mergeHeap, 0, len(srcs))
	for i := range srcs {
		h.push(headOf(&srcs[i], i))
	}
	out := make([]KeyRef, 0, total)
	for len(h) > 0 {
		s := &srcs[h[0].src]
		out = append(out, KeyRef{s.tp, s.keys[s.i]})
		s.i++
		if s.i == len(s.keys) {
			h.popTop()
			continue
		}
		h[0] = headOf(s, int(h[0].src))
		h.fixTop()
	}
	return out
}
