package exec

import (
	"math"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// The bounds of a read: each partition's [start, end), resolved by the
// ListOffsets steps the plan lists (consumePlan.boundSteps), in its order,
// each asked through kafka's one bounds helper (kafka/bounds.go).

// resolveBounds runs the plan's ListOffsets steps: both ends, WHERE's
// offset and time bounds, and, for FROM TIMESTAMP or AGO, each partition's
// offset at that time (fromTime; -1 where no record is at or after it).
// A partition that fails a step is reported missing and dropped.
func (r *consumeResult) resolveBounds(s *Session) (bounds map[kafka.TopicPartition]kafka.Span, fromTime map[kafka.TopicPartition]int64, err error) {
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
						b.Start = b.End
					} else {
						b.Start = max(b.Start, min(o, b.End))
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
					b.End = max(b.Start, min(b.End, o))
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
func (r *consumeResult) byTime(s *Session, bounds map[kafka.TopicPartition]kafka.Span, ms int64, wait bool) (map[kafka.TopicPartition]int64, error) {
	parts := make([]kafka.TopicPartition, 0, len(bounds))
	for tp := range bounds {
		parts = append(parts, tp)
	}
	offs := s.cl.OffsetsAt(r.mg.ctx, r.mg.m, parts, kafka.OffsetsOptions{WaitLeader: wait}, kafka.OffsetQuery{At: ms, ReadCommitted: true})[0]
	if offs.Err != nil {
		return nil, offs.Err
	}
	for _, pe := range offs.Errors() {
		r.mg.missing = append(r.mg.missing, pe)
		delete(bounds, kafka.TopicPartition{Topic: pe.Topic, Partition: pe.Partition})
	}
	out := make(map[kafka.TopicPartition]int64, len(offs.Got))
	for tp, a := range offs.Got {
		out[tp] = a.Offset
	}
	return out, nil
}

// narrowOffsets narrows each partition's [start, end) by WHERE's offset
// bounds.
func (pd *pushdown) narrowOffsets(bounds map[kafka.TopicPartition]kafka.Span) {
	for tp, b := range bounds {
		if pd.minOffset != math.MinInt64 {
			b.Start = max(b.Start, min(pd.minOffset, b.End))
		}
		if pd.maxOffset != math.MaxInt64 {
			b.End = max(b.Start, min(b.End, pd.maxOffset))
		}
		bounds[tp] = b
	}
}

// forwardStarts is where each partition starts for a forward read, in
// its bounds; fromTime is the FROM TIMESTAMP / AGO step's answer.
func forwardStarts(from *lang.Start, bounds map[kafka.TopicPartition]kafka.Span, fromTime map[kafka.TopicPartition]int64) map[kafka.TopicPartition]int64 {
	starts := make(map[kafka.TopicPartition]int64, len(bounds))
	clamp := func(tp kafka.TopicPartition, off int64) int64 {
		b := bounds[tp]
		return max(b.Start, min(b.End, off))
	}
	switch from.Kind {
	case lang.FromOldest:
		for tp, b := range bounds {
			starts[tp] = b.Start
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
				starts[tp] = bounds[tp].End
			} else {
				starts[tp] = clamp(tp, o)
			}
		}
	}
	return starts
}

// bounds reads each partition's earliest offset and its end, the last
// stable offset (where a read_committed reader stops): both at once, one
// request per leader each, a leader that is gone waited for, as the read
// itself waits. A partition that failed is reported missing.
func (mg *merger) bounds(parts []kafka.TopicPartition) (map[kafka.TopicPartition]kafka.Span, error) {
	b, err := mg.cl.Bounds(mg.ctx, mg.m, parts, kafka.BoundsOptions{OffsetsOptions: kafka.OffsetsOptions{WaitLeader: true}, ReadCommitted: true})
	if err != nil {
		return nil, err
	}
	for _, pe := range b.Errors() {
		mg.missing = append(mg.missing, pe)
	}
	return b.Spans, nil
}
