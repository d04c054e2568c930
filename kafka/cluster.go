// Package kafka is kql's view of a cluster: connections (through franz-go's
// kgo), metadata, and routing. Each Kafka routing rule is one primitive here
// (AnyBroker, Leaders, Coordinators, EveryBroker, Controller), so a statement
// declares the rule its request needs instead of picking a connection.
package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl"
)

// Config says how to reach a cluster.
type Config struct {
	Bootstrap   []string         // host:port seeds
	ClientID    string           // default "kql"
	TLS         *tls.Config      // nil: plaintext
	SASL        sasl.Mechanism   // nil: no SASL
	DialTimeout time.Duration    // default 10s
	Trace       func(TraceEvent) // optional: called once per broker request, from any goroutine
	// IdleTimeout closes a broker connection unused for that long; 0 keeps
	// kgo's default (20s). kgo keeps connections between statements, one
	// per broker and kind of request; tests that count sockets shorten it
	// so that the pool drains and only a connection still in use remains.
	IdleTimeout time.Duration
}

// TraceEvent describes one request kql sent to one broker. Tests count these
// to prove routing (one ListOffsets per leader, not per partition); \trace
// prints them.
type TraceEvent struct {
	API      string        // Kafka API name, e.g. "ListOffsets"
	Broker   int32         // node id; -1 for a bootstrap seed not yet known by id
	Addr     string        // host:port the request went to
	Items    []string      // partitions ("orders/3") or groups the request carried
	Duration time.Duration // time to the response
	Err      error         // request-level failure, nil on success (per-item errors are in the response)
}

// UnreachableError means no broker of the cluster could be reached at all:
// the shell exits 3 on it.
type UnreachableError struct {
	Bootstrap []string
	Err       error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the cluster at %s: %v (check --bootstrap, TLS/SASL settings, and that a broker listens there)",
		strings.Join(e.Bootstrap, ","), e.Err)
}
func (e *UnreachableError) Unwrap() error { return e.Err }

// IsUnreachable reports whether err means the cluster could not be reached at all.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// Cluster is an open connection to a Kafka cluster. Close it when done.
type Cluster struct {
	metaCache
	cfg   Config
	cl    *kgo.Client
	trace atomic.Pointer[func(TraceEvent)]

	seeds []*kgo.Broker // in Bootstrap order

	prodMu sync.Mutex
	prod   *kgo.Client

	leaderWait atomic.Int64 // a read's wait for a leader; 0: DefaultLeaderWait

	closeOnce sync.Once // the SASL mechanism is released once, however often Close runs
}

// Dial connects to the cluster and checks that at least one broker answers a
// Metadata request; it returns an *UnreachableError when none does.
func Dial(ctx context.Context, cfg Config) (*Cluster, error) {
	if len(cfg.Bootstrap) == 0 {
		return nil, errors.New("no bootstrap address: give --bootstrap host:port")
	}
	if cfg.ClientID == "" {
		cfg.ClientID = "kql"
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Bootstrap...),
		kgo.ClientID(cfg.ClientID),
		kgo.DialTimeout(cfg.DialTimeout),
		// kql routes every request itself (see routing.go); kgo's own
		// retries would hide which broker answered what.
		kgo.RequestRetries(0),
		kgo.MetadataMinAge(250 * time.Millisecond),
		// No KIP-714 client metrics: their pushes are requests kql neither
		// routes nor shows in \trace, and each push lz4-compresses with
		// 4 MiB blocks (8 MiB allocated and cleared, about a tenth of a
		// million-record CONSUME's allocation outside the records).
		kgo.DisableClientMetrics(),
		kgo.MaxVersions(clientVersions()),
	}
	if cfg.IdleTimeout > 0 {
		opts = append(opts, kgo.ConnIdleTimeout(cfg.IdleTimeout))
	}
	if cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg.TLS))
	}
	if cfg.SASL != nil {
		opts = append(opts, kgo.SASL(kgoSASL(cfg.SASL)))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka client options: %w", err)
	}
	c := &Cluster{cfg: cfg, cl: cl}
	if cfg.SASL != nil {
		retainSASL(cfg.SASL) // released by Close, also on the failure below
	}
	c.seedAnswered = -1
	if cfg.Trace != nil {
		c.SetTrace(cfg.Trace)
	}
	c.seeds = cl.SeedBrokers()
	// Read the brokers now: every later any-broker request can then move
	// past a dead broker instead of depending on which seed kgo picks.
	pctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	if _, err := c.Metadata(pctx, []string{}); err != nil {
		c.Close()
		return nil, &UnreachableError{Bootstrap: cfg.Bootstrap, Err: err}
	}
	return c, nil
}

// clientVersions is kgo's stable request versions with ApiVersions capped
// at v4. kgo opens each connection with ApiVersions v5 (KIP-1242, which
// only adds a check of the cluster and node id); a broker without it (Kafka
// 4.3 and older) answers UNSUPPORTED_VERSION and kgo asks again with v4: one
// more round trip before the first request to each broker (kgo remembers a
// broker's version for an hour after), and a one-shot statement opens a
// connection to every broker it asks (SHOW TOPICS: each broker's
// DescribeLogDirs and each leader's ListOffsets). On Kafka 4.4+ this gives
// up v5's refusal of a connection that reached the wrong node or cluster
// (README, Tested Kafka versions). Every other key stays at kgo's default
// (TestOnlyApiVersionsIsCapped).
func clientVersions() *kversion.Versions {
	v := kversion.Stable()
	v.SetMaxKeyVersion(18, 4) // 18: ApiVersions
	return v
}

// Close closes every connection of the cluster, and its SASL mechanism if
// no other Cluster holds it.
func (c *Cluster) Close() {
	c.prodMu.Lock()
	if c.prod != nil {
		c.prod.Close()
		c.prod = nil
	}
	c.prodMu.Unlock()
	c.cl.Close()
	if c.cfg.SASL != nil {
		c.closeOnce.Do(func() { releaseSASL(c.cfg.SASL) })
	}
}

// SetLeaderWait sets how long a read without a deadline of its own waits
// for a partition to have a leader that answers again; 0 restores
// DefaultLeaderWait.
func (c *Cluster) SetLeaderWait(d time.Duration) { c.leaderWait.Store(int64(d)) }

// SetTrace installs (or, with nil, removes) the per-request trace hook.
func (c *Cluster) SetTrace(fn func(TraceEvent)) {
	if fn == nil {
		c.trace.Store(nil)
		return
	}
	c.trace.Store(&fn)
}

// Bootstrap returns the seed addresses the cluster was dialled with.
func (c *Cluster) Bootstrap() []string { return c.cfg.Bootstrap }
