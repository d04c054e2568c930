package exec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

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
	t := m.Topics[st.Topic]
	var keyWarning string // PARTITION FOR KEY could not ask the registry
	if st.PartitionForKey != nil {
		// The partition the default partitioner (murmur2: the Java
		// client, franz-go, kql's PRODUCE) puts this key in.
		if len(t.Partitions) == 0 {
			return nil, fmt.Errorf("topic %q has no partitions", st.Topic)
		}
		key, _, warn, err := s.consumePartitionKey(ctx, st, st.PartitionForKey)
		if err != nil {
			return nil, err
		}
		keyWarning = warn
		cp := *st
		cp.Partitions = []int32{kafka.PartitionForKey(st.Topic, key, len(t.Partitions))}
		st = &cp
	}
	parts, err := selectPartitions(t, st)
	if err != nil {
		return nil, err
	}
	now := s.Now()
	q, err := compileRecordQuery(st, now)
	if err != nil {
		return nil, err
	}
	pd := analyzePushdown(st.Where, now)
	if pd.partitions != nil {
		parts = slices.DeleteFunc(parts, func(tp kafka.TopicPartition) bool { return !slices.Contains(pd.partitions, tp.Partition) })
	}
	limit := int64(DefaultLimit)
	switch {
	case st.Limit != nil:
		limit = *st.Limit
	case st.LimitAll:
		limit = math.MaxInt64
	}
	var skip int64
	if st.Skip != nil {
		skip = *st.Skip
	}
	from := st.From
	if from == nil {
		from = &lang.Start{Kind: lang.FromOldest}
		if st.Follow {
			// Like tail -f: the last records, then what comes.
			from = &lang.Start{Kind: lang.FromNewest}
			if st.Limit == nil {
				limit = DefaultFollowBacklog
			}
		}
	}
	if st.Follow {
		if from.Kind == lang.FromNewest || from.Kind == lang.FromTail {
			if st.Limit == nil {
				limit = DefaultFollowBacklog
			}
		} else {
			limit = math.MaxInt64 // a forward read shows everything up to now first
		}
	}

	r := &consumeResult{stmt: st, limit: limit, outLimit: limit, outSkip: skip, skip: skip, from: from, selected: parts, q: q, pushed: pd.partitions,
		dec: dec, stats: &result.Stats{}}
	if keyWarning != "" {
		r.warnings = append(r.warnings, keyWarning)
	}
	r.stats.Scanning()
	r.stats.WarningsFrom(r.warningsNow)
	r.stats.SetNextPage(func() (any, bool) { return r.NextPage() })
	r.stats.WaitingFrom(r.waiting)
	if st.HasAggregates() || st.OrderBy != nil {
		// They read the whole range; LIMIT applies to what they return.
		r.limit, r.skip = math.MaxInt64, 0
		if from.Kind == lang.FromNewest || from.Kind == lang.FromTail {
			return nil, errors.New("aggregates and ORDER BY read the whole range from a start: use FROM OLDEST, FROM OFFSET, FROM TIMESTAMP or FROM ... AGO, not FROM NEWEST or FROM TAIL")
		}
	}
	r.mg = &merger{ctx: ctx, cl: s.cl, m: m, budget: s.ReadBudget, live: &r.live}

	bounds, err := r.mg.bounds(parts)
	if err != nil {
		return nil, err
	}
	if err := pd.apply(s, r, bounds); err != nil {
		return nil, err
	}
	switch from.Kind {
	case lang.FromNewest, lang.FromTail:
		ends := make(map[kafka.TopicPartition]int64, len(bounds))
		for tp, b := range bounds {
			ends[tp] = b.end
			if from.Kind == lang.FromTail {
				ends[tp] = max(b.start, min(b.end, tailOffset(from, tp.Partition)))
			}
		}
		if err := r.planTail(bounds, ends); err != nil {
			return nil, err
		}
		r.followFrom = make(map[kafka.TopicPartition]int64, len(bounds))
		for tp := range bounds {
			r.followFrom[tp] = ends[tp]
		}
	default:
		starts, err := r.forwardStarts(s, m, bounds)
		if err != nil {
			return nil, err
		}
		r.followFrom = make(map[kafka.TopicPartition]int64, len(bounds))
		for tp, b := range bounds {
			r.mg.add(tp, starts[tp], b.end)
			r.followFrom[tp] = b.end
		}
		r.toSkip = r.skip
		reportRangeStarts(ctx, r.selected, r.mg.ranges)
	}
	res, err := wrapQuery(st, r)
	if err != nil || !st.Follow {
		return res, err
	}
	return newFollowResult(ctx, s, st, r, res, m), nil
}

// DefaultFollowBacklog is how many records FOLLOW shows before the new
// ones when no LIMIT is written, as tail -f does.
const DefaultFollowBacklog = 10

// selectPartitions applies PARTITION and the partitions a TAIL or ANCHOR
// list names; a partition the topic does not have is an error naming the
// ones it has, never silently dropped.
func selectPartitions(t *kafka.Topic, st *lang.Consume) ([]kafka.TopicPartition, error) {
	have := make(map[int32]bool, len(t.Partitions))
	for _, p := range t.Partitions {
		have[p.ID] = true
	}
	check := func(what string, ps []int32) error {
		for _, p := range ps {
			if !have[p] {
				return fmt.Errorf("topic %q has no partition %d (%s); its partitions are %s", t.Name, p, what, partitionRange(t))
			}
		}
		return nil
	}
	want := st.Partitions
	if err := check("in PARTITION", want); err != nil {
		return nil, err
	}
	if st.From != nil && (st.From.Kind == lang.FromTail || st.From.Kind == lang.FromAnchor) {
		var listed []int32
		for _, po := range st.From.Positions {
			listed = append(listed, po.Partition)
		}
		kw := "TAIL"
		if st.From.Kind == lang.FromAnchor {
			kw = "ANCHOR"
		}
		if err := check("in FROM "+kw, listed); err != nil {
			return nil, err
		}
		if want != nil {
			for _, p := range want {
				if !slices.Contains(listed, p) {
					return nil, fmt.Errorf("PARTITION %d is not in the FROM %s list, which names partitions %v: name each partition to read in the list", p, kw, listed)
				}
			}
		} else {
			want = listed
		}
	}
	var out []kafka.TopicPartition
	for _, p := range t.Partitions {
		if want == nil || slices.Contains(want, p.ID) {
			out = append(out, kafka.TopicPartition{Topic: t.Name, Partition: p.ID})
		}
	}
	return out, nil
}

func partitionRange(t *kafka.Topic) string {
	n := len(t.Partitions)
	if n == 0 {
		return "none"
	}
	if int(t.Partitions[n-1].ID) == n-1 {
		if n == 1 {
			return "0"
		}
		return "0-" + strconv.Itoa(n-1)
	}
	ids := make([]string, n)
	for i, p := range t.Partitions {
		ids[i] = strconv.Itoa(int(p.ID))
	}
	return strings.Join(ids, ", ")
}

func tailOffset(from *lang.Start, p int32) int64 {
	for _, po := range from.Positions {
		if po.Partition == p {
			return po.Offset
		}
	}
	return 0
}

// forwardStarts resolves where each partition starts for a forward read.
func (r *consumeResult) forwardStarts(s *Session, m *kafka.Metadata, bounds map[kafka.TopicPartition]span) (map[kafka.TopicPartition]int64, error) {
	starts := make(map[kafka.TopicPartition]int64, len(bounds))
	clamp := func(tp kafka.TopicPartition, off int64) int64 {
		b := bounds[tp]
		return max(b.start, min(b.end, off))
	}
	switch r.from.Kind {
	case lang.FromOldest:
		for tp, b := range bounds {
			starts[tp] = b.start
		}
	case lang.FromOffset:
		for tp := range bounds {
			starts[tp] = clamp(tp, r.from.Offset)
		}
	case lang.FromAnchor:
		for tp := range bounds {
			starts[tp] = clamp(tp, tailOffset(r.from, tp.Partition))
		}
	case lang.FromTimestamp, lang.FromAgo:
		ts := r.from.Timestamp
		if r.from.Kind == lang.FromAgo {
			ts = s.Now().Add(-r.from.Ago).UnixMilli()
		}
		parts := make([]kafka.TopicPartition, 0, len(bounds))
		for tp := range bounds {
			parts = append(parts, tp)
		}
		byTime, failed, err := s.cl.ListOffsetsWaiting(r.mg.ctx, m, parts, ts, true)
		if err != nil {
			return nil, err
		}
		for tp, pe := range failed {
			r.mg.missing = append(r.mg.missing, pe)
			delete(bounds, tp)
		}
		for tp, a := range byTime {
			if a.Offset < 0 { // no record at or after ts
				starts[tp] = bounds[tp].end
			} else {
				starts[tp] = clamp(tp, a.Offset)
			}
		}
	default:
		return nil, fmt.Errorf("CONSUME: unsupported FROM kind %d", r.from.Kind)
	}
	return starts, nil
}

type span struct{ start, end int64 }

// key is what a tail read remembers of a record in its first pass.
type key struct{ ts, offset int64 }

// planTail finds the page of a tail read: the newest `limit` records of the
// merged per-partition windows below the pinned ends, after leaving out the
// newest `skip`. The first pass reads only (timestamp, offset) keys and
// widens a partition's window while it holds fewer than skip+limit records
// (compaction gaps, transaction markers) and older records exist. The page
// is then a contiguous offset run in each partition, which the second pass
// (the row stream) reads and merges again, in the same order.
func (r *consumeResult) planTail(bounds map[kafka.TopicPartition]span, ends map[kafka.TopicPartition]int64) error {
	need := r.limit
	if need <= math.MaxInt64-r.skip {
		need += r.skip
	}
	keys := make(map[kafka.TopicPartition][]key, len(bounds))
	lows := make(map[kafka.TopicPartition]int64, len(bounds))
	step := map[kafka.TopicPartition]int64{}
	for tp := range bounds {
		lows[tp] = ends[tp]
		step[tp] = need
	}
	if r.skip == 0 {
		// A page that holds every position of every window holds every
		// record: no key scan is needed to cut it.
		var total int64
		for tp, b := range bounds {
			total += ends[tp] - b.start
		}
		if total <= r.limit {
			r.cuts = make(map[kafka.TopicPartition]int64, len(bounds))
			for tp, b := range bounds {
				r.cuts[tp] = b.start
				if b.start < ends[tp] {
					r.mg.add(tp, b.start, ends[tp])
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
			if int64(len(keys[tp])) >= need || lows[tp] <= b.start {
				continue
			}
			lo := max(b.start, lows[tp]-step[tp])
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
		older, err := scan.keys(r.matches)
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
	// Merge the keys in row order (a heap of partitions, ordered as the
	// merger orders records), then cut the page from the end.
	type ref struct {
		tp kafka.TopicPartition
		k  key
	}
	tps := make([]kafka.TopicPartition, 0, len(keys))
	for tp := range keys {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b kafka.TopicPartition) int { return int(a.Partition) - int(b.Partition) })
	lists := make([][]key, len(tps))
	total := 0
	for i, tp := range tps {
		lists[i] = keys[tp]
		total += len(lists[i])
	}
	idx := make([]int, len(tps))
	h := make([]int, 0, len(tps)) // partition indices with keys left, smallest head first
	headLess := func(a, b int) bool {
		ka, kb := lists[a][idx[a]], lists[b][idx[b]]
		if ka.ts != kb.ts {
			return ka.ts < kb.ts
		}
		return tps[a].Partition < tps[b].Partition
	}
	down := func(i int) {
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
	for i := range tps {
		if len(lists[i]) > 0 {
			h = append(h, i)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	order := make([]ref, 0, total)
	for len(h) > 0 {
		i := h[0]
		order = append(order, ref{tps[i], lists[i][idx[i]]})
		idx[i]++
		if idx[i] == len(lists[i]) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		if len(h) > 0 {
			down(0)
		}
	}
	hi := max(int64(len(order))-r.skip, 0)
	lo := max(hi-r.limit, 0)
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
			r.cuts[tp] = ks[len(ks)-1].offset + 1
		}
	}
	onPage := map[kafka.TopicPartition]bool{}
	for _, rf := range order[lo:] {
		if !onPage[rf.tp] {
			onPage[rf.tp] = true
			r.cuts[rf.tp] = rf.k.offset
		}
		r.cuts[rf.tp] = min(r.cuts[rf.tp], rf.k.offset)
	}
	for tp, b := range bounds {
		if r.cuts[tp] > b.start {
			r.olderExist = true
		}
	}
	first := map[kafka.TopicPartition]int64{}
	last := map[kafka.TopicPartition]int64{}
	for _, rf := range order[lo:hi] {
		if _, ok := first[rf.tp]; !ok {
			first[rf.tp] = rf.k.offset
		}
		last[rf.tp] = rf.k.offset
	}
	for _, tp := range tps {
		if f, ok := first[tp]; ok {
			r.mg.add(tp, f, last[tp]+1)
		}
	}
	return nil
}

// consumeResult streams the rows of a CONSUME.
type consumeResult struct {
	stmt        *lang.Consume
	from        *lang.Start
	limit, skip int64
	mg          *merger
	toSkip      int64 // forward reads: rows still to skip
	emitted     int64
	err         error
	done        bool
	selected    []kafka.TopicPartition         // every partition the statement reads, answered or not
	cuts        map[kafka.TopicPartition]int64 // tail reads: where the next, older page ends
	olderExist  bool
	rec         result.Record                  // handed out by NextRecord, reused
	q           *recordQuery                   // WHERE, and the compiler the operators above share
	followFrom  map[kafka.TopicPartition]int64 // where this read ends in each partition: FOLLOW goes on from there
	stats       *result.Stats                  // records read (the progress line), warnings, the next page
	outLimit    int64                          // rows the statement returns (LIMIT); limit is what the scan counts
	outSkip     int64                          // rows it skips first (SKIP): aggregates and ORDER BY skip their own rows, as SQL's OFFSET
	pushed      []int32                        // the partitions WHERE names (pushdown); nil: WHERE names none
	dec         *recordDecoder                 // schema registry decoding (and the wire-format ids)
	warnings    []string                       // said before any record was read (PARTITION FOR KEY)
	live        atomic.Pointer[kafka.Reader]   // the reader fetching now, for what it waits for (Stats.Waiting)
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
	for r.emitted < r.limit {
		rec, ts, err := r.mg.next()
		if rec != nil {
			r.stats.AddScanned(1)
		}
		if err != nil {
			r.finish()
			r.err = r.mg.cutOff(fmt.Sprintf("CONSUME %q (some partitions could not be read)", r.stmt.Topic), err)
			return nil, false
		}
		if rec == nil {
			break
		}
		fillRecord(&r.rec, rec, ts)
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
			continue
		}
		r.emitted++
		return &r.rec, true
	}
	r.finish()
	if missing := r.mg.allMissing(); len(missing) > 0 {
		r.err = &result.PartialError{What: fmt.Sprintf("CONSUME %q (some partitions could not be read)", r.stmt.Topic), Missing: missing}
	}
	return nil, false
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

// fillRecord copies rec's fields into dst, reusing dst's header slice; ts
// is rec's timestamp in ms, which the merge already has.
func fillRecord(dst *result.Record, rec *kgo.Record, ts int64) {
	dst.Partition = rec.Partition
	dst.Offset = rec.Offset
	dst.Timestamp = ts
	dst.Key = rec.Key
	dst.Value = rec.Value
	hs := dst.Headers[:0]
	for _, h := range rec.Headers {
		hs = append(hs, result.Header{Key: h.Key, Value: h.Value})
	}
	dst.Headers = hs
}

// NextPage returns the statement that reads the next page: for a tail
// read, the older records (FROM TAIL pinned where this page begins in each
// partition); for a forward read, the records after this page (FROM ANCHOR
// at each partition's next position). Every partition the statement
// selected stays in the list, also one that failed on this page, so it is
// read again (or its failure reported again) rather than silently dropped.
func (r *consumeResult) NextPage() (*lang.Consume, bool) {
	if r.stmt.HasAggregates() || r.stmt.OrderBy != nil || r.stmt.LimitAll {
		return nil, false // the whole range was read
	}
	next := &lang.Consume{Topic: r.stmt.Topic, Partitions: r.stmt.Partitions,
		Where: r.stmt.Where, Projection: r.stmt.Projection}
	limit := r.limit
	next.Limit = &limit
	pos := make(map[kafka.TopicPartition]int64, len(r.selected))
	switch r.from.Kind {
	case lang.FromNewest, lang.FromTail:
		for _, tp := range r.selected {
			cut, ok := r.cuts[tp]
			if !ok { // failed: pin nothing, the end clamps it
				cut = math.MaxInt64
			}
			pos[tp] = cut
		}
		if !r.olderExist && len(r.mg.allMissing()) == 0 {
			return nil, false
		}
		next.From = &lang.Start{Kind: lang.FromTail, Positions: sortedPositions(pos)}
		return next, true
	default:
		more := len(r.mg.allMissing()) > 0
		for _, tp := range r.selected {
			pos[tp] = 0 // failed: the earliest offset, clamped when run
		}
		for _, rg := range r.mg.ranges {
			// The next record not shown: the first one still buffered, or
			// the read's position, which has moved past transaction
			// markers and aborted batches.
			p, left := r.mg.nextUnread(rg.TP)
			pos[rg.TP] = p
			if left {
				more = true
			}
		}
		if !more {
			return nil, false
		}
		next.From = &lang.Start{Kind: lang.FromAnchor, Positions: sortedPositions(pos)}
		return next, true
	}
}

func sortedPositions(m map[kafka.TopicPartition]int64) []lang.PartitionOffset {
	out := make([]lang.PartitionOffset, 0, len(m))
	for tp, o := range m {
		out = append(out, lang.PartitionOffset{Partition: tp.Partition, Offset: o})
	}
	slices.SortFunc(out, func(a, b lang.PartitionOffset) int { return int(a.Partition) - int(b.Partition) })
	return out
}

// merger reads several partitions, each between a start and an exclusive
// end, through one kafka.Reader (the next Fetch to every leader already in
// flight while records are handed out) and hands out records in
// (timestamp, partition, offset) order: a k-way merge over a binary heap
// of the partitions' next records.
type merger struct {
	budget  int64 // bytes buffered ahead; 0 = kafka.DefaultReadBudget
	ctx     context.Context
	cl      *kafka.Cluster
	m       *kafka.Metadata
	ranges  []kafka.Range
	rd      *kafka.Reader
	srcs    []*source // every partition, by partition
	heap    []*source // the partitions with a record ready, smallest first
	started bool
	missing []error                       // failures before the read (ListOffsets)
	live    *atomic.Pointer[kafka.Reader] // where the reader is published for progress; may be nil
}

// source is one partition's place in the merge.
type source struct {
	tp   kafka.TopicPartition
	recs []*kgo.Record // the chunk being handed out
	i    int           // next record in recs
	ts   int64         // recs[i]'s timestamp in ms, the heap's first key
}

func (mg *merger) add(tp kafka.TopicPartition, start, end int64) {
	mg.ranges = append(mg.ranges, kafka.Range{TP: tp, Start: start, End: end})
}

// start begins fetching; it is called by the first next.
func (mg *merger) start() {
	if mg.started {
		return
	}
	mg.started = true
	slices.SortFunc(mg.ranges, func(a, b kafka.Range) int { return int(a.TP.Partition) - int(b.TP.Partition) })
	mg.rd = mg.cl.NewReader(mg.ctx, mg.m, mg.ranges, mg.budget, true)
	if mg.live != nil {
		mg.live.Store(mg.rd)
	}
	mg.srcs = make([]*source, len(mg.ranges))
	for i, rg := range mg.ranges {
		mg.srcs[i] = &source{tp: rg.TP}
	}
}

// prime fills the heap: each partition's first chunk.
func (mg *merger) prime() error {
	mg.start()
	if mg.heap != nil {
		return nil
	}
	mg.heap = make([]*source, 0, len(mg.srcs))
	for _, s := range mg.srcs {
		ok, err := mg.refill(s)
		if err != nil {
			return err
		}
		if ok {
			mg.push(s)
		}
	}
	return nil
}

// refill moves s to its next chunk; false when the partition is done.
func (mg *merger) refill(s *source) (bool, error) {
	for {
		recs, err := mg.rd.Take(s.tp)
		if err != nil {
			return false, err
		}
		if recs == nil {
			s.recs, s.i = nil, 0
			return false, nil
		}
		if len(recs) > 0 {
			s.recs, s.i = recs, 0
			s.ts = recs[0].Timestamp.UnixMilli()
			return true, nil
		}
	}
}

// next returns the next record in row order and its timestamp in ms, or
// nil at the end.
func (mg *merger) next() (*kgo.Record, int64, error) {
	if err := mg.prime(); err != nil {
		return nil, 0, err
	}
	if len(mg.heap) == 0 {
		return nil, 0, nil
	}
	s := mg.heap[0]
	rec, ts := s.recs[s.i], s.ts
	s.i++
	if s.i < len(s.recs) {
		s.ts = s.recs[s.i].Timestamp.UnixMilli()
		mg.down(0)
		return rec, ts, nil
	}
	ok, err := mg.refill(s)
	if err != nil {
		s.i-- // rec was not handed out: the next page starts at it
		return nil, 0, err
	}
	if ok {
		mg.down(0)
	} else {
		last := len(mg.heap) - 1
		mg.heap[0] = mg.heap[last]
		mg.heap[last] = nil
		mg.heap = mg.heap[:last]
		if last > 0 {
			mg.down(0)
		}
	}
	return rec, ts, nil
}

// less orders sources by their next record: timestamp, partition, offset.
func less(a, b *source) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.tp.Partition != b.tp.Partition {
		return a.tp.Partition < b.tp.Partition
	}
	return a.recs[a.i].Offset < b.recs[b.i].Offset
}

func (mg *merger) push(s *source) {
	mg.heap = append(mg.heap, s)
	i := len(mg.heap) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !less(mg.heap[i], mg.heap[parent]) {
			break
		}
		mg.heap[i], mg.heap[parent] = mg.heap[parent], mg.heap[i]
		i = parent
	}
}

func (mg *merger) down(i int) {
	h := mg.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(h[r], h[l]) {
			m = r
		}
		if !less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// nextUnread is the offset of tp's first record not handed out, and
// whether tp still has records before its end.
func (mg *merger) nextUnread(tp kafka.TopicPartition) (pos int64, more bool) {
	for _, s := range mg.srcs {
		if s.tp == tp && s.i < len(s.recs) {
			return s.recs[s.i].Offset, true
		}
	}
	if mg.rd == nil {
		for _, rg := range mg.ranges {
			if rg.TP == tp {
				return rg.Start, rg.Start < rg.End
			}
		}
		return 0, false
	}
	pos, end, failed := mg.rd.NextUnread(tp)
	return pos, pos < end && !failed
}

// close stops the reader's fetches.
func (mg *merger) close() {
	if mg.rd != nil {
		mg.rd.Close()
	}
}

// allMissing is every partition that could not be read, before or during
// the read.
func (mg *merger) allMissing() []error {
	out := slices.Clone(mg.missing)
	if mg.rd != nil {
		out = append(out, mg.rd.Missing()...)
	}
	return out
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

// matches reports whether rec passes WHERE (a tail read's key scan keeps
// only the records the page will show).
func (r *consumeResult) matches(rec *kgo.Record) bool {
	if r.q == nil || r.q.where == nil {
		return true
	}
	fillRecord(&r.rec, rec, rec.Timestamp.UnixMilli())
	r.dec.decode(&r.rec)
	r.q.comp.SetRecord(&r.rec)
	return r.q.where.True()
}

// keys reads every range in full, partition by partition (no merge), and
// returns each partition's (timestamp, offset) keys in offset order, of
// the records keep accepts.
func (mg *merger) keys(keep func(*kgo.Record) bool) (map[kafka.TopicPartition][]key, error) {
	mg.start()
	defer mg.close()
	out := make(map[kafka.TopicPartition][]key, len(mg.srcs))
	for _, s := range mg.srcs {
		for {
			recs, err := mg.rd.Take(s.tp)
			if err != nil {
				return nil, err
			}
			if recs == nil {
				break
			}
			for _, rec := range recs {
				if keep(rec) {
					out[s.tp] = append(out[s.tp], key{rec.Timestamp.UnixMilli(), rec.Offset})
				}
			}
		}
	}
	return out, nil
}
