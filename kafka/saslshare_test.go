package kafka

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// closeCounting is a SASL mechanism with a Close, as Kerberos's is (its
// Close destroys the gokrb5 client).
type closeCounting struct {
	sasl.Mechanism
	closes atomic.Int32
}

func (m *closeCounting) Close() { m.closes.Add(1) }

// A PRODUCE that meets a re-created topic resets the producer. That must
// not close the SASL mechanism the cluster's main client still logs in
// with; Close of the cluster closes it once.
func TestProducerResetKeepsTheSharedSASLMechanism(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "pw"),
		kfake.SeedTopics(1, "t"), kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, "127.0.0.1:0")
		}))
	require.NoError(t, err)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mech := &closeCounting{Mechanism: plain.Auth{User: "admin", Pass: "pw"}.AsMechanism()}
	c, err := Dial(ctx, Config{Bootstrap: fake.ListenAddrs(), SASL: mech})
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()
	_, err = c.Produce(ctx, &OutRecord{Topic: "t", Partition: 0, Value: []byte("one")})
	require.NoError(t, err)
	p, err := c.producer()
	require.NoError(t, err)
	_, err = c.resetProducer(p)
	require.NoError(t, err)
	require.Zero(t, mech.closes.Load(), "resetting the producer closed the SASL mechanism the cluster still uses")
	_, err = c.Produce(ctx, &OutRecord{Topic: "t", Partition: 0, Value: []byte("two")})
	require.NoError(t, err)
	c.Close()
	closed = true
	require.EqualValues(t, 1, mech.closes.Load(), "Cluster.Close must close the SASL mechanism once")
}

// \connect dials with the current connection's Config, SASL mechanism
// included, and keeps the old connection when the new one fails: neither
// the failed dial nor closing the old connection may close the mechanism
// the other still logs in with.
func TestClustersSharingASASLMechanism(t *testing.T) {
	fake, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "pw"),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, "127.0.0.1:0") }))
	require.NoError(t, err)
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mech := &closeCounting{Mechanism: plain.Auth{User: "admin", Pass: "pw"}.AsMechanism()}
	cfg := Config{Bootstrap: fake.ListenAddrs(), SASL: mech, DialTimeout: 5 * time.Second}
	old, err := Dial(ctx, cfg)
	require.NoError(t, err)

	refused, err := net.Listen("tcp", "127.0.0.1:0") // a port that refuses: listen, then close
	require.NoError(t, err)
	addr := refused.Addr().String()
	refused.Close()
	bad := cfg
	bad.Bootstrap = []string{addr}
	if c, err := Dial(ctx, bad); err == nil {
		c.Close()
		t.Fatalf("dialling %s: want an error", addr)
	}
	require.Zero(t, mech.closes.Load(), "a failed dial closed the mechanism the old connection still uses")

	next, err := Dial(ctx, cfg)
	require.NoError(t, err)
	old.Close()
	require.Zero(t, mech.closes.Load(), "closing the old connection closed the mechanism of the new one")
	_, err = next.Metadata(ctx, nil)
	require.NoError(t, err)
	next.Close()
	next.Close() // twice: still released once
	require.EqualValues(t, 1, mech.closes.Load(), "the last Cluster's Close must close the mechanism once")
}
