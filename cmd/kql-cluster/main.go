// Command kql-cluster runs the test bed's real Apache Kafka cluster in the
// foreground for manual use (`make cluster`): N brokers in KRaft combined
// mode on 127.0.0.1, the same cluster the tests start, and with -registry the
// test bed's schema registry (Apicurio Registry, Confluent-compatible API)
// beside it. It prints the bootstrap address (and the registry's URL) and runs
// until Ctrl-C (or SIGTERM), then shuts everything down and removes its data.
//
// -fetch-only (what `make deps` runs) only makes sure the Kafka jars, the
// registry and the OAUTHBEARER tests' mock-oauth2-server are cached.
//
//	kql-cluster [-nodes 3] [-version 4.3.1] [-secure] [-registry] [-registry-version 3.0.9] [-fetch-only]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
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
	fetchOnly := fs.Bool("fetch-only", false, "only make sure the Kafka jars and the schema registry are cached, then exit")
	registryVersion := fs.String("registry-version", kafkatest.RegistryVersion(), "Apicurio Registry version (default from $KQL_REGISTRY_VERSION)")
	secure := fs.Bool("secure", false, "add SASL_SSL (PLAIN, SCRAM) and mTLS listeners and ACLs, and write client.properties files")
	withRegistry := fs.Bool("registry", false, "also start the test bed's schema registry (Apicurio Registry, Confluent-compatible API) and print its URL")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kql-cluster: unexpected argument %q (flags: -nodes N, -version V, -secure, -registry, -registry-version V, -fetch-only)\n", fs.Arg(0))
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
		jar, err := kafkatest.EnsureRegistry(ctx, *registryVersion, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "Apicurio Registry %s: %s\n", *registryVersion, jar)
		oauthLibs, err := kafkatest.EnsureOAuthServer(ctx, kafkatest.OAuthServerVersion(), stderr)
		if err != nil {
			fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "mock-oauth2-server %s (the OAUTHBEARER tests' OpenID provider): %s\n", kafkatest.OAuthServerVersion(), oauthLibs)
		return 0
	}

	r, err := kafkatest.StartReal(ctx, kafkatest.RealConfig{Nodes: *nodes, Version: *version, Log: stderr, Secure: *secure})
	if err != nil {
		fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Apache Kafka %s: %d brokers on 127.0.0.1 (data and logs in %s)\n", r.Version(), *nodes, r.Dir())
	for _, b := range r.Brokers() {
		fmt.Fprintf(stdout, "  broker %d  %s\n", b.ID, b.Addr)
	}
	fmt.Fprintf(stdout, "bootstrap: %s\n", strings.Join(r.Bootstrap(), ","))
	var reg *kafkatest.Registry
	if *withRegistry {
		reg, err = kafkatest.StartRegistry(ctx, kafkatest.RegistryConfig{Version: *registryVersion, Log: stderr})
		if err != nil {
			fmt.Fprintf(stderr, "kql-cluster: %v\nstopping the brokers\n", err)
			r.Shutdown(30 * time.Second)
			return 1
		}
		defer reg.Close()
		fmt.Fprintf(stdout, "schema registry: Apicurio Registry %s, Confluent API at %s (in memory; log in %s)\n", reg.Version(), reg.URL(), reg.Dir())
		fmt.Fprintf(stdout, "try: kql --bootstrap %s --schema-registry %s\n", r.Brokers()[0].Addr, reg.URL())
	} else {
		fmt.Fprintf(stdout, "try: kql --bootstrap %s\n", r.Brokers()[0].Addr)
	}
	if *secure {
		if err := printSecure(stdout, r); err != nil {
			fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
			r.Shutdown(30 * time.Second)
			return 1
		}
	}
	fmt.Fprintln(stdout, "Press Ctrl-C to stop the cluster.")

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			if err := r.CheckBrokers(); err != nil {
				fmt.Fprintf(stderr, "kql-cluster: %v\nstopping the other brokers\n", err)
				r.Shutdown(30 * time.Second)
				return 1
			}
			if reg != nil {
				if err := reg.Check(); err != nil {
					fmt.Fprintf(stderr, "kql-cluster: %v\nstopping the brokers\n", err)
					r.Shutdown(30 * time.Second)
					return 1
				}
			}
		}
	}
	stop() // a second Ctrl-C now kills us, and the JVMs with us (parent-death signal)
	fmt.Fprintln(stdout, "\nstopping the brokers...")
	start := time.Now()
	if reg != nil {
		reg.Close()
		fmt.Fprintf(stdout, "stopped the schema registry; removed %s\n", reg.Dir())
	}
	if err := r.Shutdown(30 * time.Second); err != nil {
		fmt.Fprintf(stderr, "kql-cluster: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "stopped in %s; removed %s\n", time.Since(start).Round(100*time.Millisecond), r.Dir())
	return 0
}

// printSecure writes ready-made client.properties files for the secure
// listeners (Kafka's own format, as kafka-topics.sh and kql take them) and
// says how to use them.
func printSecure(w io.Writer, r *kafkatest.Real) error {
	sec := r.Security()
	sasl := strings.Join(r.ListenerAddrs(kafkatest.ListenerSASLSSL), ",")
	ssl := strings.Join(r.ListenerAddrs(kafkatest.ListenerSSL), ",")
	scram := func(mech, user string) string {
		return fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SASL_SSL
sasl.mechanism=%s
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";
ssl.truststore.type=PEM
ssl.truststore.location=%s
`, sasl, mech, user, sec.Users[user], sec.CAFile)
	}
	files := []struct{ name, body, what string }{
		{"admin-scram512.properties", scram("SCRAM-SHA-512", kafkatest.UserAdmin), "SASL_SSL, SCRAM-SHA-512, user admin (a super user)"},
		{"alice-scram256.properties", scram("SCRAM-SHA-256", kafkatest.UserAlice), "SASL_SSL, SCRAM-SHA-256, user alice (no ACLs yet)"},
		{"alice-plain.properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="%s";
ssl.truststore.type=PEM
ssl.truststore.location=%s
`, sasl, sec.Users[kafkatest.UserAlice], sec.CAFile), "SASL_SSL, PLAIN, user alice (no ACLs yet)"},
		{"mtls.properties", fmt.Sprintf(`bootstrap.servers=%s
security.protocol=SSL
ssl.truststore.type=PEM
ssl.truststore.location=%s
ssl.keystore.type=PEM
ssl.keystore.location=%s
`, ssl, sec.CAFile, sec.ClientKeystoreFile), "SSL with a client certificate, principal User:" + kafkatest.MTLSClient + " (no ACLs yet)"},
	}
	fmt.Fprintf(w, "\nsecure listeners (certificates, keys and these files in %s):\n", sec.Dir)
	fmt.Fprintf(w, "  SASL_SSL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512): %s\n", sasl)
	fmt.Fprintf(w, "  SSL, client certificate required:              %s\n", ssl)
	fmt.Fprintf(w, "  users: %s (super user), %s, %s; the StandardAuthorizer is on\n", kafkatest.UserAdmin, kafkatest.UserAlice, kafkatest.UserBob)
	for _, f := range files {
		p := filepath.Join(sec.Dir, f.name)
		if err := os.WriteFile(p, []byte(f.body), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(w, "  kql --command-config %s    # %s\n", p, f.what)
	}
	fmt.Fprintf(w, "grant ACLs as the super user, e.g. over PLAINTEXT with Kafka's kafka-acls.sh --bootstrap-server %s --add --allow-principal User:alice --operation Read --operation Describe --topic orders\n", r.Brokers()[0].Addr)
	return nil
}
