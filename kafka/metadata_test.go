package kafka

import (
	"context"
	"errors"
	"fmt"
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
	f := newTracedFake(t)
	f.topic(t, "fresh", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// Brokers 0 and 1 have not caught up: they answer as a broker that has
	// not yet learned of "fresh" would. Broker 2 knows it.
	var lagging atomic.Bool
	lagging.Store(true)
	f.lagBehind(func() bool { return lagging.Load() && f.CurrentNode() != 2 }, kmsg.Metadata)

	f.forget()
	m, err := f.cl.Metadata(ctx, []string{"fresh"})
	require.NoError(t, err, "a topic one broker knows exists")
	require.Equal(t, int32(2), m.AnsweredBy, "the answer is the broker that knows the topic")
	require.Len(t, m.Topics["fresh"].Partitions, 3)
	require.GreaterOrEqual(t, len(f.sent("Metadata")), 2, "asked more than one broker")

	// Statements that read all topics (EXPLAIN, RESET GROUP) look a named
	// topic missing from that answer up by name, which asks the others too.
	brokersOnly, err := f.cl.Metadata(ctx, []string{})
	require.NoError(t, err)
	require.Empty(t, brokersOnly.Topics)
	with, err := f.cl.WithTopic(ctx, brokersOnly, "fresh")
	require.NoError(t, err)
	require.Len(t, with.Topics["fresh"].Partitions, 3)
	require.Empty(t, brokersOnly.Topics, "the metadata passed in is not changed")
	_, err = f.cl.WithTopic(ctx, brokersOnly, "no-such-topic")
	require.True(t, errors.As(err, new(*UnknownTopicError)), "got %v", err)

	// The broker that knew is not made the one asked first: for a topic
	// being deleted, the broker that still lists it is the stale one.
	f.forget()
	m, err = f.cl.Metadata(ctx, nil)
	require.NoError(t, err)
	require.NotEqual(t, int32(2), m.AnsweredBy)

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

// The other brokers are asked concurrently and within the statement's
// context: a hung broker does not make a misspelt name slow by a wait per
// broker, and a statement cancelled meanwhile says so instead of calling
// the topic missing. Another broker's error about the topic is more than
// "unknown" and is the one reported.
func TestMetadataSecondOpinionFailures(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "fresh", 3)
	var hang, deny atomic.Bool
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.ControlKey(int16(kmsg.Metadata), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		r := req.(*kmsg.MetadataRequest)
		if len(r.Topics) == 0 || f.CurrentNode() == 0 {
			return nil, nil, false // broker 0 answers truthfully: "typo" does not exist
		}
		if hang.Load() {
			f.SleepControl(func() { <-release })
			return nil, nil, false
		}
		if deny.Load() && f.CurrentNode() == 2 {
			resp := r.ResponseKind().(*kmsg.MetadataResponse)
			for _, rt := range r.Topics {
				st := kmsg.NewMetadataResponseTopic()
				st.Topic = rt.Topic
				st.ErrorCode = kerr.TopicAuthorizationFailed.Code
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil, true
		}
		return nil, nil, false
	})
	// Broker 0 answers first from now on.
	m, err := f.cl.Metadata(context.Background(), []string{"fresh"})
	require.NoError(t, err)
	require.Equal(t, int32(0), m.AnsweredBy)

	deny.Store(true)
	_, err = f.cl.Metadata(context.Background(), []string{"typo"})
	require.ErrorContains(t, err, "TOPIC_AUTHORIZATION_FAILED", "broker 2's refusal says more than broker 0's 'unknown'")
	deny.Store(false)

	hang.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = f.cl.Metadata(ctx, []string{"typo"})
	require.ErrorIs(t, err, context.DeadlineExceeded, "a statement cut short is not 'no topic named'")

	start := time.Now()
	_, err = f.cl.Metadata(context.Background(), []string{"typo"})
	var unknown *UnknownTopicError
	require.True(t, errors.As(err, &unknown), "got %v", err)
	require.Less(t, time.Since(start), anyBrokerAttempt+2*time.Second, "two hung brokers cost one wait, not one each")
}

// A topic's configs come from any broker, and one that has not learned of
// a topic created a moment ago says it does not exist: SHOW CONFIGS and
// ALTER CONFIGS look the topic up as Metadata does and ask a broker that
// knows it.
func TestTopicConfigsAskABrokerThatKnowsTheTopic(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "fresh", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.lagBehind(func() bool { return f.CurrentNode() != 2 }, kmsg.Metadata, kmsg.DescribeConfigs, kmsg.IncrementalAlterConfigs)

	res := ConfigResource{Kind: TopicResource, Topic: "fresh"}
	require.NoError(t, f.cl.AlterConfigs(ctx, res, []AlterOp{{Name: "retention.ms", Value: kmsg.StringPtr("5000")}}))
	entries, err := f.cl.DescribeConfigs(ctx, res)
	require.NoError(t, err)
	found := false
	for _, e := range entries {
		if e.Name == "retention.ms" {
			found = true
			require.Equal(t, "5000", *e.Value)
		}
	}
	require.True(t, found, "retention.ms read back from the broker that knows the topic")

	_, err = f.cl.DescribeConfigs(ctx, ConfigResource{Kind: TopicResource, Topic: "no-such-topic"})
	var unknown *UnknownTopicError
	require.True(t, errors.As(err, &unknown), "got %v", err)
}

// lagBehind makes a broker answer requests of the given keys as a broker
// that has not yet learned of any topic would (UNKNOWN_TOPIC_OR_PARTITION
// for each topic named) while lagging() is true for the broker handling
// the request. Metadata asking for no topics or all topics is answered as
// usual.
func (f *tracedFake) lagBehind(lagging func() bool, keys ...kmsg.Key) {
	unknown := kerr.UnknownTopicOrPartition.Code
	for _, key := range keys {
		f.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
			f.KeepControl()
			if !lagging() {
				return nil, nil, false
			}
			switch r := req.(type) {
			case *kmsg.MetadataRequest:
				if len(r.Topics) == 0 {
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
					st.Topic, st.ErrorCode = rt.Topic, unknown
					resp.Topics = append(resp.Topics, st)
				}
				return resp, nil, true
			case *kmsg.DescribeConfigsRequest:
				resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
				for _, rr := range r.Resources {
					sr := kmsg.NewDescribeConfigsResponseResource()
					sr.ResourceType, sr.ResourceName, sr.ErrorCode = rr.ResourceType, rr.ResourceName, unknown
					resp.Resources = append(resp.Resources, sr)
				}
				return resp, nil, true
			case *kmsg.IncrementalAlterConfigsRequest:
				resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
				for _, rr := range r.Resources {
					sr := kmsg.NewIncrementalAlterConfigsResponseResource()
					sr.ResourceType, sr.ResourceName, sr.ErrorCode = rr.ResourceType, rr.ResourceName, unknown
					resp.Resources = append(resp.Resources, sr)
				}
				return resp, nil, true
			}
			panic(fmt.Sprintf("lagBehind: no unknown-topic answer for %T", req))
		})
	}
}
