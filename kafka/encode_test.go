package kafka

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

// A lane of an encoding reader keeps its scratch buffer from Fetch to
// Fetch for chunks of a partition's share of the budget, but not the
// buffer of a batch far larger than that (KIP-74 sends a first batch
// whole, however small the ask): the lane would hold its size, outside
// the budget, for the rest of the read. The chunk itself is encoded in
// full either way.
func TestEncodingLaneKeepsNoOversizedScratch(t *testing.T) {
	tp := TopicPartition{Topic: "t", Partition: 0}
	const budget = 256 << 10
	r := &Reader{budget: budget, encPool: newEncPool(budget), parts: map[TopicPartition]*readPart{tp: {tp: tp, end: 1 << 40}},
		newEncoder: func() result.RecordEncoder {
			return func(buf []byte, rec *result.Record) []byte { return append(append(buf, rec.Value...), '\n') }
		}}
	le := r.laneEncoder([]*readPart{r.parts[tp]})
	answer := func(n, size int) map[TopicPartition]FetchAnswer {
		a := FetchAnswer{}
		for i := range n {
			a.Records = append(a.Records, &kgo.Record{Offset: int64(i), Value: bytes.Repeat([]byte{'x'}, size)})
			a.Keys = append(a.Keys, RecordKey{Offset: int64(i)})
		}
		return map[TopicPartition]FetchAnswer{tp: a}
	}

	small := answer(100, 100) // 10 KB: a chunk of the partition's share
	le.encodeAll(small)
	if got := len(small[tp].Enc); got != 100*101 {
		t.Fatalf("the chunk's output is %d bytes, want %d", got, 100*101)
	}
	if cap(le.scratch) < 100*101 {
		t.Fatalf("the lane dropped its scratch after a chunk of %d bytes: the next chunk allocates again", 100*101)
	}

	big := answer(4000, 1000) // 4 MB: one oversized batch
	le.encodeAll(big)
	if got := len(big[tp].Enc); got != 4000*1001 {
		t.Fatalf("the oversized chunk's output is %d bytes, want %d", got, 4000*1001)
	}
	if held := cap(le.scratch) + 4*cap(le.ends); held > 2*budget {
		t.Fatalf("after a 4 MB batch the lane holds %d bytes of scratch until its next Fetch, beyond a %d-byte budget", held, budget)
	}
}
