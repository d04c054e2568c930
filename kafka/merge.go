package kafka

import (
	"context"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

// Merge reads several partitions, each between a start and an exclusive
// end, through one Reader (the next Fetch to every leader already in
// flight while records are handed out), and hands them out in (timestamp,
// partition, offset) order: a k-way merge over a binary heap of the
// partitions' next records (mergeHeap, which OrderKeys shares). Records
// are handed out in kql's own result.Record, reused from call to call.
type Merge struct {
	rd   *Reader
	srcs []mergeSource // every partition, in the order of the ranges
	heap mergeHeap     // the heads of the partitions with a record ready (mergeheap.go)
	// primed: each partition's first chunk was asked for.
	primed bool
	// encoded: the lanes encode the records (NewEncodedMerge); they are
	// handed out by NextEncoded.
	encoded bool
	// spentEnc and spentEnds are the buffers of the chunk whose last
	// record NextEncoded returned last, handed back on the next call.
	spentEnc  []byte
	spentEnds []int32
}

// NewMerge starts reading ranges (sorted by partition), read_committed.
func (c *Cluster) NewMerge(ctx context.Context, m *Metadata, ranges []Range, budget int64) *Merge {
	mg := &Merge{rd: c.NewReader(ctx, m, ranges, budget, true), srcs: make([]mergeSource, len(ranges))}
	for i, rg := range ranges {
		mg.srcs[i] = mergeSource{tp: rg.TP}
	}
	return mg
}

// Reader is the reader the merge takes from: what it waits for, what
// failed, where each partition stands.
func (mg *Merge) Reader() *Reader { return mg.rd }

// Close stops the reader's fetches.
func (mg *Merge) Close() { mg.rd.Close() }

// prime fills the heap: each partition's first chunk.
func (mg *Merge) prime() error {
	if mg.primed {
		return nil
	}
	mg.primed = true
	mg.heap = make(mergeHeap, 0, len(mg.srcs))
	for i := range mg.srcs {
		s := &mg.srcs[i]
		ok, err := mg.refill(s)
		if err != nil {
			return err
		}
		if ok {
			mg.heap.push(headOf(s, i))
		}
	}
	return nil
}

// refill moves s to its next chunk; false when the partition is done.
func (mg *Merge) refill(s *mergeSource) (bool, error) {
	if mg.encoded {
		c, ok, err := mg.rd.take(s.tp)
		if err != nil {
			return false, err
		}
		if !ok {
			s.keys, s.enc, s.ends, s.i = nil, nil, nil, 0
			return false, nil
		}
		s.keys, s.enc, s.ends, s.i = c.keys, c.enc, c.ends, 0
		return true, nil
	}
	for {
		recs, keys, err := mg.rd.Take(s.tp)
		if err != nil {
			return false, err
		}
		if recs == nil {
			s.recs, s.keys, s.i = nil, nil, 0
			return false, nil
		}
		if len(recs) > 0 {
			s.recs, s.keys, s.i = recs, keys, 0
			return true, nil
		}
	}
}

// Next fills dst with the next record in row order (reusing dst's header
// slice); false at the end or on err (a request-level failure or the
// statement's cancellation).
func (mg *Merge) Next(dst *result.Record) (bool, error) {
	if !mg.primed {
		if err := mg.prime(); err != nil {
			return false, err
		}
	}
	if len(mg.heap) == 0 {
		return false, nil
	}
	top := mg.heap[0]
	s := &mg.srcs[top.src]
	rec := s.recs[s.i]
	s.i++
	if s.i < len(s.keys) {
		k := &s.keys[s.i]
		mg.heap[0].ts, mg.heap[0].off = k.Timestamp, k.Offset
		mg.heap.fixTop()
		fillRecord(dst, rec, top.part, top.off, top.ts)
		return true, nil
	}
	// The chunk's last record is copied out before the next chunk is
	// taken: then the chunk is spent, and its key array is reused.
	fillRecord(dst, rec, top.part, top.off, top.ts)
	spentKeys := s.keys
	ok, err := mg.refill(s)
	if err != nil {
		s.i-- // rec was not handed out: the next page starts at it
		return false, err
	}
	mg.rd.Spent(spentKeys)
	if ok {
		mg.heap[0] = headOf(s, int(top.src))
		mg.heap.fixTop()
	} else {
		mg.heap.popTop()
	}
	return true, nil
}

// NextUnread is the offset of tp's first record not handed out, and
// whether tp still has records before its end.
func (mg *Merge) NextUnread(tp TopicPartition) (pos int64, more bool) {
	for i := range mg.srcs {
		if s := &mg.srcs[i]; s.tp == tp && s.i < len(s.keys) {
			return s.keys[s.i].Offset, true
		}
	}
	pos, end, failed := mg.rd.NextUnread(tp)
	return pos, pos < end && !failed
}

// RecordKey is what a tail read remembers of a record in its first pass.
type RecordKey struct{ Timestamp, Offset int64 }

// Keys reads every range in full, partition by partition (no merge), and
// returns each partition's (timestamp, offset) keys in offset order, of
// the records keep accepts; each record is filled into dst for keep. It
// closes the reader when done.
func (mg *Merge) Keys(dst *result.Record, keep func(*result.Record) bool) (map[TopicPartition][]RecordKey, error) {
	defer mg.Close()
	out := make(map[TopicPartition][]RecordKey, len(mg.srcs))
	for _, s := range mg.srcs {
		for {
			recs, keys, err := mg.rd.Take(s.tp)
			if err != nil {
				return nil, err
			}
			if recs == nil {
				break
			}
			for i, rec := range recs {
				k := keys[i]
				if keep != nil {
					fillRecord(dst, rec, s.tp.Partition, k.Offset, k.Timestamp)
					if !keep(dst) {
						continue
					}
				}
				out[s.tp] = append(out[s.tp], k)
			}
			mg.rd.Spent(keys)
		}
	}
	return out, nil
}

// fillRecord copies rec's fields into dst, reusing dst's header slice;
// partition, offset and ts (in ms) are rec's, passed from the merge's
// keys so that only the record's first cache line (key, value, headers)
// is read here.
func fillRecord(dst *result.Record, rec *kgo.Record, partition int32, offset, ts int64) {
	dst.Partition = partition
	dst.Offset = offset
	dst.Timestamp = ts
	dst.Key = rec.Key
	dst.Value = rec.Value
	hs := dst.Headers[:0]
	for _, h := range rec.Headers {
		hs = append(hs, result.Header{Key: h.Key, Value: h.Value})
	}
	dst.Headers = hs
}
