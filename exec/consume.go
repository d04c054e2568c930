package exec

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// DefaultLimit is CONSUME's LIMIT when none is written.
const DefaultLimit = 100

var consumeCols = result.RecordColumns

// consume reads partitions directly from their leaders: it never joins or
// creates a consumer group and never commits. Each partition's end (its last
// stable offset, read_committed) is captured once at the start, and a
// partition is done when its position reaches that end. Positions, not
// records, are counted, so a transaction marker, an aborted batch or a
// compaction gap at the end never makes it wait for records that will not
// come.
//
// Rows come in (timestamp, partition, offset) order: a k-way merge of the
// partitions, each read in offset order.
func (s *Session) consume(ctx context.Context, st *lang.Consume) (result.Result, error) {
	// Local schemas load first: a message that does not exist or a file
	// that does not parse fails the statement before a request is sent.
	dec := s.newRecordDecoder(ctx)
	if err := s.localDecoders(dec, st); err != nil {
		return nil, err
	}
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	pl, keyWarning, err := s.planRecords(ctx, st, m.Topics[st.Topic])
	if err != nil {
		return nil, err
	}
	q, err := compileRecordQuery(st, pl.now)
	if err != nil {
		return nil, err
	}
	r := &consumeResult{plan: pl, q: q, dec: dec, stats: &result.Stats{}}
	if keyWarning != "" {
		r.warnings = append(r.warnings, keyWarning)
	}
	r.stats.Scanning()
	r.stats.WarningsFrom(r.warningsNow)
	r.stats.SetNextPage(func() (any, bool) { return r.NextPage() })
	r.stats.WaitingFrom(r.waiting)
	r.mg = &merger{ctx: ctx, cl: s.cl, m: m, budget: readBudget(ctx, s.ReadBudget), live: &r.live}

	bounds, fromTime, err := r.resolveBounds(s)
	if err != nil {
		return nil, err
	}
	r.followFrom = make(map[kafka.TopicPartition]int64, len(bounds))
	if pl.tail {
		ends := make(map[kafka.TopicPartition]int64, len(bounds))
		for tp, b := range bounds {
			ends[tp] = b.End
			if pl.from.Kind == lang.FromTail {
				ends[tp] = max(b.Start, min(b.End, tailOffset(pl.from, tp.Partition)))
			}
		}
		if err := r.planTail(bounds, ends); err != nil {
			return nil, err
		}
		for tp := range bounds {
			r.followFrom[tp] = ends[tp]
		}
	} else {
		starts := forwardStarts(pl.from, bounds, fromTime)
		for tp, b := range bounds {
			r.mg.add(tp, starts[tp], b.End)
			r.followFrom[tp] = b.End
		}
		r.toSkip = r.plan.skip
		r.onSkip = skippedReporter(ctx)
		reportRangeStarts(ctx, r.plan.parts, r.mg.ranges)
	}
	res, err := wrapQuery(pl.stmt, r)
	if err != nil || !st.Follow {
		return res, err
	}
	return newFollowResult(ctx, s, pl.stmt, r, res, m), nil
}

// planRecords plans st over topic t: the registry (or a local schema)
// first encodes a PARTITION FOR KEY key as its producers wrote it; the
// rest is planConsume, with no I/O. warn is what the key's lookup could
// not ask.
func (s *Session) planRecords(ctx context.Context, st *lang.Consume, t *kafka.Topic) (pl *consumePlan, warn string, err error) {
	in := planInput{topic: t, now: s.Now()}
	if st.PartitionForKey != nil {
		if len(t.Partitions) == 0 {
			return nil, "", fmt.Errorf("topic %q has no partitions", st.Topic)
		}
		in.keyBytes, in.keyHow, warn, err = s.consumePartitionKey(ctx, st, st.PartitionForKey)
		if err != nil {
			return nil, "", err
		}
	}
	pl, err = planConsume(st, in)
	return pl, warn, err
}

// DefaultFollowBacklog is how many records FOLLOW shows before the new
// ones when no LIMIT is written, as tail -f does.
const DefaultFollowBacklog = 10

// consumeResult streams the rows of a CONSUME.
type consumeResult struct {
	// plan is what the read does (partitions, start, LIMIT and SKIP as the
	// scan counts them and as the statement returns them): the one source
	// of truth, read, never copied.
	plan       *consumePlan
	mg         *merger
	toSkip     int64                               // forward reads: rows still to skip
	onSkip     func(partition int32, offset int64) // nil, or told of each record SKIP leaves out (see withSkipped)
	emitted    int64
	err        error
	done       bool
	cuts       map[kafka.TopicPartition]int64 // tail reads: where the next, older page ends
	olderExist bool
	rec        result.Record                  // handed out by NextRecord, reused
	q          *recordQuery                   // WHERE, and the compiler the operators above share
	followFrom map[kafka.TopicPartition]int64 // where this read ends in each partition: FOLLOW goes on from there
	stats      *result.Stats                  // records read (the progress line), warnings, the next page
	dec        *recordDecoder                 // schema registry decoding (and the wire-format ids)
	warnings   []string                       // said before any record was read (PARTITION FOR KEY)
	live       atomic.Pointer[kafka.Reader]   // the reader fetching now, for what it waits for (Stats.Waiting)
}

// waiting is what the read waits for now, in the result package's terms
// (the progress line); nil when it waits for none.
func (r *consumeResult) waiting() []result.Waiting {
	rd := r.live.Load()
	if rd == nil {
		return nil
	}
	var out []result.Waiting
	for _, w := range rd.Waiting() {
		out = append(out, result.Waiting{Partition: w.TP.String(), Broker: w.Broker, Addr: w.Addr, Since: w.Since})
	}
	return out
}

func (r *consumeResult) Columns() []result.Column { return consumeCols }

func (r *consumeResult) Next() (result.Row, bool) {
	rec, ok := r.NextRecord()
	if !ok {
		return nil, false
	}
	// A row outlives the next call (callers keep rows); the record's
	// header slice is reused by the next record, so the row gets its own.
	row := rec.Row()
	if len(rec.Headers) > 0 {
		row[5] = slices.Clone(rec.Headers)
	}
	// A key or value the registry decoded is in the decoder's buffer,
	// reused too (a decoded string is plain text there, not JSON).
	if (rec.KeySchema.HasID || r.dec.key != nil) && rec.Key != nil {
		row[3] = cloneCell(row[3])
	}
	if (rec.ValueSchema.HasID || r.dec.value != nil) && rec.Value != nil {
		row[4] = cloneCell(row[4])
	}
	return row, true
}

// cloneCell copies a key or value cell, keeping its type.
func cloneCell(v any) any {
	switch x := v.(type) {
	case result.JSON:
		return result.JSON(slices.Clone(x))
	case []byte:
		return slices.Clone(x)
	}
	return v
}

// NextRecord is the record path: the next record in a Record reused from
// call to call, with nothing allocated per record.
func (r *consumeResult) NextRecord() (*result.Record, bool) {
	if r.done {
		return nil, false
	}
	for r.emitted < r.plan.limit {
		ok, err := r.mg.next(&r.rec)
		if ok {
			r.stats.AddScanned(1)
		}
		if err != nil {
			r.finish()
			r.err = r.mg.cutOff(fmt.Sprintf("CONSUME %q (some partitions could not be read)", r.plan.stmt.Topic), err)
			return nil, false
		}
		if !ok {
			break
		}
		r.dec.decode(&r.rec)
		if r.q != nil {
			r.q.comp.SetRecord(&r.rec)
			if r.q.where != nil {
				keep := r.q.where.True()
				if r.evalFailed() {
					return nil, false
				}
				if !keep {
					continue
				}
			}
		}
		if r.toSkip > 0 {
			r.toSkip--
			if r.onSkip != nil {
				r.onSkip(r.rec.Partition, r.rec.Offset)
			}
			continue
		}
		r.emitted++
		return &r.rec, true
	}
	r.endRead()
	return nil, false
}

// endRead ends a read that got to its end or its LIMIT: what could not be
// read makes the result partial.
func (r *consumeResult) endRead() {
	if r.done {
		return
	}
	r.finish()
	if missing := r.mg.allMissing(); len(missing) > 0 {
		r.err = &result.PartialError{What: fmt.Sprintf("CONSUME %q (some partitions could not be read)", r.plan.stmt.Topic), Missing: missing}
	}
}

// finish ends the read: no fetch outlives the rows the statement returns.
func (r *consumeResult) finish() {
	r.done = true
	r.mg.close()
}

func (r *consumeResult) Err() error { return r.err }

func (r *consumeResult) Stats() *result.Stats { return r.stats }

// evalFailed reports whether an expression of the statement met an error
// (an integer overflow) on the current record; the read then ends with
// it, for the NULL the expression returned is not its answer.
func (r *consumeResult) evalFailed() bool {
	if r.q == nil {
		return false
	}
	err := r.q.comp.Err()
	if err == nil {
		return false
	}
	if r.err == nil {
		r.finish()
		r.err = err
	}
	return true
}

// warningsNow is the one warning of values WHERE or the SELECT list could
// not compare or combine, naming the first record where it happened, after
// what the scan said before it read (PARTITION FOR KEY) and the values that
// did not decode.
func (r *consumeResult) warningsNow() []string {
	out := append(append([]string(nil), r.warnings...), r.dec.warnings()...)
	if r.q == nil {
		return out
	}
	if w := r.q.comp.Warnings.String(); w != "" {
		out = append(out, w)
	}
	return out
}
func (r *consumeResult) Close() { r.finish() }
