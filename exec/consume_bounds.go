package exec

import (
	"cmp"
	"errors"
	"math"
	"sync"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// The bounds of a read: each partition's [start, end), resolved by the
// ListOffsets steps the plan lists (consumePlan.boundSteps), in its order.

type span struct{ start, end int64 }

// resolveBounds runs the plan's ListOffsets steps: both ends, WHERE's
// offset and time bounds, and, for FROM TIMESTAMP or AGO, each partition's
// offset at that time (fromTime; -1 where no record is at or after it).
// A partition that fails a step is reported missing and dropped.
func (r *consumeResult) resolveBounds(s *Session) (bounds map[kafka.TopicPartition]span, fromTime map[kafka.TopicPartition]int64, err error) {
	pl := r.plan
	for _, step := range pl.boundSteps {
		switch step.kind {
		case boundEnds:
			if bounds, err = r.mg.bounds(pl.parts); err != nil {
				return nil, nil, err
			}
			pl.pd.narrowOffsets(bounds)
		case boundPushFrom:
			offs, err := r.byTime(s, bounds, step.ms, false)
			if err != nil {
				return nil, nil, err
			}
			for tp, b := range bounds {
				if o, ok := offs[tp]; ok {
					if o < 0 {
						b.start = b.end
					} else {
						b.start = max(b.start, min(o, b.end))
					}
					bounds[tp] = b
				}
			}
		case boundPushTo:
			offs, err := r.byTime(s, bounds, step.ms, false)
			if err != nil {
				return nil, nil, err
			}
			for tp, b := range bounds {
				if o, ok := offs[tp]; ok && o >= 0 {
					b.end = max(b.start, min(b.end, o))
					bounds[tp] = b
				}
			}
		case boundFromTime:
			// A leader that is gone is waited for, as the read itself waits.
			if fromTime, err = r.byTime(s, bounds, step.ms, true); err != nil {
				return nil, nil, err
			}
		}
	}
	return bounds, fromTime, nil
}

// byTime is each bounded partition's first offset at or after ms (-1:
// none); a partition that fails is reported missing and dropped from
// bounds.
func (r *consumeResult) byTime(s *Session, bounds map[kafka.TopicPartition]span, ms int64, wait bool) (map[kafka.TopicPartition]int64, error) {
	parts := make([]kafka.TopicPartition, 0, len(bounds))
	for tp := range bounds {
		parts = append(parts, tp)
	}
	list := s.cl.ListOffsets
	if wait {
		list = s.cl.ListOffsetsWaiting
	}
	got, failed, err := list(r.mg.ctx, r.mg.m, parts, ms, true)
	if err != nil {
		return nil, err
	}
	for tp, pe := range failed {
		r.mg.missing = append(r.mg.missing, pe)
		delete(bounds, tp)
	}
	out := make(map[kafka.TopicPartition]int64, len(got))
	for tp, a := range got {
		out[tp] = a.Offset
	}
	return out, nil
}

// narrowOffsets narrows each partition's [start, end) by WHERE's offset
// bounds.
func (pd *pushdown) narrowOffsets(bounds map[kafka.TopicPartition]span) {
	for tp, b := range bounds {
		if pd.minOffset != math.MinInt64 {
			b.start = max(b.start, min(pd.minOffset, b.end))
		}
		if pd.maxOffset != math.MaxInt64 {
			b.end = max(b.start, min(b.end, pd.maxOffset))
		}
		bounds[tp] = b
	}
}

// forwardStarts is where each partition starts for a forward read, in
// its bounds; fromTime is the FROM TIMESTAMP / AGO step's answer.
func forwardStarts(from *lang.Start, bounds map[kafka.TopicPartition]span, fromTime map[kafka.TopicPartition]int64) map[kafka.TopicPartition]int64 {
	starts := make(map[kafka.TopicPartition]int64, len(bounds))
	clamp := func(tp kafka.TopicPartition, off int64) int64 {
		b := bounds[tp]
		return max(b.start, min(b.end, off))
	}
	switch from.Kind {
	case lang.FromOldest:
		for tp, b := range bounds {
			starts[tp] = b.start
		}
	case lang.FromOffset:
		for tp := range bounds {
			starts[tp] = clamp(tp, from.Offset)
		}
	case lang.FromAnchor:
		for tp := range bounds {
			starts[tp] = clamp(tp, tailOffset(from, tp.Partition))
		}
	case lang.FromTimestamp, lang.FromAgo:
		for tp, o := range fromTime {
			if o < 0 { // no record at or after the time
				starts[tp] = bounds[tp].end
			} else {
				starts[tp] = clamp(tp, o)
			}
		}
	}
	return starts
}

// bounds reads each partition's earliest offset and its end: the last
// stable offset, which is where a read_committed reader stops.
func (mg *merger) bounds(parts []kafka.TopicPartition) (map[kafka.TopicPartition]span, error) {
	// Both bounds at once: one step of one request per leader each.
	var lo, hi map[kafka.TopicPartition]kafka.OffsetAnswer
	var lofail, hifail map[kafka.TopicPartition]*kafka.PartitionError
	var loErr, hiErr error
	var wg sync.WaitGroup
	// A leader that is gone is waited for, as the read itself waits.
	wg.Go(func() { lo, lofail, loErr = mg.cl.ListOffsetsWaiting(mg.ctx, mg.m, parts, kafka.Earliest, true) })
	hi, hifail, hiErr = mg.cl.ListOffsetsWaiting(mg.ctx, mg.m, parts, kafka.Latest, true)
	wg.Wait()
	if err := cmp.Or(loErr, hiErr); err != nil {
		return nil, err
	}
	out := make(map[kafka.TopicPartition]span, len(parts))
	for _, tp := range parts {
		if pe := lofail[tp]; pe != nil {
			mg.missing = append(mg.missing, pe)
			continue
		}
		if pe := hifail[tp]; pe != nil {
			mg.missing = append(mg.missing, pe)
			continue
		}
		l, lok := lo[tp]
		h, hok := hi[tp]
		if !lok || !hok { // never read a missing answer as offset 0
			mg.missing = append(mg.missing, &kafka.PartitionError{API: "ListOffsets", Topic: tp.Topic, Partition: tp.Partition, Broker: -1,
				Err: errors.New("no answer for this partition")})
			continue
		}
		out[tp] = span{l.Offset, h.Offset}
	}
	return out, nil
}
