package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// cluster is the cluster the bench reads from, whoever started it.
type cluster struct {
	name      string
	bootstrap []string
	close     func() // stops what the bench started; a no-op for -b
}

// startCluster starts kfake (default), the test bed's real cluster (-real),
// or uses the one at -b.
func startCluster(ctx context.Context, c *config, log io.Writer) (*cluster, error) {
	switch {
	case c.bootstrap != "":
		return &cluster{name: "existing cluster", bootstrap: splitAddrs(c.bootstrap), close: func() {}}, nil
	case c.real:
		start := time.Now()
		// The JVMs are started with a parent-death signal by kafkatest, so
		// even a SIGKILLed bench leaves none behind; Close kills them and
		// removes their data (it is thrown away anyway).
		r, err := kafkatest.StartReal(ctx, kafkatest.RealConfig{Log: log})
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("Apache Kafka %s, %d brokers (KRaft combined, started in %s)", r.Version(), len(r.Brokers()), time.Since(start).Round(100*time.Millisecond))
		return &cluster{name: name, bootstrap: r.Bootstrap(), close: r.Close}, nil
	default:
		// The same shape as kafkatest.NewFake (which needs a testing.TB):
		// 3 brokers, 1 partition per topic unless told, no auto-creation.
		f, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.DefaultNumPartitions(1))
		if err != nil {
			return nil, fmt.Errorf("starting kfake: %w", err)
		}
		return &cluster{name: "kfake, 3 brokers in the bench process", bootstrap: f.ListenAddrs(), close: f.Close}, nil
	}
}

// buildKQL builds ./cmd/kql of this module into dir, once, so no contender
// pays for compilation.
func buildKQL(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("go is not on PATH to build kql (or give -kql PATH)")
	}
	out, err := exec.CommandContext(ctx, goBin, "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == os.DevNull {
		return "", errors.New("run kql-bench inside the kql module (or give -kql PATH)")
	}
	bin := filepath.Join(dir, "kql")
	start := time.Now()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, "./cmd/kql")
	cmd.Dir = filepath.Dir(gomod)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/kql: %v\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "built kql in %s\n", time.Since(start).Round(100*time.Millisecond))
	return bin, nil
}

// lookPath is exec.LookPath that treats "" as absent.
func lookPath(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	p, err := exec.LookPath(name)
	return p, err == nil
}
