package kafka

import (
	"context"
	"errors"
	"sync"
)

// The partitions' bounds: their earliest and latest offsets, and offsets
// by time, read from each partition's leader. Every statement that needs
// them (CONSUME and SELECT, INSERT ... SELECT's source, SHOW PARTITIONS,
// DESCRIBE TOPIC, RESET GROUP, DELETE RECORDS, a transaction's offsets)
// asks here, so the concurrency, the waiting for a leader and what a
// missing answer becomes are decided once.

// OffsetQuery is one ListOffsets question asked of every partition: At is
// Earliest, Latest, MaxTimestamp or a time in epoch milliseconds; with
// ReadCommitted, Latest is the last stable offset.
type OffsetQuery struct {
	At            int64
	ReadCommitted bool
}

// Offsets is one query's answers in kadm's shape: a request-level error
// (Err), and each partition either answered (Got) or failed (Failed,
// naming the partition, the broker id and its address), never both and
// never neither.
type Offsets struct {
	Got    map[TopicPartition]OffsetAnswer
	Failed map[TopicPartition]*PartitionError
	Err    error
}

// Errors is the partitions' failures, sorted by topic and partition.
func (o Offsets) Errors() []*PartitionError { return SortedPartitionErrors(o.Failed) }

// ErrNoOffsetAnswer is a partition's failure when no answer and no error
// came back for it: an offset is never guessed (read as 0).
var ErrNoOffsetAnswer = errors.New("no answer for this partition")

// OffsetsOptions says how the queries are asked.
type OffsetsOptions struct {
	// WaitLeader waits for a partition whose leader is gone or moving, as
	// a read about to start waits (ListOffsetsWaiting); else such a
	// partition fails after Leaders' retries.
	WaitLeader bool
}

// OffsetsAt asks every query of every partition at once: one ListOffsets
// per leader broker per query, all concurrently (a query per request,
// since a request may name a partition once). It answers one Offsets per
// query, in the order asked.
func (c *Cluster) OffsetsAt(ctx context.Context, m *Metadata, parts []TopicPartition, opt OffsetsOptions, queries ...OffsetQuery) []Offsets {
	list := c.ListOffsets
	if opt.WaitLeader {
		list = c.ListOffsetsWaiting
	}
	out := make([]Offsets, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Go(func() {
			o := &out[i]
			o.Got, o.Failed, o.Err = list(ctx, m, parts, q.At, q.ReadCommitted)
			if o.Err != nil {
				return
			}
			for _, tp := range parts {
				if _, ok := o.Got[tp]; ok || o.Failed[tp] != nil {
					continue
				}
				if o.Failed == nil {
					o.Failed = make(map[TopicPartition]*PartitionError)
				}
				o.Failed[tp] = &PartitionError{API: "ListOffsets", Topic: tp.Topic, Partition: tp.Partition, Broker: -1, Err: ErrNoOffsetAnswer}
			}
		})
	}
	wg.Wait()
	return out
}

// OffsetsOf asks one query of every partition: OffsetsAt with one query.
func (c *Cluster) OffsetsOf(ctx context.Context, m *Metadata, parts []TopicPartition, q OffsetQuery) Offsets {
	return c.OffsetsAt(ctx, m, parts, OffsetsOptions{}, q)[0]
}

// FirstErr is the first of the queries' request-level errors, in the order
// asked; nil when every query was answered.
func FirstErr(offs ...Offsets) error {
	for _, o := range offs {
		if o.Err != nil {
			return o.Err
		}
	}
	return nil
}

// Span is a partition's offsets [Start, End): its earliest offset and its
// latest (the high watermark, or the last stable offset read_committed).
type Span struct{ Start, End int64 }

// SpanOf is a partition's span from its two answers. The earliest can come
// back past the latest when the two were read at once and the log's start
// moved in between (DeleteRecords, retention); the log's end was then at
// least that start, so the span is empty there, never negative.
func SpanOf(earliest, latest OffsetAnswer) Span {
	return Span{earliest.Offset, max(latest.Offset, earliest.Offset)}
}

// Bounds is each partition's span, or its failure (the first of the two
// bounds that failed): a partition is in one of the two maps, never both
// and never neither.
type Bounds struct {
	Spans  map[TopicPartition]Span
	Failed map[TopicPartition]*PartitionError
}

// Errors is the partitions' failures, sorted by topic and partition.
func (b Bounds) Errors() []*PartitionError { return SortedPartitionErrors(b.Failed) }

// BoundsOptions says how the two bounds are asked.
type BoundsOptions struct {
	OffsetsOptions
	// ReadCommitted: the end is the last stable offset, where a
	// read_committed reader stops, not the high watermark.
	ReadCommitted bool
	// LatestAfterEarliest asks the latest only once the earliest has
	// answered, a step of its own, so that Start <= End holds even while
	// the log's start moves (DeleteRecords, retention): what RESET GROUP
	// plans and DELETE RECORDS counts against. Else both are asked at
	// once.
	LatestAfterEarliest bool
}

// Bounds reads each partition's earliest and latest offset from its
// leader: one ListOffsets per leader broker per bound, the two bounds
// concurrently unless opt.LatestAfterEarliest. A request-level error
// (the statement's cancellation, no metadata) is err; a partition that
// failed is in Failed with its broker.
func (c *Cluster) Bounds(ctx context.Context, m *Metadata, parts []TopicPartition, opt BoundsOptions) (Bounds, error) {
	earliest := OffsetQuery{At: Earliest}
	latest := OffsetQuery{At: Latest, ReadCommitted: opt.ReadCommitted}
	var lo, hi Offsets
	if opt.LatestAfterEarliest {
		lo = c.OffsetsAt(ctx, m, parts, opt.OffsetsOptions, earliest)[0]
		if lo.Err != nil {
			return Bounds{}, lo.Err
		}
		hi = c.OffsetsAt(ctx, m, parts, opt.OffsetsOptions, latest)[0]
	} else {
		both := c.OffsetsAt(ctx, m, parts, opt.OffsetsOptions, earliest, latest)
		lo, hi = both[0], both[1]
	}
	if err := FirstErr(lo, hi); err != nil {
		return Bounds{}, err
	}
	b := Bounds{Spans: make(map[TopicPartition]Span, len(parts))}
	for _, tp := range parts {
		pe := lo.Failed[tp]
		if pe == nil {
			pe = hi.Failed[tp]
		}
		if pe != nil {
			if b.Failed == nil {
				b.Failed = make(map[TopicPartition]*PartitionError)
			}
			b.Failed[tp] = pe
			continue
		}
		b.Spans[tp] = SpanOf(lo.Got[tp], hi.Got[tp])
	}
	return b, nil
}
