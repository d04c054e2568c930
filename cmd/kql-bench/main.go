// Command kql-bench measures kql's record path against the speed of the
// wire (issue 9): it seeds a topic once, then runs a bare franz-go consumer
// (the floor), kql in each output format, and kcat when it is installed, each
// as its own child process, interleaved, and prints wall, CPU and peak RSS
// from each child's rusage with the ratios to the floor and the issue's
// targets. Issue 10 adds a topic of the same records with Avro values in the
// Confluent wire format, read with and without decoding through a schema
// registry (franz-go's srfake, in the bench process), and counts the
// registry requests each decoding run makes.
//
//	kql-bench                       # an in-process 3-broker kfake (make bench)
//	kql-bench -real                 # the test bed's real 3-broker Kafka (make bench-real)
//	kql-bench -b host:port,...      # an existing cluster; the topics are reused
//
// The program is bounded: every child runs under -timeout and is killed (with
// its process group) when it overruns or when the bench is interrupted; the
// cluster it started and its temporary directory are gone when it exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// config is the parsed command line.
type config struct {
	bootstrap  string
	real       bool
	topic      string
	n          int64
	partitions int
	runs       int
	timeout    time.Duration
	flat       bool
	flatN      int64
	kql        string
	kcat       string
	baseline   string // another kql binary timed beside -kql in the same rounds
	reseed     bool
	only       *regexp.Regexp // time only the contenders whose names match (nil: all)

	// Hidden modes: the bench re-executes itself as a contender.
	floor       bool     // the bare franz-go consumer
	floorFormat string   // -floor's output: "" (a count) or jsonl (each record, kql's encoder)
	execConsume bool     // CONSUME through kql's exec API (LIMITs the parser rejects; a registry kql has no flag for)
	limit       int64    // -exec-consume's LIMIT
	registry    string   // -exec-consume's schema registry URL ("": none)
	argv        []string // -spawn's command
	spawn       string   // run the arguments as a measured child, report to this file (see spawn.go)
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("kql-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.bootstrap, "b", "", "use this existing cluster, `host:port,...` (default: start an in-process 3-broker kfake)")
	fs.BoolVar(&c.real, "real", false, "start the test bed's real 3-broker Kafka cluster (needs Java 17+ and the jars, as make cluster)")
	fs.StringVar(&c.topic, "topic", "bench", "topic to seed and read; the -flat topic is this name + \"-flat\", the Avro one + \"-avro\"")
	fs.Int64Var(&c.n, "n", 1000000, "records in the topic, and the LIMIT of every read")
	fs.IntVar(&c.partitions, "partitions", 32, "partitions of the seeded topics")
	fs.IntVar(&c.runs, "runs", 5, "timed runs of each contender (interleaved round-robin)")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "kill a child that runs longer than this (the -flat read gets it times flat-n/n)")
	fs.BoolVar(&c.flat, "flat", true, "also check that peak RSS stays flat over a topic with -flat-n records")
	fs.Int64Var(&c.flatN, "flat-n", 0, "records in the -flat topic (default 10 * -n)")
	fs.StringVar(&c.kql, "kql", "", "use this kql binary instead of building ./cmd/kql")
	fs.StringVar(&c.baseline, "baseline", "", "also time this kql `binary` (an older build) in the same rounds, each of its contenders named \"base ...\"")
	fs.StringVar(&c.kcat, "kcat", "kcat", "kcat binary; skipped when not found")
	fs.BoolVar(&c.reseed, "reseed", false, "delete and re-create a topic that exists with the wrong number of records")
	fs.BoolVar(&c.floor, "floor", false, "(internal) run as the floor contender")
	fs.StringVar(&c.floorFormat, "floor-format", "", "(internal) with -floor: write each record in this format (jsonl) with kql's encoder")
	fs.BoolVar(&c.execConsume, "exec-consume", false, "(internal) run CONSUME through kql's exec API")
	fs.Int64Var(&c.limit, "limit", 0, "(internal) LIMIT for -exec-consume")
	fs.StringVar(&c.registry, "registry", "", "(internal) schema registry URL for -exec-consume")
	fs.StringVar(&c.spawn, "spawn", "", "(internal) run the arguments after -- and write their rusage to `FILE`")
	only := fs.String("only", "", "time only the contenders whose names match this `regexp` (e.g. 'import|kcat -P|INSERT'); the goals whose reference is not timed are left out")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			return nil, fmt.Errorf("-only: %w", err)
		}
		c.only = re
	}
	if c.spawn != "" {
		c.argv = fs.Args()
		return c, nil
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.real && c.bootstrap != "" {
		return nil, errors.New("-real and -b exclude each other")
	}
	if c.n < 1 || c.partitions < 1 || c.runs < 1 || c.timeout <= 0 {
		return nil, errors.New("-n, -partitions, -runs and -timeout must be positive")
	}
	if c.flatN == 0 {
		c.flatN = 10 * c.n
	}
	return c, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "kql-bench: %v\n", err)
		}
		return 2
	}
	// Ctrl-C or SIGTERM cancels ctx: the running child is killed and every
	// deferred cleanup (cluster, temp dir) runs before we exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	switch {
	case c.spawn != "":
		err = spawnMain(c.spawn, c.argv)
	case c.floor:
		err = floorMain(ctx, splitAddrs(c.bootstrap), c.topic, c.floorFormat, stdout)
	case c.execConsume:
		err = execConsumeMain(ctx, splitAddrs(c.bootstrap), c.topic, c.limit, c.registry, stdout)
	default:
		// Children get a parent-death signal, which Linux ties to the
		// forking thread, not the process: fork them all from this locked
		// thread, which lives as long as the bench.
		runtime.LockOSThread()
		err = bench(ctx, c, stdout, stderr)
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "kql-bench: interrupted; the cluster and temporary files it started are removed")
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "kql-bench: %v\n", err)
		return 1
	}
	return 0
}

// wants says whether -only lets the contender named name run.
func (c *config) wants(name string) bool { return c.only == nil || c.only.MatchString(name) }

func splitAddrs(s string) []string {
	var out []string
	for _, a := range strings.Split(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// bench is the whole benchmark: cluster, seed, validate, time, report.
func bench(ctx context.Context, c *config, stdout, stderr io.Writer) error {
	started := time.Now()
	fmt.Fprintln(stdout, "kql-bench:", machine())
	fmt.Fprintln(stdout, "load before:", loadavg())

	tmp, err := os.MkdirTemp("", "kql-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	kqlBin := c.kql
	if kqlBin == "" {
		if kqlBin, err = buildKQL(ctx, tmp); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the bench binary to re-execute as the floor: %w", err)
	}

	cl, err := startCluster(ctx, c, stderr)
	if err != nil {
		return err
	}
	defer cl.close()
	fmt.Fprintf(stdout, "cluster: %s, bootstrap %s\n", cl.name, strings.Join(cl.bootstrap, ","))

	if err := seedTopic(ctx, cl.bootstrap, c.topic, c.n, c.partitions, jsonValues, c.reseed, stdout); err != nil {
		return err
	}
	flatTopic := c.topic + "-flat"
	if c.flat {
		if err := seedTopic(ctx, cl.bootstrap, flatTopic, c.flatN, c.partitions, jsonValues, c.reseed, stdout); err != nil {
			return err
		}
	}

	// Issue 10: the same records with Avro values in the Confluent wire
	// format, and a schema registry in this process to decode them (for
	// kfake and -real alike), which counts the requests each run makes.
	avroTopic := c.topic + "-avro"
	reg, err := startRegistry(avroTopic)
	if err != nil {
		return err
	}
	defer reg.close()
	if c.wants("Avro") {
		fmt.Fprintf(stdout, "schema registry: srfake at %s, subject %s-value, schema id %d\n", reg.URL(), avroTopic, avroSchemaID)
		if err := seedTopic(ctx, cl.bootstrap, avroTopic, c.n, c.partitions, avroValues, c.reseed, stdout); err != nil {
			return err
		}
	}

	env := &benchEnv{
		cfg: c, tmp: tmp, kql: kqlBin, self: self,
		bootstrap: strings.Join(cl.bootstrap, ","), flatTopic: flatTopic,
		avroTopic: avroTopic, registry: reg,
	}
	env.kcat, _ = lookPath(c.kcat)
	if s, err := runChild(ctx, env, []string{"true"}, c.timeout, os.DevNull); err == nil {
		fmt.Fprintf(stdout, "peak RSS resolution: %.0f MiB (a child's ru_maxrss includes its spawner's; see spawn.go)\n", mib(s.rssKiB))
	}
	cs, notes, err := contenders(ctx, env)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(stdout, "note:", n)
	}

	// Every contender's output is checked once, untimed, before any timing:
	// a fast wrong answer must not look like a win.
	fmt.Fprintln(stdout, "validating each contender's output once (untimed)...")
	for _, k := range cs {
		if err := validateOnce(ctx, env, k); err != nil {
			return fmt.Errorf("VALIDATION FAILED: %s: %w", k.name, err)
		}
	}
	writes := countWrites(ctx, env, cs)

	fmt.Fprintf(stdout, "timing %d contenders, %d interleaved rounds...\n", len(cs), c.runs)
	res, err := timeRounds(ctx, env, cs, stdout)
	if err != nil {
		return err
	}

	fmt.Fprintln(stdout)
	report(stdout, cl.name, c, cs, res, writes)
	fmt.Fprintln(stdout, "load after:", loadavg())
	fmt.Fprintf(stdout, "total %s\n", time.Since(started).Round(time.Second))
	return nil
}
