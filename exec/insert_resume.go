package exec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// A failed INSERT ... EXECUTE says what it committed and gives the
// statement that copies the rest: exactly the records the original
// statement would have copied and did not commit, whatever its clauses.
//
//   - FROM ANCHOR: per source partition of the original range, the offset
//     after the last record the committed part consumed (copied, or left
//     out by SKIP), else where the range started.
//   - SKIP: what was still to skip. SKIP counts per statement, over the
//     merged order after WHERE, so once a row came through it is used up;
//     a resume that kept it would skip records that must be copied, one
//     that dropped it without moving the anchors would copy records the
//     original skipped.
//   - LIMIT: what is left of it.
//   - WHERE: the original one AND, per source partition, the offsets the
//     original was to read: up to the end offsets its read captured at the
//     start (INSERT INTO t), or to the last offset its check saw (INSERT
//     INTO TOPIC expr). A record that arrived since was never the
//     statement's; without the bound a resume would copy it, or, with a
//     LIMIT, copy it in place of one of the original's (newer records with
//     older timestamps come first in the merge). The resume of a resume
//     narrows the bound its WHERE has (see splitBound) rather than adding
//     another, which would grow with each interruption.
//
// The merge hands records out in (timestamp, partition, offset) order: the
// resumed read's merge of what is left of each partition hands out what
// the original's would have handed out next.

// sourceRead is what an INSERT's source read reported besides its rows.
type sourceRead struct {
	starts  map[int32]int64 // where the range starts per selected partition (-1: offsets not listed); nil: no forward read started
	ends    map[int32]int64 // the end offsets (exclusive) the read captured at its start; nil: not reported
	skipped map[int32]int64 // the last offset SKIP left out, per partition
	skips   int64           // how many records SKIP left out
}

// resumeOf is the INSERT that copies what the failed one had still to copy
// after done (per source partition, the last offset it copied) and
// copiedRows rows; when nothing is left, stmt is "" and none says why.
func (p *insertPlan) resumeOf(rd *sourceRead, done map[int32]int64, copiedRows int64) (stmt, none string, err error) {
	sel := *p.in.Select
	if sel.Limit != nil {
		left := *sel.Limit - copiedRows
		if left <= 0 {
			return "", fmt.Sprintf("all %d records the LIMIT asked for", copiedRows), nil
		}
		sel.Limit = &left
	}
	sel.Skip = nil
	if p.checked == nil && p.in.Select.Skip != nil { // the checked read skips nothing: its start is past SKIP
		if left := *p.in.Select.Skip - rd.skips; left > 0 {
			sel.Skip = &left
		}
	}
	rest, prior := splitBound(sel.Where)
	var pos []lang.PartitionOffset
	var bound []string
	for _, sp := range sourcePartitions(rd.starts, done) {
		from := max(rd.starts[sp], 0)
		if o, ok := rd.skipped[sp]; ok {
			from = max(from, o+1)
		}
		if o, ok := done[sp]; ok {
			from = max(from, o+1)
		}
		last, bounded := p.lastOffset(rd, sp)
		if prior != nil {
			// A resume being resumed: its bound is the original's, and
			// the read's ends may be past it (records that arrived since).
			had, ok := prior[sp]
			if !ok {
				continue // its bound leaves this partition out
			}
			if had != unbounded && (!bounded || had < last) {
				last, bounded = had, true
			}
		}
		if bounded && last < from {
			continue // nothing of it is left
		}
		pos = append(pos, lang.PartitionOffset{Partition: sp, Offset: from})
		if bounded {
			bound = append(bound, fmt.Sprintf("partition = %d AND offset <= %d", sp, last))
		} else {
			bound = append(bound, fmt.Sprintf("partition = %d", sp))
		}
	}
	if len(pos) == 0 {
		return "", "every record of its range", nil
	}
	sel.From = &lang.Start{Kind: lang.FromAnchor, Positions: pos}
	sel.Partitions = nil
	if p.upTo != nil || rd.ends != nil || prior != nil {
		where := strings.Join(bound, " OR ")
		if rest != nil {
			where = "(" + lang.FormatExpr(rest) + ") AND (" + where + ")"
		}
		q, err := lang.Parse("SELECT * FROM x WHERE " + where)
		if err != nil {
			return "", "", fmt.Errorf("the resume's bound: %w", err)
		}
		sel.Where = q.(*lang.Consume).Where
	}
	resume := *p.in
	resume.Select = &sel
	return lang.Format(&resume), "", nil
}

// unbounded is a bound term without an offset: `partition = n`.
const unbounded = math.MaxInt64

// splitBound splits the WHERE of a statement that may be a resume into
// the rest and the bound a resume adds (see resumeOf): the whole WHERE when
// it is one (the resume of an INSERT without WHERE), or the right side of
// its top AND. bound is the last offset per partition it lets through
// (unbounded for `partition = n`), nil when where has none; a partition
// not in it is left out whole. Any WHERE of this form restricts only
// partitions and offsets, so narrowing it instead of adding a second
// bound, as resumeOf does, keeps the same records whoever wrote it.
func splitBound(where lang.Expr) (rest lang.Expr, bound map[int32]int64) {
	if b := boundTerms(where); b != nil {
		return nil, b
	}
	if and, ok := where.(*lang.Binary); ok && and.Op == lang.OpAnd {
		if b := boundTerms(and.R); b != nil {
			return and.L, b
		}
	}
	return where, nil
}

// boundTerms reads e as `t OR t ...`, each t `partition = n AND offset <=
// m` or `partition = n`; nil when e is not of that form. A partition named
// twice lets through the union of its terms.
func boundTerms(e lang.Expr) map[int32]int64 {
	out := map[int32]int64{}
	var add func(e lang.Expr) bool
	add = func(e lang.Expr) bool {
		b, ok := e.(*lang.Binary)
		if !ok {
			return false
		}
		if b.Op == lang.OpOr {
			return add(b.L) && add(b.R)
		}
		part, last := b, int64(unbounded)
		if b.Op == lang.OpAnd {
			off, ok := b.R.(*lang.Binary)
			if !ok || off.Op != lang.OpLe || !isColumn(off.L, "offset") {
				return false
			}
			m, ok := intLit(off.R)
			if !ok {
				return false
			}
			if part, ok = b.L.(*lang.Binary); !ok {
				return false
			}
			last = m
		}
		if part.Op != lang.OpEq || !isColumn(part.L, "partition") {
			return false
		}
		n, ok := intLit(part.R)
		if !ok || n < 0 || n > math.MaxInt32 {
			return false
		}
		if had, ok := out[int32(n)]; !ok || last > had {
			out[int32(n)] = last
		}
		return true
	}
	if e == nil || !add(e) {
		return nil
	}
	return out
}

func isColumn(e lang.Expr, name string) bool {
	c, ok := e.(*lang.Column)
	return ok && c.Name == name && c.Path == nil
}

// lastOffset is the last offset of source partition sp the failed INSERT
// was to copy: the last its check saw, or the one before the end its read
// captured; false when neither is known (its offsets could not be listed,
// or the read reports no ends).
func (p *insertPlan) lastOffset(rd *sourceRead, sp int32) (int64, bool) {
	if p.upTo != nil {
		last, ok := p.upTo[sp]
		if !ok {
			return -1, true // the check saw nothing of it
		}
		return last, true
	}
	end, ok := rd.ends[sp]
	return end - 1, ok
}

// sourcePartitions is every source partition a resume must name, sorted:
// those the range starts in and those rows came through from.
func sourcePartitions(starts, done map[int32]int64) []int32 {
	parts := make([]int32, 0, len(starts)+len(done))
	for sp := range starts {
		parts = append(parts, sp)
	}
	for sp := range done {
		if _, ok := starts[sp]; !ok {
			parts = append(parts, sp)
		}
	}
	slices.Sort(parts)
	return parts
}

// noOffsetResume says why an INSERT has no resume by source offset: its
// rows are aggregates, or come in ORDER BY's order (the last offset
// committed per partition does not say which rows are left), or its read
// went back from the end (FROM NEWEST, FROM TAIL: no forward range was
// reported, so neither where each partition's share began nor where it
// ended is known, and a FROM ANCHOR from the committed offsets would read
// past it and miss the partitions with nothing committed); "" when it has
// one.
func (p *insertPlan) noOffsetResume(rd *sourceRead, copied map[int32]int64) string {
	switch {
	case p.in.Select.OrderBy != nil:
		return "rows in ORDER BY's order carry no source offset to resume from: check the destination before running it again"
	case len(copied) > 0 && rd.starts == nil:
		return "a read back from the end (FROM NEWEST, FROM TAIL) carries no source range to resume from: check the destination before running it again"
	case len(copied) == 0:
		return "aggregate rows carry no source offset to resume from: check the destination before running it again"
	}
	return ""
}

// failure says what a failed EXECUTE committed, per source partition, and
// the statement that copies the rest. The resume lists every source
// partition of the original range with something left, also one none of
// whose rows came through before the failure (else they would never be
// copied).
func (p *insertPlan) failure(err error, w *kafka.Writer, rd *sourceRead, committed map[int32]int64, copiedRows int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT failed: %v", err)
	if w.Transactions() == 0 {
		if rd.starts == nil || p.in.Select.HasAggregates() {
			b.WriteString("; nothing was committed: run the same INSERT again")
			return errors.New(b.String())
		}
		stmt, _, rerr := p.resumeOf(rd, nil, 0)
		if rerr != nil || stmt == "" {
			b.WriteString("; nothing was committed: run the same INSERT again")
			return errors.New(b.String())
		}
		fmt.Fprintf(&b, "; nothing was committed (the same INSERT run again would also copy what arrived since it started); to copy the rest: %s", stmt)
		return errors.New(b.String())
	}
	if why := p.noOffsetResume(rd, committed); why != "" {
		fmt.Fprintf(&b, "; %s committed; %s", countTransactions(w.Transactions(), "was", "were"), why)
		return errors.New(b.String())
	}
	var done []string
	for _, sp := range sourcePartitions(nil, committed) {
		done = append(done, fmt.Sprintf("%d:%d", sp, committed[sp]))
	}
	fmt.Fprintf(&b, "; committed %s, the last source offset copied per partition: %s", countTransactions(w.Transactions(), "", ""), strings.Join(done, ", "))
	stmt, none, rerr := p.resumeOf(rd, committed, copiedRows)
	switch {
	case rerr != nil:
		fmt.Fprintf(&b, "; no resume statement: %v", rerr)
	case stmt == "":
		fmt.Fprintf(&b, "; committed %s, %s", countTransactions(w.Transactions(), "", ""), none)
	default:
		fmt.Fprintf(&b, "; to copy the rest: %s", stmt)
	}
	return errors.New(b.String())
}

// failureUnknown is a failure whose last commit got no answer: it says
// so, and gives the resume for either outcome, since only reading the
// destination tells which one happened.
func (p *insertPlan) failureUnknown(err error, w *kafka.Writer, rd *sourceRead, committed, copied map[int32]int64, copiedRows, withLast int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT failed: %v; %s committed before it", err, countTransactions(w.Transactions(), "was", "were"))
	if why := p.noOffsetResume(rd, copied); why != "" {
		fmt.Fprintf(&b, "; %s", why)
		return errors.New(b.String())
	}
	if stmt, _, rerr := p.resumeOf(rd, committed, copiedRows); rerr != nil {
		fmt.Fprintf(&b, "; no resume statement: %v", rerr)
		return errors.New(b.String())
	} else if stmt != "" {
		fmt.Fprintf(&b, "; if the destination (read_committed) does not hold the last transaction: %s", stmt)
	}
	if stmt, _, _ := p.resumeOf(rd, copied, withLast); stmt != "" {
		fmt.Fprintf(&b, "; if it does: %s", stmt)
	} else {
		b.WriteString("; if it does, the INSERT is complete")
	}
	return errors.New(b.String())
}
