package main

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// floorMain is the floor contender (-floor): the least any client can do to
// read the topic. A bare franz-go consumer assigns every partition without a
// group, starts at the start offsets, reads up to the end offsets captured
// before it starts, drops the records, and prints how many it read.
//
// With a format (-floor-format jsonl), it writes each record instead, with
// kql's own per-record encoder through a 64 KiB buffer, in the order the
// fetches bring them (no merge): the least any client must do to write
// kql's output, so that the report can tell kql's overhead from the cost
// of the format itself.
func floorMain(ctx context.Context, bootstrap []string, topic, format string, out io.Writer) error {
	var enc result.RecordEncoder
	if format != "" {
		newEnc, err := render.RecordEncoderFor(format)
		if err != nil {
			return err
		}
		enc = newEnc()
	}
	admCl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...))
	if err != nil {
		return err
	}
	adm := kadm.NewClient(admCl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		admCl.Close()
		return fmt.Errorf("start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	admCl.Close()
	if err != nil {
		return fmt.Errorf("end offsets: %w", err)
	}

	assign := make(map[int32]kgo.Offset)
	end := make(map[int32]int64)
	var want int64
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(o.Topic, o.Partition)
		if o.Offset > s.Offset {
			assign[o.Partition] = kgo.NewOffset().At(s.Offset)
			end[o.Partition] = o.Offset
			want += o.Offset - s.Offset
		}
	})

	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	w := bufio.NewWriterSize(out, 64<<10)
	var (
		got int64
		rec result.Record
		buf []byte
	)
	for got < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, e := range fs.Errors() {
			return fmt.Errorf("fetch %s/%d: %w", e.Topic, e.Partition, e.Err)
		}
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			// Count only what lies before the captured end, as a reader
			// bounded by "the end when I started" would.
			for _, r := range p.Records {
				if r.Offset >= end[p.Partition] {
					continue
				}
				got++
				if enc == nil {
					continue
				}
				rec.Partition, rec.Offset, rec.Timestamp = r.Partition, r.Offset, r.Timestamp.UnixMilli()
				rec.Key, rec.Value = r.Key, r.Value
				rec.Headers = rec.Headers[:0]
				for _, h := range r.Headers {
					rec.Headers = append(rec.Headers, result.Header{Key: h.Key, Value: h.Value})
				}
				buf = enc(buf[:0], &rec)
				w.Write(buf)
			}
		})
	}
	if enc == nil {
		fmt.Fprintln(w, got)
	}
	return w.Flush()
}
