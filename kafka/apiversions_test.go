package kafka

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// A broker without ApiVersions v5 (Kafka 4.3 and older, like the test
// bed's) refuses a connection's first ApiVersions if it asks v5, and kgo
// asks again: a round trip more before each connection's first request. kql
// asks v4, so each connection it opens to every broker (here a statement
// that asks all three, as SHOW TOPICS' sizes do) takes one ApiVersions.
func TestEachConnectionAsksApiVersionsOnce(t *testing.T) {
	v := kversion.Stable()
	v.SetMaxKeyVersion(int16(kmsg.ApiVersions), 4)
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.MaxVersions(v), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		return net.Listen(network, "127.0.0.1:0")
	}))
	require.NoError(t, err)
	defer c.Close()
	var mu sync.Mutex
	var asked []int16
	c.ControlKey(int16(kmsg.ApiVersions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		asked = append(asked, req.GetVersion())
		mu.Unlock()
		return nil, nil, false // observe only: kfake answers
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := Dial(ctx, Config{Bootstrap: c.ListenAddrs()[:1]})
	require.NoError(t, err)
	defer cl.Close()
	got, failed, err := cl.DescribeLogDirs(ctx, nil, nil, nil)
	require.NoError(t, err)
	for _, f := range failed {
		require.ErrorIs(t, f.Err, errNoLogDirs, "an answer (kfake has no topic here), not a failed connection")
	}
	require.Len(t, append(got, make([]BrokerLogDirs, len(failed))...), 3, "every broker answered")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, asked)
	for _, v := range asked {
		require.Equal(t, int16(4), v, "each ApiVersions asks v4 first (asked: %v)", asked)
	}
}

// The cap is on ApiVersions alone: every other request (Fetch, Produce,
// ListOffsets, ...) may go up to the versions kgo would use without it, so
// that no feature of a newer request version is silently lost.
func TestOnlyApiVersionsIsCapped(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
		return net.Listen(network, "127.0.0.1:0")
	}))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := Dial(ctx, Config{Bootstrap: c.ListenAddrs()[:1]})
	require.NoError(t, err)
	defer cl.Close()
	bare, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	defer bare.Close()

	versions := func(cl *kgo.Client) map[int16]int16 {
		vs, _ := cl.OptValue(kgo.MaxVersions).(*kversion.Versions)
		require.NotNil(t, vs, "kgo's default is a version table")
		m := map[int16]int16{}
		vs.EachMaxKeyVersion(func(k, v int16) { m[k] = v })
		return m
	}
	ours, kgos := versions(cl.cl), versions(bare)
	require.Equal(t, int16(4), ours[int16(kmsg.ApiVersions)])
	delete(ours, int16(kmsg.ApiVersions))
	delete(kgos, int16(kmsg.ApiVersions))
	require.Equal(t, kgos, ours, "every key but ApiVersions as kgo's default")
	require.Greater(t, ours[int16(kmsg.Fetch)], int16(12), "sanity: a modern Fetch")
}
