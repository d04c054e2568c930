package kafkatest

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

var (
	mainRunning atomic.Bool

	shared struct {
		once    sync.Once
		mu      sync.Mutex
		cluster *Real
		err     error
		took    time.Duration
	}

	sharedReg struct {
		once sync.Once
		mu   sync.Mutex
		reg  *Registry
		err  error
	}
)

// Shared returns this test binary's real Kafka cluster (3 brokers), starting
// it on first use; later calls get the same cluster, so tests must use
// unique names (TopicName, GroupName) and put back any broker they stop. If
// the cluster cannot start (no Java, no jars, a broker that dies), every
// caller fails with the reason: the real suite is never skipped.
//
// The package's TestMain must be Main, which tears the cluster down.
func Shared(t testing.TB) *Real {
	t.Helper()
	if !mainRunning.Load() {
		t.Fatal("kafkatest.Shared needs the package's TestMain to call kafkatest.Main, which stops the cluster when the tests end: " +
			"add `func TestMain(m *testing.M) { kafkatest.Main(m) }`")
	}
	shared.once.Do(func() {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // includes a first download
		defer cancel()
		r, err := StartReal(ctx, RealConfig{Log: os.Stderr, Secure: true})
		shared.mu.Lock()
		shared.cluster, shared.err, shared.took = r, err, time.Since(start)
		shared.mu.Unlock()
	})
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.err != nil {
		t.Fatalf("the real Kafka test cluster did not start: %v", shared.err)
	}
	if shared.cluster == nil {
		t.Fatal("the real Kafka test cluster was already torn down")
	}
	return shared.cluster
}

// SharedRegistry returns this test binary's schema registry (Apicurio
// Registry serving the Confluent API at URL; see Registry for how it differs
// from Confluent's), starting it on first use; later calls get the same
// registry, so tests must use unique subject names (SubjectName). If it
// cannot start (no Java, no registry download, a JVM that dies), every caller
// fails with the reason: it is never skipped.
//
// The package's TestMain must be Main (or Run), which stops it.
func SharedRegistry(t testing.TB) *Registry {
	t.Helper()
	if !mainRunning.Load() {
		t.Fatal("kafkatest.SharedRegistry needs the package's TestMain to call kafkatest.Main, which stops the registry when the tests end: " +
			"add `func TestMain(m *testing.M) { kafkatest.Main(m) }`")
	}
	sharedReg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // includes a first download
		defer cancel()
		reg, err := StartRegistry(ctx, RegistryConfig{Log: os.Stderr})
		sharedReg.mu.Lock()
		sharedReg.reg, sharedReg.err = reg, err
		sharedReg.mu.Unlock()
	})
	sharedReg.mu.Lock()
	defer sharedReg.mu.Unlock()
	if sharedReg.err != nil {
		t.Fatalf("the test schema registry did not start: %v", sharedReg.err)
	}
	if sharedReg.reg == nil {
		t.Fatal("the test schema registry was already torn down")
	}
	if err := sharedReg.reg.Check(); err != nil {
		t.Fatalf("the test schema registry died: %v", err)
	}
	return sharedReg.reg
}

// Main runs the tests, then tears down the shared real cluster and schema
// registry if they were started, and exits with the tests' exit code. It also tears down on
// SIGINT/SIGTERM. Use it as the TestMain of every package whose tests use
// Shared or Each:
//
//	func TestMain(m *testing.M) { kafkatest.Main(m) }
//
// If the test binary dies some other way (a panic, -timeout, SIGKILL), the
// JVMs die with it (parent-death signal) and the next start removes the
// leftover directory.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main without the exit: it runs the tests, tears down the shared
// cluster and registry and returns the exit code. For a TestMain that hands m to another
// harness (testscript.Main takes anything with a Run() int).
func Run(m interface{ Run() int }) int {
	mainRunning.Store(true)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s, ok := <-sigs
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "kafkatest: %v: stopping the real Kafka cluster and schema registry\n", s)
		teardownShared()
		os.Exit(1)
	}()
	code := m.Run()
	signal.Stop(sigs)
	close(sigs)
	teardownShared()
	return code
}

func teardownShared() {
	teardownSharedRegistry()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cluster == nil {
		return
	}
	start := time.Now()
	shared.cluster.Close()
	fmt.Fprintf(os.Stderr, "kafkatest: stopped the real Kafka cluster (%d brokers, started in %s) in %s and removed %s\n",
		len(shared.cluster.nodes), shared.took.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond), shared.cluster.Dir())
	shared.cluster = nil
}

func teardownSharedRegistry() {
	sharedReg.mu.Lock()
	defer sharedReg.mu.Unlock()
	if sharedReg.reg == nil {
		return
	}
	start := time.Now()
	sharedReg.reg.Close()
	fmt.Fprintf(os.Stderr, "kafkatest: stopped Apicurio Registry %s (started in %s) in %s and removed %s\n",
		sharedReg.reg.Version(), sharedReg.reg.StartupTime().Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond), sharedReg.reg.Dir())
	sharedReg.reg = nil
}
