// Package kafkatest is kql's multi-broker test bed: every cluster it gives a
// test has three brokers, so a request sent to the wrong one fails the test
// instead of passing by luck (on one broker, every leader and every
// coordinator is the broker you already hold).
//
// Two backends sit behind one interface:
//   - "kfake": franz-go's in-process fake (NewFake), fast, with controls to
//     move leaders, rehash coordinators, inject errors and remove brokers;
//   - "kafka": real Apache Kafka JVMs in KRaft combined mode (Shared,
//     StartReal), with controls to kill, stop and restart brokers.
//
// Each runs a test on both. A package whose tests use the real cluster needs
//
//	func TestMain(m *testing.M) { kafkatest.Main(m) }
//
// so the cluster is torn down when its test binary exits.
package kafkatest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Broker is one broker of a test cluster.
type Broker struct {
	ID   int32
	Addr string // "127.0.0.1:port"
}

// Backend is a running multi-broker cluster a test can talk to.
type Backend interface {
	Name() string        // "kfake" or "kafka"
	Bootstrap() []string // seed addresses
	Brokers() []Broker   // sorted by ID
}

// Backend names, as used by subtests and $KQL_BACKENDS.
const (
	KFake = "kfake"
	Kafka = "kafka"
)

// Backends returns the backends Each runs: $KQL_BACKENDS, a comma-separated
// subset of "kfake,kafka" for quick local loops, or both. `make test` never
// narrows it.
func Backends() ([]string, error) {
	env, ok := os.LookupEnv("KQL_BACKENDS")
	if !ok {
		return []string{KFake, Kafka}, nil
	}
	var out []string
	for _, name := range strings.Split(env, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if name != KFake && name != Kafka {
			return nil, fmt.Errorf("KQL_BACKENDS=%q: unknown backend %q (use kfake, kafka, or both separated by a comma)", env, name)
		}
		if !contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("KQL_BACKENDS=%q names no backend (use kfake, kafka, or both separated by a comma; unset it to run both)", env)
	}
	return out, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Each runs fn as the subtests "kfake" (on a fresh NewFake) and "kafka" (on
// the Shared real cluster), or only those $KQL_BACKENDS selects. A real
// cluster that cannot start fails the "kafka" subtest with the reason; it is
// never skipped.
func Each(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	names, err := Backends()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			var b Backend
			if name == KFake {
				b = NewFake(t)
			} else {
				r := Shared(t)
				t.Logf("real Apache Kafka %s, %d brokers: %s", r.Version(), len(r.Brokers()), r.describe())
				b = r
			}
			fn(t, b)
		})
	}
}

// Client returns a kgo client seeded with b's bootstrap addresses (opts are
// applied after), closed when the test ends.
func Client(t testing.TB, b Backend, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{kgo.SeedBrokers(b.Bootstrap()...)}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		t.Fatalf("creating a kgo client for %s: %v", b.Name(), err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// CreateTopic creates topic (partitions, replication factor rf, configs)
// and, on real Kafka, waits until every broker knows it with every
// partition led, so what the test does next does not depend on which
// broker it asks.
func CreateTopic(t testing.TB, b Backend, topic string, partitions, rf int32, configs map[string]*string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(Client(t, b)).CreateTopic(ctx, partitions, int16(rf), configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("creating topic %s on %s: %v", topic, b.Name(), err)
	}
	if r, ok := b.(*Real); ok {
		if err := r.AwaitTopic(ctx, topic, int(partitions)); err != nil {
			t.Fatal(err)
		}
	}
}

var nameSeq atomic.Uint64

// nameRun tells names apart across test binaries and runs that share a
// cluster (several packages each start their own, but `make cluster` or a
// docker-compose cluster can be shared by many runs).
var nameRun = fmt.Sprintf("%x%x", os.Getpid()&0xfff, time.Now().UnixNano()&0xffff)

var unsafeNameChars = regexp.MustCompile(`[^a-zA-Z0-9-]+`)

// TopicName returns a topic name unique to this call, derived from the
// test's name so a leftover topic says which test made it. It holds only
// letters, digits and '-' (Kafka warns about topics that differ only in '.'
// and '_'), and fits Kafka's 249-character limit.
func TopicName(t testing.TB) string { return uniqueName(t, "t") }

// GroupName returns a consumer group name unique to this call, derived from
// the test's name.
func GroupName(t testing.TB) string { return uniqueName(t, "g") }

// SubjectName returns a schema registry subject name unique to this call,
// derived from the test's name: the shared registry keeps every test's
// subjects.
func SubjectName(t testing.TB) string { return uniqueName(t, "s") }

func uniqueName(t testing.TB, kind string) string {
	base := strings.Trim(unsafeNameChars.ReplaceAllString(t.Name(), "-"), "-")
	if len(base) > 150 {
		base = base[len(base)-150:]
	}
	return fmt.Sprintf("kql-%s-%s-%s%d", base, kind, nameRun, nameSeq.Add(1))
}
