package exec

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/result"
)

// merger is a read's ranges and what failed before it (ListOffsets): it
// starts kafka.Merge, which hands the records out in (timestamp,
// partition, offset) order, at the first next.
type merger struct {
	budget  int64 // bytes buffered ahead; 0 = kafka.DefaultReadBudget
	ctx     context.Context
	cl      *kafka.Cluster
	m       *kafka.Metadata
	ranges  []kafka.Range
	mx      *kafka.Merge                  // nil until the read starts
	missing []error                       // failures before the read (ListOffsets)
	live    *atomic.Pointer[kafka.Reader] // where the reader is published for progress; may be nil
	// newEncoder, when set before the read starts, makes the reader's
	// lanes encode the records (kafka.NewEncodedMerge): read with
	// nextEncoded.
	newEncoder func() result.RecordEncoder
}

func (mg *merger) add(tp kafka.TopicPartition, start, end int64) {
	mg.ranges = append(mg.ranges, kafka.Range{TP: tp, Start: start, End: end})
}

// start begins fetching; it is called by the first next.
func (mg *merger) start() {
	if mg.mx != nil {
		return
	}
	slices.SortFunc(mg.ranges, func(a, b kafka.Range) int { return int(a.TP.Partition) - int(b.TP.Partition) })
	if mg.newEncoder != nil {
		mg.mx = mg.cl.NewEncodedMerge(mg.ctx, mg.m, mg.ranges, mg.budget, mg.newEncoder)
	} else {
		mg.mx = mg.cl.NewMerge(mg.ctx, mg.m, mg.ranges, mg.budget)
	}
	if mg.live != nil {
		mg.live.Store(mg.mx.Reader())
	}
}

// next fills dst with the next record in row order; false at the end or
// on err.
func (mg *merger) next(dst *result.Record) (bool, error) {
	mg.start()
	return mg.mx.Next(dst)
}

// nextEncoded is next for a merger with newEncoder: the next record's
// encoded bytes.
func (mg *merger) nextEncoded() ([]byte, bool, error) {
	mg.start()
	return mg.mx.NextEncoded()
}

// appendEncoded is nextEncoded for a run of records (kafka.Merge.AppendEncoded).
func (mg *merger) appendEncoded(dst []byte, max, size int) ([]byte, int, bool, error) {
	mg.start()
	return mg.mx.AppendEncoded(dst, max, size)
}

// nextUnread is the offset of tp's first record not handed out, and
// whether tp still has records before its end.
func (mg *merger) nextUnread(tp kafka.TopicPartition) (pos int64, more bool) {
	if mg.mx == nil {
		for _, rg := range mg.ranges {
			if rg.TP == tp {
				return rg.Start, rg.Start < rg.End
			}
		}
		return 0, false
	}
	return mg.mx.NextUnread(tp)
}

// close stops the reader's fetches.
func (mg *merger) close() {
	if mg.mx != nil {
		mg.mx.Close()
	}
}

// allMissing is every partition that could not be read, before or during
// the read.
func (mg *merger) allMissing() []error {
	out := slices.Clone(mg.missing)
	if mg.mx != nil {
		out = append(out, mg.mx.Reader().Missing()...)
	}
	return out
}

// keys reads every range in full, partition by partition (no merge), and
// returns each partition's (timestamp, offset) keys in offset order, of
// the records keep accepts (nil: all).
func (mg *merger) keys(dst *result.Record, keep func(*result.Record) bool) (map[kafka.TopicPartition][]kafka.RecordKey, error) {
	mg.start()
	defer mg.close()
	return mg.mx.Keys(dst, keep)
}
