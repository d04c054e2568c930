package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// FOLLOW: after the statement's normal result (the backlog: the last LIMIT
// records, or everything from a forward start), the read goes on where the
// backlog ended in each partition, with no end, and hands out matching
// records as they are written, in the order they arrive. It ends when the
// statement's context does (Ctrl-C, --timeout) or the output is closed;
// that end is the normal one, not an error.

// followNewPartitions is how often FOLLOW looks for partitions added to the
// topic.
const followNewPartitions = 5 * time.Second

// followWait bounds one wait for records, so new partitions are looked for
// even when nothing arrives.
const followWait = 500 * time.Millisecond

type followResult struct {
	ctx     context.Context
	s       *Session
	st      *lang.Consume
	scan    *consumeResult
	backlog result.Result
	proj    *eval.Projection // nil: the six record columns
	m       *kafka.Metadata

	stats      *result.Stats // the backlog's: FOLLOW turns it live and adds its own warning
	primed     bool
	pendingRow result.Row     // the next backlog row, read ahead
	pendingRec *result.Record // the next backlog record, read ahead (a copy)
	out        result.Record  // what NextRecord hands out of the backlog
	stream     *kafka.FollowStream
	rd         *kafka.Reader // stream's reader
	rec        result.Record
	lookedAt   time.Time
	err        error
	done       bool
	warned     error // the last retried failure already reported
}

// newFollowResult offers the record path (NextRecord) only when the
// backlog has it: a SELECT list that names the six record columns has the
// record columns too, but its backlog hands out rows, not records.
func newFollowResult(ctx context.Context, s *Session, st *lang.Consume, scan *consumeResult, backlog result.Result, m *kafka.Metadata) result.Result {
	f := &followResult{ctx: ctx, s: s, st: st, scan: scan, backlog: backlog, m: m, stats: backlog.Stats()}
	f.stats.SetNextPage(nil) // no page ends a FOLLOW
	f.stats.WarningsFrom(func() []string {
		if f.warned == nil {
			return nil
		}
		return []string{fmt.Sprintf("FOLLOW asked again after a failure: %v", f.warned)}
	})
	// A FOLLOW may run for hours: what does not decode is said when it
	// first happens, not only in the summary at Ctrl-C.
	scan.dec.live = s.OnWarning
	if p, ok := backlog.(*projectResult); ok {
		f.proj = p.proj
	}
	if _, ok := backlog.(result.RecordStream); ok {
		return followRecords{f}
	}
	return f
}

// followRecords is FOLLOW over the scan itself: the six record columns,
// with the record path.
type followRecords struct{ *followResult }

func (f *followResult) Columns() []result.Column { return f.backlog.Columns() }

func (f *followResult) Stats() *result.Stats { return f.stats }

// The backlog is read one row ahead, so that the moment it ends (and the
// Stats turn live) is known before a caller waits for the first new
// record: a table prints the backlog at once instead of holding it until
// something is written.

func (f *followResult) Next() (result.Row, bool) {
	if !f.primed {
		f.primed = true
		f.advanceRow()
	}
	if f.pendingRow != nil {
		row := f.pendingRow
		f.advanceRow()
		return row, true
	}
	if f.done {
		return nil, false
	}
	rec, ok := f.nextLive()
	if !ok {
		return nil, false
	}
	if f.proj != nil {
		row := f.proj.Row()
		if f.evalFailed() {
			return nil, false
		}
		return row, true
	}
	return rec.Clone().Row(), true
}

// evalFailed ends the follow with an expression's error (an integer
// overflow) on the current record.
func (f *followResult) evalFailed() bool {
	q := f.scan.q
	if q == nil || q.comp.Err() == nil {
		return false
	}
	f.err = q.comp.Err()
	f.finish()
	return true
}

func (f *followResult) advanceRow() {
	f.pendingRow = nil
	if f.stats.Live() {
		return
	}
	if row, ok := f.backlog.Next(); ok {
		f.pendingRow = row
		return
	}
	f.endBacklog()
}

// NextRecord is the record path, for FOLLOW without a SELECT list.
func (fr followRecords) NextRecord() (*result.Record, bool) {
	f := fr.followResult
	if !f.primed {
		f.primed = true
		f.advanceRecord()
	}
	if f.pendingRec != nil {
		f.out = *f.pendingRec
		f.advanceRecord()
		return &f.out, true
	}
	if f.done {
		return nil, false
	}
	return f.nextLive()
}

func (f *followResult) advanceRecord() {
	f.pendingRec = nil
	if f.stats.Live() {
		return
	}
	if rs, ok := f.backlog.(result.RecordStream); ok {
		if rec, ok := rs.NextRecord(); ok {
			f.pendingRec = rec.Clone() // the scan reuses its record
			return
		}
	}
	f.endBacklog()
}

// endBacklog starts following, unless the backlog failed outright.
func (f *followResult) endBacklog() {
	if err := f.backlog.Err(); err != nil && !result.IsPartial(err) {
		f.err, f.done = err, true
		f.stats.SetLive(true)
		return
	}
	f.start()
}

// start begins following where the backlog's read ended in each partition:
// from now on the rows come as records are written (the Stats are live).
func (f *followResult) start() {
	f.stats.SetLive(true)
	f.backlog.Close()
	if err := f.backlog.Err(); err != nil {
		// A partition the backlog could not read is followed anyway,
		// from where it can be read; say what the backlog missed.
		f.stats.Notice(err.Error())
	}
	starts := make([]kafka.Range, 0, len(f.scan.followFrom))
	for tp, off := range f.scan.followFrom {
		starts = append(starts, kafka.Range{TP: tp, Start: off})
	}
	slices.SortFunc(starts, func(a, b kafka.Range) int { return int(a.TP.Partition) - int(b.TP.Partition) })
	f.stream = f.s.cl.NewFollowStream(f.ctx, f.m, starts, f.s.ReadBudget)
	f.rd = f.stream.Reader()
	f.scan.live.Store(f.rd)
	f.lookedAt = time.Now()
	// A partition the backlog could not even bound is looked for again.
	if len(starts) < len(f.scan.plan.parts) {
		f.lookedAt = time.Time{}
	}
}

func (f *followResult) nextLive() (*result.Record, bool) {
	for !f.done {
		for f.stream.Next(&f.rec) {
			f.stats.AddScanned(1)
			f.scan.dec.decode(&f.rec)
			if q := f.scan.q; q != nil {
				q.comp.SetRecord(&f.rec)
				if q.where != nil {
					keep := q.where.True()
					if f.evalFailed() {
						return nil, false
					}
					if !keep {
						continue
					}
				}
			}
			return &f.rec, true
		}
		if f.ctx.Err() != nil {
			f.finish()
			return nil, false
		}
		if time.Since(f.lookedAt) >= followNewPartitions {
			if f.lookForPartitions(); f.done {
				return nil, false
			}
		}
		if err := f.stream.Wait(followWait); err != nil {
			if f.ctx.Err() == nil && !errors.Is(err, kafka.ErrReaderClosed) {
				f.err = err
			}
			f.finish()
			return nil, false
		}
		if e := f.rd.LastErr(); e != nil && e != f.warned {
			f.warned = e
		}
	}
	return nil, false
}

// lookForPartitions adds partitions created since the read began (the
// statement's PARTITION list and the partitions WHERE names, if any, still
// decide which are read).
func (f *followResult) lookForPartitions() {
	f.lookedAt = time.Now()
	m, err := f.s.cl.Metadata(f.ctx, []string{f.st.Topic})
	var unknown *kafka.UnknownTopicError
	if errors.As(err, &unknown) {
		// The backlog read it, so it existed: it was deleted. Every
		// Fetch would fail from now on; say so and end.
		f.err = fmt.Errorf("FOLLOW %s: topic %q was deleted while it was followed", lang.QuoteName(f.st.Topic), f.st.Topic)
		f.finish()
		return
	}
	if err != nil {
		return // asked again at the next look
	}
	t := m.Topics[f.st.Topic]
	if t == nil {
		return
	}
	var fresh []kafka.TopicPartition
	for _, p := range t.Partitions {
		tp := kafka.TopicPartition{Topic: t.Name, Partition: p.ID}
		if _, ok := f.scan.followFrom[tp]; ok {
			continue
		}
		if f.st.Partitions != nil && !slices.Contains(f.st.Partitions, p.ID) {
			continue
		}
		if f.scan.plan.pd.partitions != nil && !slices.Contains(f.scan.plan.pd.partitions, p.ID) {
			continue // WHERE partition = ... leaves it out
		}
		fresh = append(fresh, tp)
	}
	if len(fresh) == 0 {
		return
	}
	// A new partition is read from its start: everything written to it
	// since it appeared is new. A partition the statement selected but
	// could not bound when it began (its leader did not answer) is no
	// new partition: after a tail read (FROM NEWEST, TAIL) its old records
	// were never asked for, so it is read from its end, as the others.
	tail := f.scan.plan.from.Kind == lang.FromNewest || f.scan.plan.from.Kind == lang.FromTail
	var added, known []kafka.TopicPartition
	for _, tp := range fresh {
		if tail && slices.Contains(f.scan.plan.parts, tp) {
			known = append(known, tp)
		} else {
			added = append(added, tp)
		}
	}
	var add []kafka.Range
	for _, g := range []struct {
		tps []kafka.TopicPartition
		at  int64
	}{{added, kafka.Earliest}, {known, kafka.Latest}} {
		if len(g.tps) == 0 {
			continue
		}
		offs := f.s.cl.OffsetsOf(f.ctx, m, g.tps, kafka.OffsetQuery{At: g.at, ReadCommitted: true})
		if offs.Err != nil {
			continue // asked again at the next look
		}
		for _, tp := range g.tps {
			if a, ok := offs.Got[tp]; ok {
				add = append(add, kafka.Range{TP: tp, Start: a.Offset})
				f.scan.followFrom[tp] = a.Offset
			}
		}
	}
	f.rd.Add(add)
}

func (f *followResult) finish() {
	f.done = true
	if f.rd != nil {
		f.rd.Close()
	}
}

// Err is nil when FOLLOW ended as it ends, by Ctrl-C or --timeout.
func (f *followResult) Err() error { return f.err }

func (f *followResult) Close() {
	f.backlog.Close()
	f.finish()
}
