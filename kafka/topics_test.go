package kafka

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CREATE and DROP TOPIC go to the controller, and the controller's refusal
// is the topic's error naming the broker that answered.
func TestCreateAndDeleteTopicGoToTheController(t *testing.T) {
	f := newTracedFake(t)
	ctx := context.Background()
	m, err := f.cl.Metadata(ctx, []string{})
	require.NoError(t, err)
	require.NoError(t, f.cl.CreateTopic(ctx, NewTopic{Name: "t", Partitions: 2, Replication: 3, Configs: []TopicConfig{{"retention.ms", "60000"}}}))
	evs := f.sent("CreateTopics")
	require.Len(t, evs, 1)
	require.Equal(t, m.ControllerID, evs[0].Broker)
	require.Equal(t, []string{"t"}, evs[0].Items)

	err = f.cl.CreateTopic(ctx, NewTopic{Name: "t", Partitions: -1, Replication: -1})
	var te *TopicError
	require.True(t, errors.As(err, &te), "%v", err)
	require.True(t, IsTopicExists(err), "%v", err)
	require.Equal(t, m.ControllerID, te.Broker)

	require.NoError(t, f.cl.DeleteTopic(ctx, "t"))
	require.Equal(t, m.ControllerID, f.sent("DeleteTopics")[0].Broker)
	err = f.cl.DeleteTopic(ctx, "t")
	require.True(t, IsUnknownTopicOrPartition(err), "%v", err)
}

// An answer that leaves out the one topic asked says nothing of whether
// it was created or deleted: that is an error, never a success.
func TestTopicLeftOutOfTheAnswerIsNoSuccess(t *testing.T) {
	f := newTracedFake(t)
	ctx := context.Background()
	for _, key := range []kmsg.Key{kmsg.CreateTopics, kmsg.DeleteTopics} {
		f.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
			f.KeepControl()
			return req.ResponseKind(), nil, true // answered, with no topic in it
		})
	}
	err := f.cl.CreateTopic(ctx, NewTopic{Name: "t", Partitions: 1, Replication: 1})
	var te *TopicError
	require.True(t, errors.As(err, &te), "%v", err)
	require.ErrorContains(t, err, "did not mention this topic")
	err = f.cl.DeleteTopic(ctx, "t")
	require.True(t, errors.As(err, &te), "%v", err)
	require.ErrorContains(t, err, "did not mention this topic")
	require.False(t, errors.Is(err, kerr.UnknownTopicOrPartition))
}
