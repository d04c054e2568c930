package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A chunk of one small record holds one key, not a fixed minimum of them:
// the budget counts the record, not the key array, so a read of
// single-record batches would otherwise hold kilobytes per record.
func TestKeyArrayIsSizedByItsChunk(t *testing.T) {
	p := newKeyPool(DefaultReadBudget)
	one := p.keysOf([]*kgo.Record{{Offset: 7, Timestamp: time.UnixMilli(5)}})
	require.Equal(t, []RecordKey{{Timestamp: 5, Offset: 7}}, one)
	require.LessOrEqual(t, cap(one), 2)
	require.Nil(t, (*keyPool)(nil).keysOf([]*kgo.Record{{}}))
}

// FOLLOW never compares keys: its Fetches fill no key arrays (each would be
// an allocation per chunk, and at a topic's end a chunk is a record or two).
func TestFollowReaderFillsNoKeys(t *testing.T) {
	f := newTracedFake(t)
	parts := f.topic(t, "t", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kcl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer kcl.Close()
	require.NoError(t, kcl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 1, Value: []byte("v")}).FirstErr())
	m, err := f.cl.Metadata(ctx, []string{"t"})
	require.NoError(t, err)
	rd := f.cl.NewFollowReader(ctx, m, []Range{{TP: parts[1]}}, 0, true)
	defer rd.Close()
	recs, keys, err := rd.Take(parts[1])
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Nil(t, keys)
}
