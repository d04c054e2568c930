package exec

import (
	"math"
	"slices"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/result"
)

// A tail read (FROM NEWEST, FROM TAIL, FOLLOW's backlog): the page is the
// newest matches, found by a backward scan of keys when WHERE filters.

// planTail finds the page of a tail read: the newest `limit` records of the
// merged per-partition windows below the pinned ends, after leaving out the
// newest `skip`. The first pass reads only (timestamp, offset) keys and
// widens a partition's window while it holds fewer than skip+limit records
// (compaction gaps, transaction markers) and older records exist. The page
// is then a contiguous offset run in each partition, which the second pass
// (the row stream) reads and merges again, in the same order.
func (r *consumeResult) planTail(bounds map[kafka.TopicPartition]kafka.Span, ends map[kafka.TopicPartition]int64) error {
	need := r.plan.limit
	if need <= math.MaxInt64-r.plan.skip {
		need += r.plan.skip
	}
	keys := make(map[kafka.TopicPartition][]kafka.RecordKey, len(bounds))
	lows := make(map[kafka.TopicPartition]int64, len(bounds))
	step := map[kafka.TopicPartition]int64{}
	for tp := range bounds {
		lows[tp] = ends[tp]
		step[tp] = need
	}
	if r.plan.skip == 0 {
		// A page that holds every position of every window holds every
		// record: no key scan is needed to cut it.
		var total int64
		for tp, b := range bounds {
			total += ends[tp] - b.Start
		}
		if total <= r.plan.limit {
			r.cuts = make(map[kafka.TopicPartition]int64, len(bounds))
			for tp, b := range bounds {
				r.cuts[tp] = b.Start
				if b.Start < ends[tp] {
					r.mg.add(tp, b.Start, ends[tp])
				}
			}
			return nil
		}
	}
	// With WHERE, the key scan decodes (WHERE needs the decoded values) and
	// counts the records that did not decode; the page is read from what
	// it read. Without WHERE it decodes nothing and the page counts.
	defer func() {
		if r.q == nil || r.q.where == nil {
			return
		}
		for tp := range bounds {
			if lows[tp] < ends[tp] {
				if r.dec.counted == nil {
					r.dec.counted = map[int32]int64{}
				}
				r.dec.counted[tp.Partition] = ends[tp]
			}
		}
	}()
	for {
		scan := &merger{ctx: r.mg.ctx, cl: r.mg.cl, m: r.mg.m, budget: r.mg.budget, live: r.mg.live}
		widened := false
		for tp, b := range bounds {
			if int64(len(keys[tp])) >= need || lows[tp] <= b.Start {
				continue
			}
			lo := max(b.Start, lows[tp]-step[tp])
			scan.add(tp, lo, lows[tp])
			lows[tp] = lo
			if step[tp] < math.MaxInt64/2 {
				step[tp] *= 2
			}
			widened = true
		}
		if !widened {
			break
		}
		older, err := scan.keys(&r.rec, r.matches())
		if err != nil {
			return err
		}
		missing := scan.allMissing()
		r.mg.missing = append(r.mg.missing, missing...)
		for _, e := range missing {
			if pe, ok := e.(*kafka.PartitionError); ok {
				delete(bounds, kafka.TopicPartition{Topic: pe.Topic, Partition: pe.Partition})
			}
		}
		for tp, ks := range older {
			keys[tp] = append(ks, keys[tp]...)
		}
	}
	// Merge the keys in row order, then cut the page from the end.
	tps, order := orderKeys(keys)
	hi := max(int64(len(order))-r.plan.skip, 0)
	lo := max(hi-r.plan.limit, 0)
	// The next, older page ends, in each partition, where this page (and
	// what SKIP left out after it) begins: pages are cut by position, so
	// they neither overlap nor skip whatever the timestamps do.
	// A partition with no key on this page (or in what SKIP left out)
	// ends its next page after its newest older match, and one with no
	// match at all where the scan stopped: the window scanned holds no
	// match, so reading it again would only offer empty pages.
	r.cuts = make(map[kafka.TopicPartition]int64, len(bounds))
	for tp := range bounds {
		r.cuts[tp] = lows[tp]
	}
	for _, tp := range tps {
		if ks := keys[tp]; len(ks) > 0 {
			r.cuts[tp] = ks[len(ks)-1].Offset + 1
		}
	}
	onPage := map[kafka.TopicPartition]bool{}
	for _, rf := range order[lo:] {
		if !onPage[rf.TP] {
			onPage[rf.TP] = true
			r.cuts[rf.TP] = rf.Key.Offset
		}
		r.cuts[rf.TP] = min(r.cuts[rf.TP], rf.Key.Offset)
	}
	for tp, b := range bounds {
		if r.cuts[tp] > b.Start {
			r.olderExist = true
		}
	}
	first := map[kafka.TopicPartition]int64{}
	last := map[kafka.TopicPartition]int64{}
	for _, rf := range order[lo:hi] {
		if _, ok := first[rf.TP]; !ok {
			first[rf.TP] = rf.Key.Offset
		}
		last[rf.TP] = rf.Key.Offset
	}
	for _, tp := range tps {
		if f, ok := first[tp]; ok {
			r.mg.add(tp, f, last[tp]+1)
		}
	}
	return nil
}

// orderKeys merges each partition's keys into row order, as the read
// orders records (kafka.OrderKeys, the merge's own heap). tps is the
// partitions, sorted.
func orderKeys(keys map[kafka.TopicPartition][]kafka.RecordKey) (tps []kafka.TopicPartition, order []kafka.KeyRef) {
	tps = make([]kafka.TopicPartition, 0, len(keys))
	for tp := range keys {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b kafka.TopicPartition) int { return int(a.Partition) - int(b.Partition) })
	return tps, kafka.OrderKeys(keys)
}

// matches reports whether rec passes WHERE (a tail read's key scan keeps
// only the records the page will show); nil when every record does.
func (r *consumeResult) matches() func(*result.Record) bool {
	if r.q == nil || r.q.where == nil {
		return nil
	}
	return func(rec *result.Record) bool {
		r.dec.decode(rec)
		r.q.comp.SetRecord(rec)
		return r.q.where.True()
	}
}
