package kafka

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// Under transaction version 2 (Kafka 4's default) the first Produce of a
// transaction to a partition whose previous transaction is still
// completing is answered CONCURRENT_TRANSACTIONS. The writer retries it as
// Kafka's producer does, after about retry.backoff.ms, not after kgo's
// 5-second metadata refresh: on the real 3-broker cluster nine small
// transactions took 45 s that way. Here every first attempt of a Produce
// is answered so (kfake itself never does): 24 transactions in a row
// commit in about 3 s (under -race and load, still far from the bound),
// where 24 waits of 5 s would take twice the 60 s bound.
func TestWriterRetriesConcurrentTransactionsPromptly(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 3)
	var produces atomic.Int64
	f.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.ProduceRequest)
		if req.TransactionID == nil || produces.Add(1)%2 == 0 {
			return nil, nil, false // the retry goes through
		}
		return kafkatest.ProduceFailing(req, kerr.ConcurrentTransactions.Code), nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := f.cl.NewWriter(ctx, WriterConfig{TransactionalID: NewTransactionalID("test"), MaxTxnRecords: 1})
	require.NoError(t, err)
	defer w.Close()
	for i := 0; i < 24; i++ {
		committed, err := w.Write(ctx, &OutRecord{Topic: "t", Partition: int32(i % 3), Value: []byte(fmt.Sprint(i))})
		require.NoError(t, err, "transaction %d", i+1)
		require.True(t, committed)
	}
	require.Equal(t, 24, w.Transactions())
	require.GreaterOrEqual(t, produces.Load(), int64(48), "every transaction's Produce was answered CONCURRENT_TRANSACTIONS once")
}

// A leader that does not know a partition's topic yet (a topic created a
// moment ago, whose metadata has not reached that broker) answers Produce
// UNKNOWN_TOPIC_OR_PARTITION. Kafka's producer retries it until its
// delivery timeout; kgo gives up after its 4th retry, which at the writer's
// 100 ms metadata refreshes is half a second, where kgo's 5-second
// refreshes gave it 20 s. Eight refusals in a row (about a second) do not
// fail the transaction.
func TestWriterRidesOutALeaderThatDoesNotKnowTheTopicYet(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 3)
	var refused atomic.Int64
	f.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.ProduceRequest)
		if req.TransactionID == nil || refused.Load() >= 8 {
			return nil, nil, false
		}
		refused.Add(1)
		return kafkatest.ProduceFailing(req, kerr.UnknownTopicOrPartition.Code), nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := f.cl.NewWriter(ctx, WriterConfig{TransactionalID: NewTransactionalID("test"), MaxTxnRecords: 1})
	require.NoError(t, err)
	defer w.Close()
	committed, err := w.Write(ctx, &OutRecord{Topic: "t", Partition: 1, Value: []byte("v")})
	require.NoError(t, err)
	require.True(t, committed)
	require.Equal(t, int64(8), refused.Load(), "every refusal was retried")
}
