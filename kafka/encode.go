package kafka

import (
	"context"
	"slices"

	"github.com/kql-dev/kql/result"
)

// RecordEncoder appends one record's output to buf. Each lane of an
// encoding reader has its own, made by the factory NewEncodedMerge was
// given, so an encoder may keep state (a timestamp cache, scratch buffers)
// without locks.
type RecordEncoder = result.RecordEncoder

// The encoding read. A CONSUME whose records go to the output as they are
// (no WHERE, no schema decoding, no SKIP) encodes each record in the lane
// that fetched it, right after decoding, while the record and its bytes
// are still in the CPU's cache, and in parallel with the consumer: the
// merge then only picks the next record in (timestamp, partition, offset)
// order and copies its encoded bytes. Profiled on kfake (1M x 100 B, 32
// partitions), the consumer's goroutine spent two thirds of its time in
// encoding and in the cache miss of reading each record's fields once
// the merge reached it; the encoded records also drop the decoded
// kgo.Records and the response buffers they point into at once, so the
// budget holds the output bytes instead.

// NewEncodedMerge is NewMerge whose lanes encode every record with an
// encoder from newEncoder; the records are handed out by NextEncoded.
func (c *Cluster) NewEncodedMerge(ctx context.Context, m *Metadata, ranges []Range, budget int64, newEncoder func() RecordEncoder) *Merge {
	mg := &Merge{srcs: make([]mergeSource, len(ranges)), encoded: true}
	for i, rg := range ranges {
		mg.srcs[i] = mergeSource{tp: rg.TP}
	}
	mg.rd = c.newReader(ctx, m, ranges, budget, true, newEncoder)
	return mg
}

// laneEncoder is one lane's encoder and the ends of its partitions' ranges;
// nil (no encoding) when the reader does not encode.
type laneEncoder struct {
	enc    RecordEncoder
	limits map[TopicPartition]int64 // each partition's end
	rec    result.Record            // the record being encoded, reused
	// scratch is what the lane encodes a chunk into, reused: as large
	// as its largest chunk's output, but kept between Fetches only up to
	// keep. A batch larger than a partition's ask still comes whole
	// (KIP-74), and a lane that kept its output's size would hold, per
	// broker and for the rest of the read, memory the budget does not
	// count: a 1 MB batch compressed 4x is 4 MiB of output.
	scratch []byte
	ends    []int32
	keep    int      // twice a partition's share of the budget, at least 64 KiB
	pool    *encPool // where a chunk's buffers come from
	recs    *recPool // the lane's record slabs (recpool.go)
}

func (r *Reader) laneEncoder(ps []*readPart) *laneEncoder {
	if r.newEncoder == nil {
		return nil
	}
	le := &laneEncoder{enc: r.newEncoder(), limits: make(map[TopicPartition]int64, len(ps)), pool: r.encPool}
	for _, p := range ps {
		le.limits[p.tp] = p.end // fixed for the reader's life
	}
	r.mu.Lock()
	parts := max(len(r.parts), 1)
	lanes := max(r.lanes, 1)
	r.mu.Unlock()
	// A lane's slabs are one answer's records: bounded by its share of
	// a quarter of the budget, as the chunk buffers' pool is.
	le.recs = newRecPool(max(r.budget/4/int64(lanes), 256<<10))
	// askBytes asks for budget/(2*parts) decoded per partition: a chunk's
	// output is about that, and twice it leaves room for the encoding.
	le.keep = int(max(r.budget/int64(parts), 64<<10))
	return le
}

// encodeAll encodes the records of every answer (up to its partition's
// end) into the answer's Enc and Ends and drops the records.
func (le *laneEncoder) encodeAll(got map[TopicPartition]FetchAnswer) {
	if le == nil {
		return
	}
	// Every record decoded was encoded and dropped: the Fetch's record
	// slabs go back to the lane's pool.
	dropped := true
	defer func() { le.recs.reclaim(dropped) }()
	for tp, a := range got {
		end, ok := le.limits[tp]
		if !ok || len(a.Records) == 0 {
			dropped = dropped && len(a.Records) == 0
			continue
		}
		n := 0
		for n < len(a.Records) && a.Records[n].Offset < end {
			n++
		}
		// Encoded into the lane's scratch buffer, then copied into one
		// of the exact size: no buffer grows (and is copied) record by
		// record, and the budget counts what is held.
		buf := le.scratch[:0]
		le.ends = slices.Grow(le.ends[:0], n)[:n]
		a.decoded = decodedBytes(a.Records)
		for i, rec := range a.Records[:n] {
			k := a.Keys[i]
			fillRecord(&le.rec, rec, tp.Partition, k.Offset, k.Timestamp)
			buf = le.enc(buf, &le.rec)
			le.ends[i] = int32(len(buf))
		}
		enc, ends := le.pool.buffers(len(buf), n)
		copy(enc, buf)
		copy(ends, le.ends)
		le.scratch = buf
		if cap(buf) > le.keep {
			le.scratch = nil // an oversized batch's: not held until the next one
		}
		if 4*cap(le.ends) > le.keep {
			le.ends = nil
		}
		hs := le.rec.Headers[:cap(le.rec.Headers)]
		clear(hs) // nothing of the response stays reachable
		le.rec = result.Record{Headers: hs[:0]}
		a.Records, a.Keys, a.Enc, a.Ends = nil, a.Keys[:n], enc, ends // ends: never nil, even empty
		got[tp] = a
	}
}

// applyEncoded is apply for an encoded answer: the records were cut at
// the end already. The caller holds r.mu.
func (r *Reader) applyEncoded(p *readPart, a FetchAnswer, first bool) {
	if n := len(a.Ends); n > 0 {
		bytes := int64(cap(a.Enc)) + int64(cap(a.Ends))*4 + int64(len(a.Keys))*16
		p.queue = append(p.queue, chunk{keys: a.Keys, enc: a.Enc, ends: a.Ends, bytes: bytes})
		r.buffered += bytes
		if a.WireBytes > 0 {
			// The asks are sized by what an answer costs while it is
			// decoded, before its records are encoded and dropped, when
			// that is more than what is kept.
			held := max(bytes, a.decoded)
			r.expansion = 0.75*r.expansion + 0.25*max(float64(held)/float64(a.WireBytes), 1)
		}
	}
	a.Records, a.Keys, a.Enc, a.Ends = nil, nil, nil, nil
	r.apply(p, a, first) // positions, stalls and decoding errors as for any answer
}

// NextEncoded returns the next record's encoded bytes in row order, valid
// until the next call; false at the end or on err, as Next. Only for a
// merge from NewEncodedMerge.
func (mg *Merge) NextEncoded() ([]byte, bool, error) {
	if mg.spentEnc != nil || mg.spentEnds != nil {
		// The writer is done with the bytes the last call returned,
		// the previous chunk's last record.
		mg.rd.encPool.put(mg.spentEnc, mg.spentEnds)
		mg.spentEnc, mg.spentEnds = nil, nil
	}
	if !mg.primed {
		if err := mg.prime(); err != nil {
			return nil, false, err
		}
	}
	if len(mg.heap) == 0 {
		return nil, false, nil
	}
	top := mg.heap[0]
	s := &mg.srcs[top.src]
	from := int32(0)
	if s.i > 0 {
		from = s.ends[s.i-1]
	}
	out := s.enc[from:s.ends[s.i]]
	s.i++
	if s.i < len(s.keys) {
		k := &s.keys[s.i]
		mg.heap[0].ts, mg.heap[0].off = k.Timestamp, k.Offset
		mg.heap.fixTop()
		return out, true, nil
	}
	// The chunk's last record: its key array goes back to the pool now,
	// its buffers on the next call, once out was written.
	spentKeys, spentEnc, spentEnds := s.keys, s.enc, s.ends
	ok, err := mg.refill(s)
	if err != nil {
		s.i-- // out was not handed out: the next page starts at it
		return nil, false, err
	}
	mg.rd.Spent(spentKeys)
	mg.spentEnc, mg.spentEnds = spentEnc, spentEnds
	if ok {
		mg.heap[0] = headOf(s, int(top.src))
		mg.heap.fixTop()
	} else {
		mg.heap.popTop()
	}
	return out, true, nil
}

// AppendEncoded appends the next records' encoded bytes to dst in row
// order, as NextEncoded hands them out one by one, and returns how many:
// at most max, until dst holds size bytes or more. It waits for a Fetch
// only for its first record: a chunk's last record, whose partition's next
// chunk has not come yet, ends a call that appended records, so the caller
// writes them out before the next call waits. more is false at the end or
// on err (the records appended before stand; the one whose refill failed
// is not appended, and the next page starts at it). A writer pays one
// call per run of records instead of one per record, and a chunk goes back
// to the pool as soon as its last record is copied out.
func (mg *Merge) AppendEncoded(dst []byte, max, size int) (out []byte, n int, more bool, err error) {
	if mg.spentEnc != nil || mg.spentEnds != nil {
		mg.rd.encPool.put(mg.spentEnc, mg.spentEnds)
		mg.spentEnc, mg.spentEnds = nil, nil
	}
	if !mg.primed {
		if err := mg.prime(); err != nil {
			return dst, 0, false, err
		}
	}
	for n < max {
		if len(mg.heap) == 0 {
			return dst, n, false, nil
		}
		top := mg.heap[0]
		s := &mg.srcs[top.src]
		from := int32(0)
		if s.i > 0 {
			from = s.ends[s.i-1]
		}
		if s.i+1 < len(s.keys) {
			dst = append(dst, s.enc[from:s.ends[s.i]]...)
			s.i++
			n++
			k := &s.keys[s.i]
			mg.heap[0].ts, mg.heap[0].off = k.Timestamp, k.Offset
			mg.heap.fixTop()
		} else {
			// The chunk's last record: the partition's next chunk is
			// taken with it, which may wait for a Fetch.
			if n > 0 && !mg.rd.ready(s.tp) {
				return dst, n, true, nil
			}
			mark := len(dst)
			dst = append(dst, s.enc[from:s.ends[s.i]]...)
			s.i++
			spentKeys, spentEnc, spentEnds := s.keys, s.enc, s.ends
			ok, err := mg.refill(s)
			if err != nil {
				s.i-- // not handed out: the next page starts at it
				return dst[:mark], n, false, err
			}
			n++
			mg.rd.Spent(spentKeys)
			mg.rd.encPool.put(spentEnc, spentEnds) // copied out
			if ok {
				mg.heap[0] = headOf(s, int(top.src))
				mg.heap.fixTop()
			} else {
				mg.heap.popTop()
			}
		}
		if len(dst) >= size {
			break
		}
	}
	return dst, n, true, nil
}

// slabs is the lane's record slab pool; nil when the reader does not
// encode.
func (le *laneEncoder) slabs() *recPool {
	if le == nil {
		return nil
	}
	return le.recs
}
