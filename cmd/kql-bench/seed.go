package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// valueSize is the size of every seeded value: the "~100 B" records.
const valueSize = 100

// appendValue appends record i's value: JSON of exactly valueSize bytes (for
// any i below 10^30), with p a small int 0..9 so that WHERE value.p = 3 style
// benchmarks select a tenth of the records.
func appendValue(b []byte, i int64) []byte {
	start := len(b)
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `,"p":`...)
	b = strconv.AppendInt(b, i%10, 10)
	b = append(b, `,"name":"user-`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, '-')
	for len(b)-start < valueSize-2 {
		b = append(b, byte('a'+(len(b)-start)%26))
	}
	return append(b, `"}`...)
}

// seedValues is what a seeded topic's values are: seedTopic calls append
// for record i's value, which must be at most valueSize bytes.
type seedValues struct {
	desc   string // for the log line: "100 B JSON values"
	append func(b []byte, i int64) []byte
}

// jsonValues are the main topic's values (appendValue).
var jsonValues = seedValues{desc: fmt.Sprintf("%d B JSON values", valueSize), append: appendValue}

// appendKey appends record i's short key.
func appendKey(b []byte, i int64) []byte {
	return strconv.AppendInt(append(b, 'k'), i, 10)
}

// topicCount says whether topic exists, and how many records and partitions
// it has.
func topicCount(ctx context.Context, adm *kadm.Client, topic string) (records int64, partitions int, exists bool, err error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return 0, 0, false, err
	}
	d, ok := td[topic]
	if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return 0, 0, false, nil
	}
	if d.Err != nil {
		return 0, 0, false, fmt.Errorf("topic %s: %w", topic, d.Err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return 0, 0, true, fmt.Errorf("start offsets of %s: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, 0, true, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(o.Topic, o.Partition)
		records += o.Offset - s.Offset
	})
	return records, len(d.Partitions), true, nil
}

// seedTopic makes topic hold exactly n records in the given number of
// partitions, reusing it when it already does (so -b runs seed only once).
// Records go round-robin over the partitions with timestamps increasing by
// 1 ms per record, uncompressed, through one batched franz-go producer;
// record i has key appendKey(i) and value values.append(i), so every topic
// the bench seeds has the same shape whatever its values' encoding.
func seedTopic(ctx context.Context, bootstrap []string, topic string, n int64, partitions int, values seedValues, reseed bool, out io.Writer) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(bootstrap...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		// Batches of at most 64 KiB (the Java producer's default is 16 KiB):
		// the same shape whatever the seeding rate, so the 1x and 10x
		// topics of the flatness check differ only in length. An ordered
		// read holds at least one batch per partition, so batch size sets
		// a floor under any reader's memory.
		kgo.ProducerBatchMaxBytes(64<<10),
		kgo.MaxBufferedRecords(256<<10),
		kgo.ProducerLinger(5*time.Millisecond),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	have, parts, exists, err := topicCount(ctx, adm, topic)
	if err != nil {
		return err
	}
	if exists && have == n {
		fmt.Fprintf(out, "topic %s: reusing it (%d records, %d partitions)\n", topic, have, parts)
		return nil
	}
	if exists {
		if !reseed {
			return fmt.Errorf("topic %s exists with %d records, want %d: delete it, pass -reseed, or pick another -topic", topic, have, n)
		}
		if _, err := adm.DeleteTopic(ctx, topic); err != nil {
			return fmt.Errorf("deleting %s to re-seed it: %w", topic, err)
		}
		// Kafka deletes asynchronously; creating at once can fail with
		// TOPIC_ALREADY_EXISTS, so retry for a while.
	}
	// Replication factor 1: the reads only ever talk to leaders, and the
	// leaders are still spread over every broker; replicas would only cost
	// seeding time and disk.
	for attempt := 0; ; attempt++ {
		r, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
		if err == nil {
			err = r.Err
		}
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.TopicAlreadyExists) || attempt >= 60 {
			return fmt.Errorf("creating %s: %w", topic, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}

	start := time.Now()
	base := start.Add(-time.Duration(n) * time.Millisecond)
	var (
		mu       sync.Mutex
		firstErr error
	)
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	}
	// Keys and values are cut from shared chunks: one allocation per few
	// thousand records instead of two per record keeps seeding 10M quick.
	var chunk []byte
	for i := int64(0); i < n && ctx.Err() == nil; i++ {
		if cap(chunk)-len(chunk) < valueSize+32 {
			chunk = make([]byte, 0, 1<<20)
		}
		at := len(chunk)
		chunk = appendKey(chunk, i)
		key := chunk[at:len(chunk):len(chunk)]
		at = len(chunk)
		chunk = values.append(chunk, i)
		value := chunk[at:len(chunk):len(chunk)]
		cl.Produce(ctx, &kgo.Record{
			Topic:     topic,
			Partition: int32(i % int64(partitions)),
			Key:       key,
			Value:     value,
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
		}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("seeding %s: %w", topic, err)
	}
	if firstErr != nil {
		return fmt.Errorf("seeding %s: %w", topic, firstErr)
	}
	took := time.Since(start)
	have, _, _, err = topicCount(ctx, adm, topic)
	if err != nil {
		return err
	}
	if have != n {
		return fmt.Errorf("seeded %s but it holds %d records, want %d", topic, have, n)
	}
	fmt.Fprintf(out, "topic %s: seeded %d records of %s in %d partitions in %s (%.0fk records/s)\n",
		topic, n, values.desc, partitions, took.Round(100*time.Millisecond), float64(n)/took.Seconds()/1000)
	return nil
}
