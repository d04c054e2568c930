package kafka

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

// FollowStream hands out a follow read's records one at a time, in the
// order they arrive, in kql's own result.Record.
type FollowStream struct {
	rd   *Reader
	recs []*kgo.Record
	i    int
}

// NewFollowStream follows each partition from its start, with no end,
// read_committed.
func (c *Cluster) NewFollowStream(ctx context.Context, m *Metadata, starts []Range, budget int64) *FollowStream {
	return &FollowStream{rd: c.NewFollowReader(ctx, m, starts, budget, true)}
}

// Reader is the follow reader: partitions added, the last failure, Close.
func (f *FollowStream) Reader() *Reader { return f.rd }

// Next fills dst with the next record already fetched (reusing dst's
// header slice); false when none is buffered: Wait for more.
func (f *FollowStream) Next(dst *result.Record) bool {
	if f.i >= len(f.recs) {
		return false
	}
	rec := f.recs[f.i]
	f.i++
	fillRecord(dst, rec, rec.Partition, rec.Offset, rec.Timestamp.UnixMilli())
	return true
}

// Wait waits at most wait for the next records of any partition; none
// may come. err is the read's end: its failure, ErrReaderClosed, or the
// statement's cancellation.
func (f *FollowStream) Wait(wait time.Duration) error {
	_, recs, err := f.rd.TakeAny(wait)
	if err != nil {
		return err
	}
	f.recs, f.i = recs, 0
	return nil
}
