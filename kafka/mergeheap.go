package kafka

import "github.com/twmb/franz-go/pkg/kgo"

// The ordered merge's one heap: each source is one partition's run in
// offset order (a chunk of fetched records for Merge, a tail read's keys
// for OrderKeys), and the heap holds the sources with a head left, the
// one whose head comes first in row order (timestamp, partition, offset)
// at the top. Both merges order rows with it, so a tail read's page and
// the rows read for it come in the same order.

// mergeSource is one partition's place in a merge: its head's timestamp
// and offset (the heap's keys), and the run it is taken from.
type mergeSource struct {
	tp  TopicPartition
	ts  int64 // the head's timestamp in ms
	off int64 // the head's offset
	i   int   // the head's index in recs or keys

	recs []*kgo.Record // Merge: the chunk being handed out
	keys []RecordKey   // OrderKeys: the partition's keys
}

// mergeHeap is a binary min-heap of sources by their heads.
type mergeHeap []*mergeSource

// headLess orders sources by their heads: timestamp, partition, offset.
func headLess(a, b *mergeSource) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.tp.Partition != b.tp.Partition {
		return a.tp.Partition < b.tp.Partition
	}
	return a.off < b.off
}

func (h *mergeHeap) push(s *mergeSource) {
	*h = append(*h, s)
	hh := *h
	i := len(hh) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !headLess(hh[i], hh[parent]) {
			break
		}
		hh[i], hh[parent] = hh[parent], hh[i]
		i = parent
	}
}

// fixTop restores the order after the top source's head moved on.
func (h mergeHeap) fixTop() { h.down(0) }

// popTop removes the top source (its run is done).
func (h *mergeHeap) popTop() {
	hh := *h
	last := len(hh) - 1
	hh[0] = hh[last]
	hh[last] = nil
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
		if r := l + 1; r < len(h) && headLess(h[r], h[l]) {
			m = r
		}
		if !headLess(h[m], h[i]) {
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
	h := make(mergeHeap, 0, len(keys))
	total := 0
	for tp, ks := range keys {
		total += len(ks)
		if len(ks) > 0 {
			h.push(&mergeSource{tp: tp, ts: ks[0].Timestamp, off: ks[0].Offset, keys: ks})
		}
	}
	out := make([]KeyRef, 0, total)
	for len(h) > 0 {
		s := h[0]
		out = append(out, KeyRef{s.tp, s.keys[s.i]})
		s.i++
		if s.i == len(s.keys) {
			h.popTop()
			continue
		}
		s.ts, s.off = s.keys[s.i].Timestamp, s.keys[s.i].Offset
		h.fixTop()
	}
	return out
}
