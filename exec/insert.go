package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// INSERT INTO t SELECT ... / INSERT INTO TOPIC expr SELECT ...: the SELECT
// engine reads the source; each row maps by column name onto the record
// written. The SELECT is run with an explicit projection that also carries
// the source partition and offset (and the destination expression), so the
// dry run can say where each destination's records come from and a failed
// EXECUTE can say where to resume.

var insertCols = []result.Column{col("topic", result.String), col("partition", result.Int), col("records", result.Int), col("bytes", result.Int),
	col("first_source", result.String), col("last_source", result.String), col("error", result.String)}

// insertTxnRecords bounds one transaction of an INSERT; tests lower it.
var insertTxnRecords = 200000

const (
	srcPartitionCol = "$src_partition"
	srcOffsetCol    = "$src_offset"
	srcTimeCol      = "$src_timestamp" // KEEP TIMESTAMP: the source record's, whatever the SELECT list says
	destTopicCol    = "$dest_topic"
)

// insertSource is the SELECT of an INSERT as it is run: the user's
// projection (or key, value, headers, timestamp for SELECT *) plus the
// columns the INSERT itself needs.
func insertSource(in *lang.Insert) (*lang.Consume, error) {
	c := *in.Select
	if c.Limit == nil && !c.LimitAll {
		c.LimitAll = true // the whole range, not SELECT's browsing default
	}
	items := c.Projection
	if items == nil {
		q, err := lang.Parse("SELECT key, value, headers, timestamp FROM x")
		if err != nil {
			return nil, err
		}
		items = q.(*lang.Consume).Projection
	}
	items = slices.Clone(items)
	if !c.HasAggregates() {
		q, err := lang.Parse(`SELECT partition AS "` + srcPartitionCol + `", offset AS "` + srcOffsetCol + `" FROM x`)
		if err != nil {
			return nil, err
		}
		items = append(items, q.(*lang.Consume).Projection...)
	}
	if in.KeepTimestamp {
		items = append(items, lang.SelectItem{X: &lang.Column{Name: "timestamp"}, As: srcTimeCol})
	}
	if in.TopicExpr != nil {
		items = append(items, lang.SelectItem{X: in.TopicExpr, As: destTopicCol})
	}
	c.Projection = items
	return &c, nil
}

// insertRow is one row of the source mapped onto a record.
type insertRow struct {
	rec     kafka.OutRecord
	srcPart int32 // -1: an aggregate row, no source position
	srcOff  int64
	hasPart bool // the SELECT gave a partition column
}

// insertDest is what one destination partition gets.
type insertDest struct {
	records, bytes int64
	first, last    srcPos
}

// srcPos is a source record's place, formatted only for the result
// table: the partition (-1: an aggregate row) and offset.
type srcPos struct {
	part int32
	off  int64
}

func (sp srcPos) String() string {
	if sp.part < 0 {
		return "an aggregate row"
	}
	return fmt.Sprintf("%d:%d", sp.part, sp.off)
}

type insertPlan struct {
	s     *Session
	in    *lang.Insert
	metas map[string]*kafka.Topic // destination topics, looked up once each
	cols  map[string]int
	// checked, when set, is where execute's read starts instead of the
	// SELECT's FROM: the range the dry run checked (see checkedRead).
	checked        *lang.Start
	checkedRecords int64 // how many records the check saw: the progress line's total
	// upTo, when set, is the last source offset per partition the check
	// saw: rows beyond it arrived after the check and are dropped before
	// they are mapped (a late record without a destination is not this
	// INSERT's, and must not fail it).
	upTo map[int32]int64
	// pass, when set, is the columns a plain INSERT copies record by
	// record (see insert_passthrough.go); nil: the row path.
	pass *passCols
	keys kafka.KeyPartitioner
}

func (s *Session) insert(ctx context.Context, in *lang.Insert) (result.Result, error) {
	in = fixedTimes(in, s.Now())
	p := &insertPlan{s: s, in: in, metas: map[string]*kafka.Topic{}}
	pass, err := s.passThroughFor(in)
	if err != nil {
		return nil, err
	}
	p.pass = pass
	checkFirst := true // a destination per record: see insert_dest.go
	if in.TopicExpr != nil {
		if err := checkDestType(in, s.Now()); err != nil {
			return nil, err
		}
	} else {
		dst, err := p.topic(ctx, in.Topic, nil)
		if err != nil {
			return nil, err
		}
		if checkFirst, err = s.insertPartitionCheck(ctx, in, dst); err != nil { // see insert_partitions.go
			return nil, err
		}
	}
	// A dry run, and before an EXECUTE to a per-record destination or
	// partition: every record's destination is checked before anything is
	// written.
	var seenUpTo map[int32]int64
	if !in.Execute || checkFirst {
		dests, from, upTo, err := p.dryRun(ctx)
		if err != nil {
			return nil, err
		}
		if !in.Execute {
			res := result.NewSlice(insertCols, destRows(dests))
			res.Notes = append(res.Notes, "dry run: nothing was written; add EXECUTE to write")
			return res, nil
		}
		seenUpTo = upTo
		p.checked = checkedRead(from)
		for _, d := range dests {
			p.checkedRecords += d.records
		}
	}
	return p.execute(ctx, seenUpTo)
}

// checkedRead is the read of exactly what a dry run checked: per source
// partition it read, from the first offset it took (SKIP's and FROM's
// work is done), without LIMIT or SKIP; execute stops each partition at
// the last offset checked. Reading the SELECT again as written would not
// do: records that arrived in between, in a partition that had none, with
// older timestamps, come first in the merge and use up the LIMIT, and the
// records checked after them would not be written.
func checkedRead(from map[int32]int64) *lang.Start {
	pos := make([]lang.PartitionOffset, 0, len(from))
	for sp, o := range from {
		pos = append(pos, lang.PartitionOffset{Partition: sp, Offset: o})
	}
	slices.SortFunc(pos, func(a, b lang.PartitionOffset) int { return int(a.Partition - b.Partition) })
	return &lang.Start{Kind: lang.FromAnchor, Positions: pos}
}

// topic returns the destination topic name's metadata; at names the
// source record for the error of a topic that does not exist.
func (p *insertPlan) topic(ctx context.Context, name string, at func() string) (*kafka.Topic, error) {
	if t, ok := p.metas[name]; ok {
		return t, nil
	}
	m, err := p.s.cl.Metadata(ctx, []string{name})
	var missing *kafka.UnknownTopicError
	if err != nil && !errors.As(err, &missing) {
		return nil, err
	}
	var t *kafka.Topic
	if err == nil {
		t = m.Topics[name]
	}
	if t == nil || len(t.Partitions) == 0 {
		if at != nil {
			return nil, fmt.Errorf("the record at %s names topic %q, which does not exist; nothing was written (create it, or narrow the SELECT with WHERE)", at(), name)
		}
		return nil, fmt.Errorf("topic %q does not exist: CREATE TOPIC it first (INSERT never creates a topic); nothing was written", name)
	}
	p.metas[name] = t
	return t, nil
}

// rows runs the source SELECT and hands each mapped row to fn.
func (p *insertPlan) rows(ctx context.Context, fn func(*insertRow) error) error {
	q, err := insertSource(p.in)
	if err != nil {
		return err
	}
	if p.checked != nil {
		if len(p.checked.Positions) == 0 {
			return nil // the check saw no record: nothing to write
		}
		q.From, q.Partitions, q.Skip, q.Limit, q.LimitAll = p.checked, nil, nil, nil, true
	}
	if p.pass != nil {
		q.Projection = nil // the record path: see insert_passthrough.go
	}
	res, err := p.s.Execute(ctx, q)
	if err != nil {
		return err
	}
	defer res.Close()
	if p.pass != nil {
		if rs, ok := res.(result.RecordStream); ok {
			return p.recordRows(ctx, rs, fn)
		}
		return fmt.Errorf("INSERT: the source read of %s is not a record stream (%T)", p.in.Select.Topic, res) // a plan this file does not know
	}
	p.cols = map[string]int{}
	for i, c := range res.Columns() {
		p.cols[strings.ToLower(c.Name)] = i
	}
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		if p.afterCheck(row) {
			continue
		}
		r, err := p.mapRow(ctx, row)
		if err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return res.Err()
}

// afterCheck reports whether row is a source record the check did not see
// (see upTo).
func (p *insertPlan) afterCheck(row result.Row) bool {
	if p.upTo == nil {
		return false
	}
	v, ok := p.get(row, srcPartitionCol)
	if !ok || v == nil {
		return false
	}
	off, _ := mustGet(p, row, srcOffsetCol).(int64)
	last, seen := p.upTo[int32(v.(int64))]
	return !seen || off > last
}

func (p *insertPlan) get(row result.Row, name string) (any, bool) {
	i, ok := p.cols[name]
	if !ok {
		return nil, false
	}
	return row[i], true
}

func (p *insertPlan) mapRow(ctx context.Context, row result.Row) (*insertRow, error) {
	r := &insertRow{srcPart: -1}
	if v, ok := p.get(row, srcPartitionCol); ok && v != nil {
		r.srcPart = int32(v.(int64))
		r.srcOff, _ = mustGet(p, row, srcOffsetCol).(int64)
	}
	// at is only formatted for an error: a Sprintf per record was a
	// tenth of an INSERT's CPU.
	at := r.at
	var err error
	if r.rec.Key, err = bytesOf(mustGet(p, row, "key"), "key", at); err != nil {
		return nil, err
	}
	if r.rec.Value, err = bytesOf(mustGet(p, row, "value"), "value", at); err != nil {
		return nil, err
	}
	switch hs := mustGet(p, row, "headers").(type) {
	case nil:
	case []result.Header:
		for _, h := range hs {
			r.rec.Headers = append(r.rec.Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
	default:
		return nil, fmt.Errorf("the headers column at %s is %T, not headers", at(), hs)
	}
	if !p.in.StampNow {
		tsCol := "timestamp"
		if p.in.KeepTimestamp {
			tsCol = srcTimeCol
		}
		switch ts := mustGet(p, row, tsCol).(type) {
		case nil:
		case time.Time:
			r.rec.Timestamp = ts
		case int64:
			r.rec.Timestamp = time.UnixMilli(ts)
		default:
			return nil, fmt.Errorf("the timestamp column at %s is %T, not a timestamp", at(), ts)
		}
	}
	if r.rec.Timestamp.IsZero() {
		r.rec.Timestamp = time.Now()
	}
	dest := p.in.Topic
	if p.in.TopicExpr != nil {
		if dest, err = p.destName(r, mustGet(p, row, destTopicCol)); err != nil {
			return nil, err
		}
	}
	part, hasPart := p.get(row, "partition")
	if err := p.place(ctx, r, dest, part, hasPart); err != nil {
		return nil, err
	}
	return r, nil
}

// place sets r's destination topic and partition: the SELECT's partition
// column (part, when hasPartCol), else the source partition (KEEP
// PARTITION), else the key's, else round robin.
func (p *insertPlan) place(ctx context.Context, r *insertRow, dest string, part any, hasPartCol bool) error {
	t := p.metas[dest]
	if t == nil {
		var err error
		if t, err = p.topic(ctx, dest, r.at); err != nil {
			return err
		}
	}
	r.rec.Topic = dest
	switch {
	case hasPartCol:
		n, isInt := part.(int64)
		if !isInt || !hasPartition(t, int32(n)) {
			return fmt.Errorf("the record at %s goes to partition %s, which topic %q lacks (its partitions are %s); nothing was written", r.at(), partitionText(part), dest, partitionRange(t))
		}
		r.rec.Partition, r.hasPart = int32(n), true
	case p.in.KeepPartition:
		if r.srcPart < 0 || !hasPartition(t, r.srcPart) {
			return fmt.Errorf("KEEP PARTITION: the record at %s comes from partition %d, which topic %q lacks (its partitions are %s); nothing was written (%s)", r.at(), r.srcPart, dest, partitionRange(t), keptPartitionHint(p.in.Select, t))
		}
		r.rec.Partition = r.srcPart
	case r.rec.Key != nil:
		r.rec.Partition = p.keys.Partition(dest, r.rec.Key, len(t.Partitions))
	default:
		r.rec.Partition = t.Partitions[int(roundRobin.Add(1))%len(t.Partitions)].ID
	}
	return nil
}

func mustGet(p *insertPlan, row result.Row, name string) any {
	v, _ := p.get(row, name)
	return v
}

func (r *insertRow) at() string { return r.pos().String() }

func (r *insertRow) pos() srcPos { return srcPos{r.srcPart, r.srcOff} }

// add counts r into d, which is new when nil; it returns d.
func (d *insertDest) add(r *insertRow) *insertDest {
	if d == nil {
		d = &insertDest{first: r.pos()}
	}
	d.records++
	d.bytes += r.rec.Size()
	d.last = r.pos()
	return d
}

// bytesOf is a column's value as the bytes of a key or value: bytes as
// they are, text as its UTF-8, a number or boolean as its text, a JSON
// path's number, boolean, object or array as its JSON text (as jsonl
// writes it).
func bytesOf(v any, what string, at func() string) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return x, nil
	case result.JSON:
		return x, nil
	case string:
		return []byte(x), nil
	case int64, float64, bool:
		return fmt.Append(nil, x), nil
	case time.Time:
		return []byte(x.UTC().Format(time.RFC3339Nano)), nil
	}
	return nil, fmt.Errorf("the %s at %s is %T, which a record cannot hold", what, at(), v)
}

// dryRun reads the whole source and sums what each destination
// partition would get; from and upTo are the first and last source offset
// read per partition.
func (p *insertPlan) dryRun(ctx context.Context) (dests map[kafka.TopicPartition]*insertDest, from, upTo map[int32]int64, err error) {
	dests = map[kafka.TopicPartition]*insertDest{}
	from, upTo = map[int32]int64{}, map[int32]int64{}
	err = p.rows(ctx, func(r *insertRow) error {
		tp := kafka.TopicPartition{Topic: r.rec.Topic, Partition: r.rec.Partition}
		// A keyless record without a partition goes round robin: the dry
		// run counts it under the partition it drew this time.
		dests[tp] = dests[tp].add(r)
		if r.srcPart >= 0 {
			if _, ok := from[r.srcPart]; !ok {
				from[r.srcPart] = r.srcOff
			}
			upTo[r.srcPart] = r.srcOff
		}
		return nil
	})
	return dests, from, upTo, err
}

func destRows(dests map[kafka.TopicPartition]*insertDest) []result.Row {
	keys := make([]kafka.TopicPartition, 0, len(dests))
	for tp := range dests {
		keys = append(keys, tp)
	}
	slices.SortFunc(keys, func(a, b kafka.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	rows := make([]result.Row, 0, len(keys))
	for _, tp := range keys {
		d := dests[tp]
		rows = append(rows, result.Row{tp.Topic, int64(tp.Partition), d.records, d.bytes, d.first.String(), d.last.String(), nil})
	}
	return rows
}

// execute writes the source's records in transactions. upTo, when set,
// bounds each source partition to what the dry run checked.
func (p *insertPlan) execute(ctx context.Context, upTo map[int32]int64) (result.Result, error) {
	w, err := p.s.cl.NewWriter(ctx, kafka.WriterConfig{TransactionalID: kafka.NewTransactionalID("insert"), MaxTxnRecords: insertTxnRecords,
		MaxBufferedRecords: insertBufferedRecords})
	if err != nil {
		return nil, err
	}
	defer w.Close()
	p.upTo = upTo
	// The shell's progress line: its ETA is against the records the check
	// counted, or else against the source offsets the range spans (captured
	// when the read starts), which the read passes row by row (WHERE may
	// leave some out, so records written are not the measure).
	// A LIMIT bounds the records too: the read ends at whichever of the
	// two it reaches first (LIMIT 1000 of a 1M-record range is done after
	// 1000 records, not 0.1% through).
	prog := result.MoveProgressOf(ctx)
	total := p.checkedRecords
	if sel := p.in.Select; total == 0 && sel.Limit != nil && !sel.HasAggregates() {
		total = *sel.Limit
	}
	prog.Begin(total, 0)
	readPos := map[int32]int64{} // source partition -> next offset the progress counts from
	dests := map[kafka.TopicPartition]*insertDest{}
	var txnDests map[kafka.TopicPartition]*insertDest // the open transaction's share
	copied := map[int32]int64{}                       // source partition -> last offset read into the open transaction
	committed := map[int32]int64{}                    // source partition -> last offset committed
	rd := &sourceRead{skipped: map[int32]int64{}}     // what the read consumed besides the rows: a resume's start and end
	resetTxn := func() { txnDests = map[kafka.TopicPartition]*insertDest{} }
	resetTxn()
	merge := func() {
		for tp, d := range txnDests {
			all := dests[tp]
			if all == nil {
				all = &insertDest{first: d.first}
				dests[tp] = all
			}
			all.records += d.records
			all.bytes += d.bytes
			all.last = d.last
		}
		resetTxn()
		for sp, o := range copied {
			committed[sp] = o
		}
	}
	readCtx := withRangeStarts(ctx, func(m map[int32]int64) {
		rd.starts = m
		for sp, o := range m {
			readPos[sp] = o
		}
	})
	readCtx = withRangeEnds(readCtx, func(m map[int32]int64) { rd.ends = m })
	readCtx = withReadBudget(readCtx, insertReadBudget) // see insert_memory.go
	readCtx = withSkipped(readCtx, func(sp int32, o int64) {
		rd.skipped[sp] = o
		rd.skips++
	})
	if p.checkedRecords == 0 {
		readCtx = withRangeSize(readCtx, func(n int64) { prog.Begin(total, n) })
	}
	err = p.rows(readCtx, func(r *insertRow) error {
		if r.srcPart >= 0 {
			if from, ok := readPos[r.srcPart]; ok && from >= 0 && r.srcOff >= from {
				prog.Consumed(r.srcOff + 1 - from)
				readPos[r.srcPart] = r.srcOff + 1
			}
			if upTo != nil {
				if last, ok := upTo[r.srcPart]; !ok || r.srcOff > last {
					return nil // arrived after the check: not part of this INSERT
				}
			}
			copied[r.srcPart] = r.srcOff
		}
		tp := kafka.TopicPartition{Topic: r.rec.Topic, Partition: r.rec.Partition}
		txnDests[tp] = txnDests[tp].add(r)
		done, err := w.Write(ctx, &r.rec)
		prog.Wrote(r.rec.Size())
		if done {
			merge()
		}
		return err
	})
	if err == nil {
		if err = w.Commit(ctx); err == nil {
			merge()
		}
	}
	var unknown *kafka.CommitUnknownError
	endProgress(prog, w, errors.As(err, &unknown))
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("cancelled: %w", err)
		}
		var n int64
		for _, d := range dests {
			n += d.records
		}
		if unknown != nil {
			inTxn := n
			for _, d := range txnDests {
				inTxn += d.records
			}
			return nil, p.failureUnknown(err, w, rd, committed, copied, n, inTxn)
		}
		return nil, p.failure(err, w, rd, committed, n)
	}
	res := result.NewSlice(insertCols, destRows(dests))
	res.Notes = append(res.Notes, fmt.Sprintf("%s committed as %s", countTransactions(w.Transactions(), "", ""), w.TransactionalID()))
	if warn := p.s.awaitReadable(ctx, w); warn != "" { // see move_readable.go
		res.Warns = append(res.Warns, warn)
	}
	return res, nil
}

// countTransactions is "1 transaction" or "n transactions", followed by
// the verb that agrees with it (one, many) when one is given.
func countTransactions[N ~int | ~int64](n N, one, many string) string {
	s := fmt.Sprintf("%d %s", n, plural(int(n), "transaction", "transactions"))
	if v := plural(int(n), one, many); v != "" {
		s += " " + v
	}
	return s
}
