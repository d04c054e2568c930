package kafka

// The ordered merge on kfake's 3 brokers: each record handed out carries
// its own (timestamp, partition, offset) — the keys the decoding goroutine
// fills into pooled arrays must stay aligned with the records they are of
// when arrays are reused many times and leaders move mid-read — and each
// record comes once, in the merge's row order.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

func TestMergeKeysMatchRecords(t *testing.T) {
	f := newTracedFake(t)
	const parts, perPart, perCall = 6, 240, 8
	f.topic(t, "t", parts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	plain, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer plain.Close()

	// Timestamps are random, out of offsets' order, and clash across
	// partitions; a record's value names its partition and timestamp.
	rng := rand.New(rand.NewPCG(3, 4))
	base := time.UnixMilli(1_700_000_000_000)
	want := map[string]bool{}
	for range perPart / perCall {
		var recs []*kgo.Record
		for p := range int32(parts) {
			for range perCall {
				ts := rng.Int64N(500)
				v := fmt.Sprintf("p=%d ts=%d n=%d", p, ts, len(want))
				want[v] = true
				recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Timestamp: base.Add(time.Duration(ts) * time.Millisecond), Value: []byte(v)})
			}
		}
		require.NoError(t, plain.ProduceSync(ctx, recs...).FirstErr())
	}

	m, err := f.cl.Metadata(ctx, []string{"t"})
	require.NoError(t, err)
	hwm := map[int32]int64{}
	lo, err := f.adm.ListEndOffsets(ctx, "t")
	require.NoError(t, err)
	lo.Each(func(o kadm.ListedOffset) { hwm[o.Partition] = o.Offset })
	var ranges []Range
	for p := range int32(parts) {
		ranges = append(ranges, Range{TP: TopicPartition{"t", p}, Start: 0, End: hwm[p]})
	}

	// A budget this small keeps a few batches per Fetch, so key arrays go
	// back to the pool and are refilled hundreds of times.
	mg := f.cl.NewMerge(ctx, m, ranges, 8<<10)
	defer mg.Close()
	var dst result.Record
	seen := map[string]bool{}
	got := map[TopicPartition][]RecordKey{}
	var order []KeyRef
	for n := 0; ; n++ {
		if n == len(want)/3 {
			// Every leader moves mid-read: the chunks in flight fail with
			// NOT_LEADER and are fetched again from the new leaders.
			for p := range int32(parts) {
				require.NoError(t, f.MoveTopicPartition("t", p, (p+1)%3))
			}
		}
		ok, err := mg.Next(&dst)
		require.NoError(t, err)
		if !ok {
			break
		}
		v := string(dst.Value)
		var p int32
		var ts int64
		_, err = fmt.Sscanf(v, "p=%d ts=%d", &p, &ts)
		require.NoError(t, err, "row %d: value %q", n, v)
		require.Equal(t, p, dst.Partition, "row %d (%q): partition", n, v)
		require.Equal(t, base.UnixMilli()+ts, dst.Timestamp, "row %d (%q) at %d@%d: timestamp", n, v, dst.Partition, dst.Offset)
		require.True(t, want[v], "row %d: %q was not written", n, v)
		require.False(t, seen[v], "row %d: %q twice", n, v)
		seen[v] = true
		tp := TopicPartition{"t", dst.Partition}
		if ks := got[tp]; len(ks) > 0 {
			require.Greater(t, dst.Offset, ks[len(ks)-1].Offset, "row %d (%q): offsets of %s go back", n, v, tp)
		}
		k := RecordKey{dst.Timestamp, dst.Offset}
		got[tp] = append(got[tp], k)
		order = append(order, KeyRef{tp, k})
	}
	require.Len(t, seen, len(want))
	require.Empty(t, mg.Reader().Missing())
	// The rows' order is the merge's row order of their own keys.
	require.Equal(t, OrderKeys(got), order)
}
