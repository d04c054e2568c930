package exec

import (
	"context"

	"github.com/kql-dev/kql/kafka"
)

// A statement that runs a SELECT as its source (INSERT ... SELECT) needs
// to know where the SELECT's forward read starts in every partition it
// selected, not only in those whose rows came through: a resume statement
// must cover every partition of the original range.

type rangeStartsKey struct{}

// withRangeStarts asks the forward read run under ctx to report, once its
// range is resolved, its start offset per selected partition; a partition
// whose offsets could not be listed is reported at -1 (read from the
// oldest offset).
func withRangeStarts(ctx context.Context, fn func(map[int32]int64)) context.Context {
	return context.WithValue(ctx, rangeStartsKey{}, fn)
}

func reportRangeStarts(ctx context.Context, selected []kafka.TopicPartition, ranges []kafka.Range) {
	reportRangeSize(ctx, ranges)
	reportRangeEnds(ctx, ranges)
	fn, _ := ctx.Value(rangeStartsKey{}).(func(map[int32]int64))
	if fn == nil {
		return
	}
	starts := make(map[int32]int64, len(selected))
	for _, tp := range selected {
		starts[tp.Partition] = -1
	}
	for _, rg := range ranges {
		starts[rg.TP.Partition] = rg.Start
	}
	fn(starts)
}

type rangeSizeKey struct{}

// withRangeSize asks the forward read run under ctx to report, once its
// range is resolved, how many offsets the range spans across its
// partitions (from each start to the end captured then): what INSERT's
// progress line measures its ETA against.
func withRangeSize(ctx context.Context, fn func(int64)) context.Context {
	return context.WithValue(ctx, rangeSizeKey{}, fn)
}

func reportRangeSize(ctx context.Context, ranges []kafka.Range) {
	fn, _ := ctx.Value(rangeSizeKey{}).(func(int64))
	if fn == nil {
		return
	}
	var n int64
	for _, rg := range ranges {
		n += max(rg.End-rg.Start, 0)
	}
	fn(n)
}

type rangeEndsKey struct{}

// withRangeEnds asks the forward read run under ctx to report, once its
// range is resolved, the end offset (exclusive) it captured per partition:
// where the read stops, and so where a resume of it must stop too (records
// that arrive later were never the statement's). A partition whose offsets
// could not be listed is not in the map.
func withRangeEnds(ctx context.Context, fn func(map[int32]int64)) context.Context {
	return context.WithValue(ctx, rangeEndsKey{}, fn)
}

func reportRangeEnds(ctx context.Context, ranges []kafka.Range) {
	fn, _ := ctx.Value(rangeEndsKey{}).(func(map[int32]int64))
	if fn == nil {
		return
	}
	ends := make(map[int32]int64, len(ranges))
	for _, rg := range ranges {
		ends[rg.TP.Partition] = rg.End
	}
	fn(ends)
}

type skippedKey struct{}

// withSkipped asks the forward read run under ctx to report each record
// its SKIP leaves out (SKIP counts over the merged order, after WHERE):
// a resume must start each partition past the records skipped in it, and
// skip only what was still to skip.
func withSkipped(ctx context.Context, fn func(partition int32, offset int64)) context.Context {
	return context.WithValue(ctx, skippedKey{}, fn)
}

func skippedReporter(ctx context.Context) func(int32, int64) {
	fn, _ := ctx.Value(skippedKey{}).(func(int32, int64))
	return fn
}
