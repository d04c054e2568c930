// Command kql-cluster runs the test bed's real Apache Kafka cluster in the
// foreground for manual use (`make cluster`): N brokers in KRaft combined
// mode on 127.0.0.1, the same cluster the tests start. It prints the
// bootstrap address and runs until Ctrl-C (or SIGTERM), then shuts the
// brokers down and removes their data.
//
//	kql-cluster [-nodes 3] [-version 4.3.1] [-fetch-only]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kql-cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.Int("nodes", 3, "number of brokers (each also a KRaft controller)")
	version := fs.String("version", kafkatest.KafkaVersion(), "Apache Kafka version (default from $KQL_KAFKA_VERSION)")
	fetchOnly := fs.Bool("fetch-only", false, "only make sure the Kafka jars are cached, then exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kql-cluster: unexpected argument %q (flags: -nodes N, -version V, -fetch-only)\n", fs.Arg(0))
		return 2
	}
	if *nodes < 1 {
		fmt.Fprintf(stderr, "kql-cluster: -nodes must be at least 1, got %d\n", *nodes)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *fetchOnly {
		dir, err := kafkatest.EnsureJars(ctx, *version, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Apache Kafka %s jars: %s\n", *version, dir)
		return 0
	}

	r, err := kafkatest.StartReal(ctx, kafkatest.RealConfig{Nodes: *nodes, Version: *version, Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Apache Kafka %s: %d brokers on 127.0.0.1 (data and logs in %s)\n", r.Version(), *nodes, r.Dir())
	for _, b := range r.Brokers() {
		fmt.Fprintf(stdout, "  broker %d  %s\n", b.ID, b.Addr)
	}
	fmt.Fprintf(stdout, "bootstrap: %s\n", strings.Join(r.Bootstrap(), ","))
	fmt.Fprintf(stdout, "try: kql --bootstrap %s\n", r.Brokers()[0].Addr)
	fmt.Fprintln(stdout, "Press Ctrl-C to stop the cluster.")

	<-ctx.Done()
	stop() // a second Ctrl-C now kills us, and the parent-death signal the JVMs
	fmt.Fprintln(stdout, "\nstopping the brokers...")
	start := time.Now()
	if err := r.Shutdown(30 * time.Second); err != nil {
		fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "stopped in %s; removed %s\n", time.Since(start).Round(100*time.Millisecond), r.Dir())
	return 0
}
