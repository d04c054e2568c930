package kafka

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The first any-broker request after Dial goes over the connection Dial
// opened to the seed, so a one-shot statement opens one connection, not
// two (on a TLS and SASL cluster, one handshake instead of two); the trace
// names the broker the seed is. Later requests route as before.
func TestFirstRequestReusesTheSeedConnection(t *testing.T) {
	f := newTracedFake(t)
	var mu sync.Mutex
	var events []TraceEvent
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	seeds := f.ListenAddrs()[1:] // broker 1 first: not where the sticky default would go
	cl, err := Dial(ctx, Config{Bootstrap: seeds, Trace: func(e TraceEvent) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}})
	require.NoError(t, err)
	defer cl.Close()
	mu.Lock()
	require.Len(t, events, 1, "Dial reads metadata once")
	require.Equal(t, int32(-1), events[0].Broker, "Dial asks a seed")
	events = nil
	mu.Unlock()

	for range 2 {
		_, err = cl.Metadata(ctx, nil)
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, events, 2)
	for _, e := range events {
		require.Equal(t, int32(1), e.Broker, "the seed %s is broker 1, and the next request sticks to it", seeds[0])
		require.Equal(t, seeds[0], e.Addr)
	}
}
