package kafka

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A topic another client has just created reaches the brokers one after
// the other: the broker kql asks may not know it yet while the others do.
// kql must not call such a topic missing; a topic no broker knows still is.
func TestMetadataAsksTheOtherBrokersBeforeCallingATopicMissing(t *testing.T) {
	f := newReviewFake(t)
	f.topic(t, "fresh", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Brokers 0 and 1 have not caught up: they answer as a broker that has
	// not yet learned of "fresh" would. Broker 2 knows it.
	var lagging atomic.Bool
	lagging.Store(true)
	f.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		r := req.(*kmsg.MetadataRequest)
		if !lagging.Load() || f.CurrentNode() == 2 || len(r.Topics) == 0 {
			return nil, nil, false
		}
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		for i, addr := range f.ListenAddrs() {
			host, port, _ := net.SplitHostPort(addr)
			p, _ := strconv.Atoi(port)
			b := kmsg.NewMetadataResponseBroker()
			b.NodeID, b.Host, b.Port = int32(i), host, int32(p)
			resp.Brokers = append(resp.Brokers, b)
		}
		for _, rt := range r.Topics {
			st := kmsg.NewMetadataResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = kerr.UnknownTopicOrPartition.Code
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})

	f.forget()
	m, err := f.cl.Metadata(ctx, []string{"fresh"})
	require.NoError(t, err, "a topic one broker knows exists")
	require.Equal(t, int32(2), m.AnsweredBy, "the answer is the broker that knows the topic")
	require.Len(t, m.Topics["fresh"].Partitions, 3)
	require.GreaterOrEqual(t, len(f.sent("Metadata")), 2, "asked more than one broker")

	f.forget()
	_, err = f.cl.Metadata(ctx, []string{"fresh"})
	require.NoError(t, err)
	require.Len(t, f.sent("Metadata"), 1, "the next statement starts with the broker that knew it")

	f.forget()
	_, err = f.cl.Metadata(ctx, []string{"fresh", "no-such-topic"})
	var unknown *UnknownTopicError
	require.True(t, errors.As(err, &unknown), "got %v", err)
	require.Equal(t, "no-such-topic", unknown.Topic)
	require.Len(t, f.sent("Metadata"), 3, "every broker was asked before calling the topic missing")

	lagging.Store(false)
	f.forget()
	_, err = f.cl.Metadata(ctx, []string{"fresh"})
	require.NoError(t, err)
	require.Len(t, f.sent("Metadata"), 1, "a known topic costs one request")
}
