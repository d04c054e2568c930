package kafka

// The one bounds helper on kfake's 3 brokers: one ListOffsets per leader
// broker per bound, carrying that leader's partitions; a partition that
// fails is a failure naming it and its broker, never a zero.

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// listOffsetsSeen is one ListOffsets a broker received.
type listOffsetsSeen struct {
	node      int32
	at        int64 // the partitions' timestamp (one per request)
	isolation int8
	parts     []int32
}

// observeListOffsets records every ListOffsets the brokers receive, in the
// order they receive them, without answering any.
func (f *tracedFake) observeListOffsets() func() []listOffsetsSeen {
	var mu sync.Mutex
	var seen []listOffsetsSeen
	f.ControlKey(int16(kmsg.ListOffsets), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		req := kr.(*kmsg.ListOffsetsRequest)
		s := listOffsetsSeen{node: f.CurrentNode(), at: -100, isolation: req.IsolationLevel}
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				s.at = p.Timestamp
				s.parts = append(s.parts, p.Partition)
			}
		}
		slices.Sort(s.parts)
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		return nil, nil, false
	})
	return func() []listOffsetsSeen {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// boundsTopic is a 6-partition topic led by brokers p%3, partition p
// holding p+1 records, of which partition 5's first 2 are deleted: its
// earliest offset is 2, the others' 0.
func (f *tracedFake) boundsTopic(t *testing.T) []TopicPartition {
	t.Helper()
	parts := f.topic(t, "t", 6)
	kcl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer kcl.Close()
	var recs []*kgo.Record
	for p := range int32(6) {
		for range p + 1 {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Value: []byte("v")})
		}
	}
	require.NoError(t, kcl.ProduceSync(context.Background(), recs...).FirstErr())
	var before kadm.Offsets
	before.Add(kadm.Offset{Topic: "t", Partition: 5, At: 2})
	del, err := f.adm.DeleteRecords(context.Background(), before)
	require.NoError(t, err)
	require.NoError(t, del.Error())
	return parts
}

func TestBoundsOneListOffsetsPerLeaderPerBound(t *testing.T) {
	f := newTracedFake(t)
	parts := f.boundsTopic(t)
	m, err := f.cl.Metadata(context.Background(), []string{"t"})
	require.NoError(t, err)
	seen := f.observeListOffsets()
	b, err := f.cl.Bounds(context.Background(), m, parts, BoundsOptions{ReadCommitted: true})
	require.NoError(t, err)
	require.Nil(t, b.Failed)
	require.Equal(t, map[TopicPartition]Span{
		parts[0]: {0, 1}, parts[1]: {0, 2}, parts[2]: {0, 3}, parts[3]: {0, 4}, parts[4]: {0, 5}, parts[5]: {2, 6},
	}, b.Spans)
	// Six requests: each leader once for the earliest (read_uncommitted:
	// the isolation only changes the latest) and once for the last stable
	// offset, with its own two partitions.
	byBound := map[int64]map[int32][]int32{}
	for _, s := range seen() {
		if byBound[s.at] == nil {
			byBound[s.at] = map[int32][]int32{}
		}
		require.Nil(t, byBound[s.at][s.node], "broker %d asked twice for bound %d", s.node, s.at)
		byBound[s.at][s.node] = s.parts
		if s.at == Latest {
			require.EqualValues(t, 1, s.isolation, "the latest read_committed is the last stable offset")
		}
	}
	each := map[int32][]int32{0: {0, 3}, 1: {1, 4}, 2: {2, 5}}
	require.Equal(t, map[int64]map[int32][]int32{Earliest: each, Latest: each}, byBound)
}

// LatestAfterEarliest (RESET GROUP, DELETE RECORDS) asks every latest
// offset only after every earliest one answered.
func TestBoundsLatestAfterEarliest(t *testing.T) {
	f := newTracedFake(t)
	parts := f.boundsTopic(t)
	seen := f.observeListOffsets()
	b, err := f.cl.Bounds(context.Background(), nil, parts, BoundsOptions{LatestAfterEarliest: true})
	require.NoError(t, err)
	require.Len(t, b.Spans, 6)
	var order []int64
	for _, s := range seen() {
		order = append(order, s.at)
		require.EqualValues(t, 0, s.isolation)
	}
	require.Equal(t, []int64{Earliest, Earliest, Earliest, Latest, Latest, Latest}, order)
}

// A partition its leader fails is a failure naming the partition, the
// broker and its address; the others keep their bounds, and the failed
// one has no span (never 0..0).
func TestBoundsPartialNamesPartitionAndBroker(t *testing.T) {
	for _, bound := range []int64{Earliest, Latest} {
		f := newTracedFake(t)
		parts := f.boundsTopic(t)
		h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "t", Partitions: []int32{4}, Err: kerr.UnknownServerError, Count: -1,
			When: func(kr kmsg.Request) bool {
				return kr.(*kmsg.ListOffsetsRequest).Topics[0].Partitions[0].Timestamp == bound
			}})
		b, err := f.cl.Bounds(context.Background(), nil, parts, BoundsOptions{})
		// OffsetsAt keeps each query's answers apart: partition 4's other
		// bound is read.
		offs := f.cl.OffsetsAt(context.Background(), nil, parts, OffsetsOptions{}, OffsetQuery{At: Earliest}, OffsetQuery{At: Latest})
		h.Remove()
		require.NoError(t, FirstErr(offs...))
		failing, other := offs[0], offs[1]
		if bound == Latest {
			failing, other = other, failing
		}
		require.Equal(t, []int32{4}, failedPartitions(failing))
		require.Empty(t, other.Failed)
		require.Contains(t, other.Got, parts[4])
		require.NoError(t, err, "a partition's failure is no request error")
		require.Len(t, b.Spans, 5)
		require.NotContains(t, b.Spans, parts[4])
		require.Equal(t, Span{2, 6}, b.Spans[parts[5]])
		errs := b.Errors()
		require.Len(t, errs, 1)
		pe := errs[0]
		require.Equal(t, "t", pe.Topic)
		require.EqualValues(t, 4, pe.Partition)
		require.EqualValues(t, 1, pe.Broker, "partition 4's leader")
		m, err := f.cl.Metadata(context.Background(), []string{"t"})
		require.NoError(t, err)
		require.Equal(t, m.Addr(1), pe.Addr)
		require.ErrorIs(t, pe, kerr.UnknownServerError)
		require.Contains(t, pe.Error(), "partition t/4 on broker 1 ("+pe.Addr+")")

	}
}

func failedPartitions(o Offsets) []int32 {
	var out []int32
	for _, pe := range o.Errors() {
		out = append(out, pe.Partition)
	}
	return out
}

// The earliest offset answered past the latest (the log's start moved
// between the two concurrent answers; kfake's hook holds that race
// still, answering every earliest with 15 against a high watermark of
// 1..6): every span is empty at the start, none negative.
func TestBoundsLogStartPastTheLatestIsEmpty(t *testing.T) {
	f := newTracedFake(t)
	parts := f.boundsTopic(t)
	f.ControlKey(int16(kmsg.ListOffsets), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.ListOffsetsRequest)
		if req.Topics[0].Partitions[0].Timestamp != Earliest {
			return nil, nil, false
		}
		return kafkatest.ListOffsetsAnswer(req, func(p *kmsg.ListOffsetsResponseTopicPartition) {
			p.Offset, p.Timestamp = 15, -1
		}), nil, true
	})
	b, err := f.cl.Bounds(context.Background(), nil, parts, BoundsOptions{ReadCommitted: true})
	require.NoError(t, err)
	require.Len(t, b.Spans, 6)
	for tp, sp := range b.Spans {
		require.Equal(t, Span{15, 15}, sp, tp.String())
	}
}
