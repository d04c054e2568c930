package kafka

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// A leader that just lost its partition (a broker restarting, a
// reassignment) answers Produce NOT_LEADER_OR_FOLLOWER; kgo retries the
// record after its next metadata refresh. With kgo's default of at most one
// refresh every 5 s, six such answers held a single-record PRODUCE for
// about 30 s, its whole delivery timeout (measured: it failed); Kafka's
// producer retries after retry.backoff.ms, 100 ms. Six refusals in a row
// must not fail the PRODUCE, and it must not take the refreshes' 5 s each.
func TestProduceRetriesANotLeaderAnswerPromptly(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 3)
	var refused atomic.Int64
	f.ControlKey(int16(kmsg.Produce), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if refused.Load() >= 6 {
			return nil, nil, false
		}
		refused.Add(1)
		return kafkatest.ProduceFailing(kr.(*kmsg.ProduceRequest), kerr.NotLeaderForPartition.Code), nil, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	got, err := f.cl.Produce(ctx, &OutRecord{Topic: "t", Partition: 2, Value: []byte("v")})
	require.NoError(t, err)
	require.Equal(t, int32(2), got.Partition)
	require.Equal(t, int64(6), refused.Load(), "every refusal was retried")
	// Six 5-second refreshes are 30 s, past the delivery timeout; six
	// 100 ms ones are well under a second. 20 s leaves room for a loaded
	// machine without letting the 5-second steps through.
	require.Less(t, time.Since(start), 20*time.Second)
}
