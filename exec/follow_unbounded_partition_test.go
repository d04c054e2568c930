package exec

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

// FROM NEWEST ... FOLLOW with a partition whose leader did not answer when
// the statement began: once it answers, FOLLOW shows what is written to it
// from then on, not its whole history as if every old record were new.
// (kfake only: it fails ListOffsets for that partition's leader on cue.)
func TestFollowFailedPartitionStartsAtEnd(t *testing.T) {
	f := kafkatest.NewFake(t)
	s, _ := session(t, f)
	topic := kafkatest.TopicName(t)
	cl := kafkatest.Client(t, f, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	_, err := kadm.NewClient(cl).CreateTopic(ctxT(t), 2, 1, nil, topic)
	require.NoError(t, err)
	require.NoError(t, f.MoveTopicPartition(topic, 0, 0))
	require.NoError(t, f.MoveTopicPartition(topic, 1, 1))
	produceKeys(t, cl, topic, []int32{0, 1, 0, 1}, "old")
	var failing atomic.Bool
	failing.Store(true)
	f.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		r := req.(*kmsg.ListOffsetsRequest)
		if !failing.Load() || f.CurrentNode() != 1 {
			return nil, nil, false
		}
		return kafkatest.ListOffsetsFailing(r, kerr.UnknownServerError.Code), nil, true
	})
	fl := follow(t, s, fmt.Sprintf("CONSUME %s FOLLOW", lang.QuoteName(topic)))
	require.Equal(t, []string{"old-0", "old-2"}, fl.take(t, 2, 5*time.Second))
	failing.Store(false)
	time.Sleep(followNewPartitions + time.Second)
	want := produceKeys(t, cl, topic, []int32{1, 0}, "new")
	require.ElementsMatch(t, want, fl.take(t, 2, 5*time.Second), "only the new records")
}
