package kafka

import (
	"context"
	"slices"
	"time"
)

// A commit's EndTxn is answered before the brokers have written its
// markers (transaction version 2, KIP-890: the coordinator writes them
// after it answers), so for a moment after a commit the last stable offset
// of a partition written stops short of the commit's records: a
// read_committed read begun right then captures that end and misses them.
// WaitStable closes the gap. Routing: ListOffsets (latest, isolation
// read_committed) to each written partition's leader, one request per
// leader broker, again for the partitions still short.

// stablePause is the first pause between two rounds; it doubles up to
// stablePauseMax. Markers take milliseconds: the first pause is short.
const (
	stablePause    = 5 * time.Millisecond
	stablePauseMax = 200 * time.Millisecond
)

// ShortPartition is a written partition whose last stable offset was not
// yet past its last record written when WaitStable gave up.
type ShortPartition struct {
	TopicPartition
	LastWritten int64 // the offset of its last record written
	Stable      int64 // its last stable offset as last answered; -1: never answered
	Err         error // the last error its leader answered, if any
}

// WaitStable waits until the last stable offset of each partition of
// written (what a Writer committed) is past its last record written, so
// that a read_committed read begun now sees every record committed. It
// asks until ctx ends (the caller bounds it) and returns the partitions
// still short then, with ctx's error; nil, nil when every one is readable.
func (c *Cluster) WaitStable(ctx context.Context, written []PartitionWritten) ([]ShortPartition, error) {
	short := map[TopicPartition]*ShortPartition{}
	var topics []string
	for _, pw := range written {
		if pw.LastOffset < 0 {
			continue
		}
		tp := TopicPartition{pw.Topic, pw.Partition}
		short[tp] = &ShortPartition{TopicPartition: tp, LastWritten: pw.LastOffset, Stable: -1}
		if !slices.Contains(topics, pw.Topic) {
			topics = append(topics, pw.Topic)
		}
	}
	if len(short) == 0 {
		return nil, nil
	}
	left := func(err error) ([]ShortPartition, error) {
		out := make([]ShortPartition, 0, len(short))
		for _, sp := range short {
			out = append(out, *sp)
		}
		slices.SortFunc(out, func(a, b ShortPartition) int { return compareTP(a.TopicPartition, b.TopicPartition) })
		return out, err
	}
	m, err := c.Metadata(ctx, topics)
	if err != nil {
		return left(err)
	}
	pause := stablePause
	for {
		parts := make([]TopicPartition, 0, len(short))
		for tp := range short {
			parts = append(parts, tp)
		}
		slices.SortFunc(parts, compareTP)
		got, failed, err := c.ListOffsets(ctx, m, parts, Latest, true)
		for tp, a := range got {
			if sp := short[tp]; sp != nil {
				sp.Stable, sp.Err = a.Offset, nil
				if a.Offset > sp.LastWritten {
					delete(short, tp)
				}
			}
		}
		for tp, pe := range failed {
			if sp := short[tp]; sp != nil {
				sp.Err = pe
			}
		}
		if len(short) == 0 {
			return nil, nil
		}
		if err != nil {
			return left(err)
		}
		select {
		case <-ctx.Done():
			return left(ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, stablePauseMax)
	}
}
