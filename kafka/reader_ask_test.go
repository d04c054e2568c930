package kafka

// A partition whose batches are larger than its share of the read budget:
// Kafka returns a batch larger than a partition's ask only to the first
// partition of a Fetch (KIP-74), so each of the others must ask for a
// whole batch, or it is read one batch per round trip to its broker.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

// bigBatches writes rounds batches of perBatch incompressible 1,000-byte
// records to each of the topic's partitions (one batch per partition a
// round): 60 records make a 60 KB batch.
func bigBatches(t *testing.T, f *tracedFake, topic string, parts int32, rounds, perBatch int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	plain, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	require.NoError(t, err)
	defer plain.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range rounds {
		var recs []*kgo.Record
		for p := range parts {
			for i := range perBatch {
				v := make([]byte, 1000)
				for j := range v {
					v[j] = byte('a' + rng.IntN(26))
				}
				copy(v, fmt.Sprintf("p=%d n=%d ", p, round*perBatch+i))
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: v})
			}
		}
		require.NoError(t, plain.ProduceSync(ctx, recs...).FirstErr())
	}
}

func TestFetchBringsEveryPartitionWhoseAskCoversItsBatch(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "big", 2)
	require.NoError(t, f.MoveTopicPartition("big", 1, 0)) // both led by broker 0: one Fetch
	bigBatches(t, f, "big", 2, 1, 60)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := f.cl.Metadata(ctx, []string{"big"})
	require.NoError(t, err)
	p0, p1 := TopicPartition{"big", 0}, TopicPartition{"big", 1}

	// Partition 0 comes first and asks for less than its batch: the
	// batch comes whole and fills more than its ask of the response.
	// Partition 1 asks for its whole batch and must get it too.
	asks := map[TopicPartition]int32{p0: 4 << 10, p1: 70_000}
	got, failed, err := f.cl.fetchOrdered(ctx, m, []TopicPartition{p0, p1}, map[TopicPartition]int64{p0: 0, p1: 0},
		func(tp TopicPartition) int32 { return asks[tp] }, true, nil, nil, true)
	require.NoError(t, err)
	require.Empty(t, failed)
	require.Len(t, got[p0].Records, 60, "the first partition's batch, larger than its ask")
	require.Len(t, got[p1].Records, 60, "the second partition's batch, within its ask")
	require.Len(t, f.sent("Fetch"), 1)
}

func TestReaderAskGrowsToAPartitionsBatches(t *testing.T) {
	tp := TopicPartition{"t", 0}
	newReader := func() (*Reader, *readPart) {
		// One of 8 partitions: a share of 640 KiB / 16, 40 KiB.
		p := &readPart{tp: tp, end: 1000}
		r := &Reader{budget: 640 << 10, expansion: 1, parts: map[TopicPartition]*readPart{tp: p}, order: make([]*readPart, 8)}
		r.order[0] = p
		return r, p
	}
	asks := map[TopicPartition]int32{}
	share := int32(40 << 10)
	// next is the ask of p's next Fetch after an answer a, p having come
	// first in its broker's Fetch or not.
	next := func(r *Reader, p *readPart, a FetchAnswer, first bool) int32 {
		t.Helper()
		r.planAsksLocked([]*readPart{p}, asks)
		r.apply(p, a, first)
		r.reserved = 0 // the lane releases it once the answer is applied
		r.planAsksLocked([]*readPart{p}, asks)
		r.reserved = 0
		return asks[tp]
	}
	empty := FetchAnswer{Next: 0, HWM: 1000, LSO: 1000}

	// Not first and empty though it has records: it did not get a batch
	// that did not fit its ask, which doubles, and doubles again.
	r, p := newReader()
	require.Equal(t, share, r.askBytes())
	require.Equal(t, 2*share, next(r, p, empty, false))
	require.Equal(t, 4*share, next(r, p, empty, false))

	// The first partition of a Fetch gets a batch whatever its ask: come
	// back empty, it has no batch to get.
	r, p = newReader()
	require.Equal(t, share, next(r, p, empty, true))

	// At its log's end, or at its last stable offset for a read_committed
	// read (a transaction still open after it), it has nothing to get.
	r, p = newReader()
	require.Equal(t, share, next(r, p, FetchAnswer{Next: 0, HWM: 0, LSO: 0}, false))
	r, p = newReader()
	r.readCommitted = true
	require.Equal(t, share, next(r, p, FetchAnswer{Next: 0, HWM: 1000, LSO: 0}, false))
	r.readCommitted = false
	require.Equal(t, 2*share, next(r, p, FetchAnswer{Next: 0, HWM: 1000, LSO: 0}, false), "read_uncommitted reads up to the HWM")

	// Empty because the response was full before its turn (Limited): its
	// batches may well fit its ask.
	r, p = newReader()
	require.Equal(t, share, next(r, p, FetchAnswer{Next: 0, HWM: 1000, LSO: 1000, Limited: true}, false))

	// Still empty at maxAsk: its batches are larger than any ask, and it
	// goes back to its share for good instead of reserving 1 MiB of the
	// budget for nothing, Fetch after Fetch.
	r, p = newReader()
	r.budget = 64 << 20
	r.order = make([]*readPart, 800) // a share of 40 KiB again, about
	r.order[0] = p
	share = r.askBytes()
	for want := 2 * share; want < maxAsk; want *= 2 {
		require.Equal(t, want, next(r, p, empty, false))
	}
	require.Equal(t, int32(maxAsk), next(r, p, empty, false))
	require.Equal(t, share, next(r, p, empty, false), "the ask after an empty answer at 1 MiB")
	require.Equal(t, share, next(r, p, empty, false))

	// A grown ask counts against the budget while its Fetch is out, and
	// without room for it the partition asks for its share.
	r, p = newReader()
	share = r.askBytes()
	p.grown = 200 << 10
	r.buffered = 340 << 10 // 300 KiB left: the 200 KiB response and what it decodes into do not fit
	reserve := r.planAsksLocked([]*readPart{p}, asks)
	require.Equal(t, share, asks[tp], "the ask with 300 KiB of the budget left")
	require.Equal(t, int64(2*share), reserve, "the response and what it decodes into, 1 byte each per byte")
	r.buffered, r.reserved = 0, 0
	reserve = r.planAsksLocked([]*readPart{p}, asks)
	require.Equal(t, int32(200<<10), asks[tp], "the ask with the budget free")
	require.Equal(t, int64(400<<10), r.reserved)
	require.Equal(t, int64(400<<10), reserve)

	// A partition waiting for a leader may hold its Fetch for seconds:
	// it asks for its share meanwhile.
	r, p = newReader()
	p.grown = 200 << 10
	p.wait.since = time.Now()
	r.planAsksLocked([]*readPart{p}, asks)
	require.Equal(t, share, asks[tp])
}

func TestFetchResponseRoomLeftAtEachPartition(t *testing.T) {
	parts := []TopicPartition{{"t", 0}, {"t", 1}, {"t", 2}}
	ask := func(TopicPartition) int32 { return 40 << 10 }
	// MaxBytes: 3 x 40 KiB + 1 MiB. A first batch of 1 MiB leaves each
	// partition after it its ask; one of 1.1 MiB leaves the second less.
	require.Equal(t, []bool{false, false, false}, limitedInResponse(parts, []int{1 << 20, 40 << 10, 0}, ask))
	require.Equal(t, []bool{false, true, true}, limitedInResponse(parts, []int{1<<20 + 100<<10, 0, 0}, ask))
	require.Equal(t, []bool{false, false, true}, limitedInResponse(parts, []int{1<<20 + 60<<10, 40 << 10, 0}, ask))
}

// A merge over partitions whose batches are larger than their shares,
// with asks growing and falling back to the share as the budget's room
// comes and goes: every record once, in each partition's order.
func TestMergeOverBatchesLargerThanTheShares(t *testing.T) {
	f := newTracedFake(t)
	const parts, rounds, perBatch = 6, 8, 60
	f.topic(t, "big", parts)
	bigBatches(t, f, "big", parts, rounds, perBatch)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := f.cl.Metadata(ctx, []string{"big"})
	require.NoError(t, err)
	var ranges []Range
	for p := range int32(parts) {
		ranges = append(ranges, Range{TP: TopicPartition{"big", p}, Start: 0, End: rounds * perBatch})
	}
	// 640 KiB / (2 x 6 partitions): a share of 53 KB against 60 KB
	// batches.
	mg := f.cl.NewMerge(ctx, m, ranges, 640<<10)
	defer mg.Close()
	var dst result.Record
	next := map[int32]int{}
	for {
		ok, err := mg.Next(&dst)
		require.NoError(t, err)
		if !ok {
			break
		}
		want := fmt.Sprintf("p=%d n=%d ", dst.Partition, next[dst.Partition])
		require.True(t, bytes.HasPrefix(dst.Value, []byte(want)), "%d@%d: %q, want %q", dst.Partition, dst.Offset, dst.Value[:20], want)
		next[dst.Partition]++
	}
	for p := range int32(parts) {
		require.Equal(t, rounds*perBatch, next[p], "records of partition %d", p)
	}
	require.Empty(t, mg.Reader().Missing())
	require.Zero(t, mg.Reader().reserved, "memory reserved for Fetches after the read")
}
