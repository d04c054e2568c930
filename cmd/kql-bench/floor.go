package main

import (
	"context"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// floorMain is the floor contender (-floor): the least any client can do to
// read the topic. A bare franz-go consumer assigns every partition without a
// group, starts at the start offsets, reads up to the end offsets captured
// before it starts, drops the records, and prints how many it read.
func floorMain(ctx context.Context, bootstrap []string, topic string, out io.Writer) error {
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
	var got int64
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
				if r.Offset < end[p.Partition] {
					got++
				}
			}
		})
	}
	fmt.Fprintln(out, got)
	return nil
}
