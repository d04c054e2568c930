// Package kafka is kql's view of a cluster: connections (through franz-go's
// kgo), metadata, and routing. Each Kafka routing rule is one primitive here
// (AnyBroker, Leaders, Coordinators, EveryBroker, Controller), so a statement
// declares the rule its request needs instead of picking a connection.
package kafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

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
	cfg Config
}
