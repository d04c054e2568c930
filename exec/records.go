package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

var deleteRecordsCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("low_watermark_before", result.Int),
	col("low_watermark_after", result.Int), col("records_deleted", result.Int),
}

type deleteRow struct {
	tp     kafka.TopicPartition
	before int64 // the log start offset now
	target int64 // the new log start: max(before, the BEFORE offset)
}

func deleteWhat(st *lang.DeleteRecords) string {
	return fmt.Sprintf("DELETE RECORDS FROM %q", st.Topic)
}

// planDeleteRecords computes what DELETE RECORDS would delete, without
// deleting anything. An offset past a partition's end fails the whole
// statement before anything is deleted, as the broker would refuse that
// partition (OFFSET_OUT_OF_RANGE) after deleting the others.
func (s *Session) planDeleteRecords(ctx context.Context, st *lang.DeleteRecords) ([]deleteRow, *kafka.Metadata, error) {
	what := deleteWhat(st)
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, nil, err
	}
	route, err := routeDeleteRecords(st, m.Topics[st.Topic])
	if err != nil {
		return nil, nil, err
	}
	parts, want := route.parts, route.want
	lo, hi, err := s.logRange(ctx, m, parts, what)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]deleteRow, 0, len(parts))
	var past []string
	for _, tp := range parts {
		if want[tp] > hi[tp] {
			past = append(past, fmt.Sprintf("%s ends at offset %d (before %d)", tp, hi[tp], want[tp]))
			continue
		}
		rows = append(rows, deleteRow{tp: tp, before: lo[tp], target: max(lo[tp], want[tp])})
	}
	if len(past) > 0 {
		return nil, nil, fmt.Errorf("%s: nothing was deleted: the offset is past the end of %s; records are deleted only up to a partition's end: name a lower offset, or give each partition its own with BEFORE (p:o, ...)",
			what, strings.Join(past, ", "))
	}
	return rows, m, nil
}

func (s *Session) deleteRecords(ctx context.Context, st *lang.DeleteRecords) (result.Result, error) {
	plan, m, err := s.planDeleteRecords(ctx, st)
	if err != nil {
		return nil, err
	}
	var got map[kafka.TopicPartition]int64
	var failed map[kafka.TopicPartition]*kafka.PartitionError
	var cancelled error
	if st.Execute {
		send := toDelete(plan) // nothing to delete: no request
		if len(send) > 0 {
			if got, failed, err = s.cl.DeleteRecords(ctx, m, send); err != nil {
				if ctx.Err() == nil || len(got) == 0 {
					return nil, fmt.Errorf("%s: %w", deleteWhat(st), err)
				}
				// Cancelled after some leaders answered: they deleted,
				// and that is shown; the others are unknown, not "not
				// deleted".
				cancelled = err
				for tp := range send {
					if _, ok := got[tp]; !ok && failed[tp] == nil {
						if failed == nil {
							failed = map[kafka.TopicPartition]*kafka.PartitionError{}
						}
						failed[tp] = &kafka.PartitionError{API: "DeleteRecords", Topic: tp.Topic, Partition: tp.Partition, Broker: -1, Err: err}
					}
				}
			}
		}
	}
	rows := make([]result.Row, 0, len(plan))
	var total int64
	for _, r := range plan {
		var after, deleted any = r.target, r.target - r.before
		if st.Execute && r.target > r.before {
			if lw, ok := got[r.tp]; ok {
				after, deleted = lw, lw-r.before
			} else {
				after, deleted = nil, nil // failed: see the error; never a made-up number
			}
		}
		if d, ok := deleted.(int64); ok {
			total += d
		}
		rows = append(rows, result.Row{r.tp.Topic, int64(r.tp.Partition), r.before, after, deleted})
	}
	res := result.NewSlice(deleteRecordsCols, rows)
	switch {
	case !st.Execute:
		run := *st
		run.Execute = true
		res.Notes = append(res.Notes, fmt.Sprintf("dry run: nothing was deleted (%s would go); to delete them run: %s;", countRecords(total), lang.Format(&run)))
	case cancelled != nil:
		res.Failure = &result.PartialError{What: fmt.Sprintf("DELETE RECORDS FROM %q, stopped (%v) before every leader answered (for the rows with a NULL low_watermark_after, their leader may have deleted or not: DESCRIBE TOPIC shows each earliest_offset)", st.Topic, cancelled), Missing: partitionErrors(failed)}
		res.Notes = append(res.Notes, fmt.Sprintf("executed in part: deleted %s that the leaders confirmed; %d %s unknown", countRecords(total), len(failed), plural(len(failed), "partition", "partitions")))
	case len(failed) > 0:
		res.Failure = &result.PartialError{What: fmt.Sprintf("DELETE RECORDS FROM %q (the rows with a NULL low_watermark_after were not deleted)", st.Topic), Missing: partitionErrors(failed)}
		res.Notes = append(res.Notes, fmt.Sprintf("executed in part: deleted %s; %d %s failed", countRecords(total), len(failed), plural(len(failed), "partition", "partitions")))
	default:
		res.Notes = append(res.Notes, fmt.Sprintf("executed: deleted %s from %q", countRecords(total), st.Topic))
	}
	return res, nil
}

func countRecords(n int64) string {
	return thousands(n) + " " + plural(int(min(n, 2)), "record", "records")
}

// thousands writes n with comma separators: 12,345.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
