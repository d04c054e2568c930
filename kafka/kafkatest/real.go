package kafkatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// RealConfig says how to start a real cluster. The zero value is the test
// bed's cluster: 3 nodes of DefaultKafkaVersion (or $KQL_KAFKA_VERSION).
type RealConfig struct {
	Nodes   int               // default 3
	Version string            // default KafkaVersion()
	Props   map[string]string // extra or overriding server.properties entries, for every node
	JVMOpts []string          // replace the default JVM options (heap, GC)
	Log     io.Writer         // progress lines; nil discards them

	// Secure adds a SASL_SSL listener (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512),
	// an SSL listener that requires client certificates, and a listener whose
	// last node advertises an unreachable address, with certificates and
	// users generated for the cluster and the StandardAuthorizer on (see
	// Security). The PLAINTEXT listener and its super-user principal stay, so
	// Bootstrap and the helpers work as on a plain cluster.
	Secure bool

	// Listeners adds listeners of the caller's own (a GSSAPI one, say),
	// each on a free port per node; their settings go in Props.
	Listeners []Listener

	// StartTimeout bounds formatting, starting and waiting for Metadata to
	// list every broker (default 3 minutes); it does not include fetching
	// the jars.
	StartTimeout time.Duration
}

// Listener is an extra listener of a RealConfig: bound on 127.0.0.1 and
// advertised as AdvertisedHost ("" for 127.0.0.1).
type Listener struct {
	Name, Protocol, AdvertisedHost string
}

// DefaultJVMOpts keeps one node small enough that three of them, a race-
// enabled test binary and the other helpers' work fit on two cores: a small
// heap, the serial collector and the client compiler only (faster start-up,
// plenty for test traffic).
var DefaultJVMOpts = []string{
	"-Xms128m", "-Xmx384m",
	"-XX:+UseSerialGC",
	"-XX:TieredStopAtLevel=1",
	"-XX:+ExitOnOutOfMemoryError",
	"-Djava.awt.headless=true",
}

// Real is a cluster of Apache Kafka JVMs on 127.0.0.1, in KRaft combined mode
// (every node is a broker and a controller voter). Its methods are safe for
// concurrent use. Close it when done; Shared does that for tests.
type Real struct {
	cfg       RealConfig
	java      string
	libs      string
	dir       string // kql-kafka-* under os.TempDir, removed by Close
	clusterID string
	nodes     []*node // sorted by id
	sec       *Security

	closeOnce sync.Once
	closed    chan struct{}
}

type node struct {
	id             int32
	port, ctrlPort int
	ports          map[string]int // every listener's port, by listener name
	dir            string

	mu  sync.Mutex
	jvm *jvm // nil while stopped
}

// jvm is one run of a node's process.
type jvm struct {
	proc   *os.Process
	exited chan struct{} // closed when proc has exited
	err    error         // how it exited; written before exited is closed
}

func (j *jvm) hasExited() bool {
	select {
	case <-j.exited:
		return true
	default:
		return false
	}
}

// kill kills the process and waits for it.
func (j *jvm) kill() {
	j.proc.Kill()
	<-j.exited
}

// nodeLogs are the files one node writes, in its directory.
const (
	serverLog = "server.log" // log4j2 output of the broker
	stdoutLog = "stdout.log" // the JVM's own stdout and stderr (crashes, bad flags)
	formatLog = "format.log" // the storage format step
)

// StartReal starts a real Kafka cluster, fetching the jars first if they are
// not cached, and returns once Metadata lists every broker and the group
// coordinator is available. On failure nothing is left running and the error
// carries each failed node's log tail.
func StartReal(ctx context.Context, cfg RealConfig) (*Real, error) {
	if cfg.Nodes <= 0 {
		cfg.Nodes = 3
	}
	if cfg.Version == "" {
		cfg.Version = KafkaVersion()
	}
	if cfg.JVMOpts == nil {
		cfg.JVMOpts = DefaultJVMOpts
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 3 * time.Minute
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	libs, err := EnsureJars(ctx, cfg.Version, cfg.Log)
	if err != nil {
		return nil, err
	}
	sweepStale()

	return retryPortTaken(ctx, cfg.Log, "Kafka", func() (*Real, error) { return startOnce(ctx, cfg, java, libs) })
}

var errPortTaken = errors.New("a port picked for a test server was taken by another process")

// retryPortTaken starts a JVM server (Kafka, the registry) up to three
// times. Ports are picked free and released before the JVM binds them, so
// another process can take one in between; a start that then fails to bind
// is retried on new ports rather than failing the whole run.
func retryPortTaken[T any](ctx context.Context, log io.Writer, what string, start func() (T, error)) (T, error) {
	var lastErr error
	var zero T
	for attempt := 1; attempt <= 3; attempt++ {
		r, err := start()
		if err == nil {
			return r, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) || ctx.Err() != nil {
			break
		}
		fmt.Fprintf(log, "kafkatest: a port was taken before %s could bind it, retrying on new ports (attempt %d)\n", what, attempt+1)
	}
	return zero, lastErr
}

func startOnce(ctx context.Context, cfg RealConfig, java, libs string) (_ *Real, err error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()

	dir, err := ownedTempDir("kql-kafka-", "cluster")
	if err != nil {
		return nil, err
	}
	r := &Real{cfg: cfg, java: java, libs: libs, dir: dir, closed: make(chan struct{})}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()

	if r.clusterID, err = newClusterID(); err != nil {
		return nil, err
	}
	if cfg.Secure {
		if r.sec, err = newSecurity(dir); err != nil {
			return nil, fmt.Errorf("generating the secure cluster's certificates: %w", err)
		}
	}
	per := 2
	if cfg.Secure {
		per = 5
	}
	extra := per
	per += len(cfg.Listeners)
	ports, err := freePorts(per * cfg.Nodes)
	if err != nil {
		return nil, err
	}
	for i := range cfg.Nodes {
		p := ports[per*i : per*(i+1)]
		n := &node{id: int32(i + 1), port: p[0], ctrlPort: p[1], dir: filepath.Join(dir, fmt.Sprintf("node-%d", i+1)),
			ports: map[string]int{ListenerPlaintext: p[0], "CONTROLLER": p[1]}}
		if cfg.Secure {
			n.ports[ListenerSASLSSL], n.ports[ListenerSSL], n.ports[ListenerBadAdvertised] = p[2], p[3], p[4]
		}
		for j, l := range cfg.Listeners {
			n.ports[l.Name] = p[extra+j]
		}
		if err := os.MkdirAll(n.dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating node %d's directory: %w", n.id, err)
		}
		r.nodes = append(r.nodes, n)
	}
	if err := r.writeConfigs(); err != nil {
		return nil, err
	}

	start := time.Now()
	if err := r.format(ctx); err != nil {
		return nil, err
	}
	formatted := time.Now()
	for _, n := range r.nodes {
		if err := r.spawn(n); err != nil {
			return nil, err
		}
	}
	if err := r.waitBrokers(ctx); err != nil {
		return nil, err
	}
	listed := time.Now()
	if err := r.warmCoordinators(ctx); err != nil {
		return nil, err
	}
	round := func(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }
	fmt.Fprintf(cfg.Log, "kafkatest: Apache Kafka %s, %d brokers (KRaft combined) up in %s (format %s, brokers listed %s, group coordinator %s): %s\n",
		cfg.Version, cfg.Nodes, round(time.Since(start)), round(formatted.Sub(start)), round(listed.Sub(formatted)), round(time.Since(listed)), r.describe())
	return r, nil
}

// Name is "kafka".
func (r *Real) Name() string { return "kafka" }

// Version is the Kafka release running.
func (r *Real) Version() string { return r.cfg.Version }

// Dir is the cluster's directory (one node-N subdirectory per node with its
// data and logs); Close removes it.
func (r *Real) Dir() string { return r.dir }

// Bootstrap returns every broker's address, so a client still bootstraps
// while one broker is stopped. A test that must prove routing from a single
// seed can use Brokers()[0].Addr alone.
func (r *Real) Bootstrap() []string {
	var out []string
	for _, b := range r.Brokers() {
		out = append(out, b.Addr)
	}
	return out
}

// Brokers lists every node, running or stopped, sorted by id.
func (r *Real) Brokers() []Broker {
	out := make([]Broker, 0, len(r.nodes))
	for _, n := range r.nodes {
		out = append(out, Broker{ID: n.id, Addr: n.addr()})
	}
	return out
}

func (n *node) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.port)) }

func (r *Real) ids() []int32 {
	ids := make([]int32, 0, len(r.nodes))
	for _, n := range r.nodes {
		ids = append(ids, n.id)
	}
	return ids
}

func (r *Real) describe() string {
	var parts []string
	for _, b := range r.Brokers() {
		parts = append(parts, fmt.Sprintf("%d@%s", b.ID, b.Addr))
	}
	return strings.Join(parts, " ")
}

func (r *Real) node(id int32) (*node, error) {
	for _, n := range r.nodes {
		if n.id == id {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no broker %d in this cluster (brokers: %v)", id, r.ids())
}

// Running reports whether broker id's JVM is running.
func (r *Real) Running(id int32) bool {
	n, err := r.node(id)
	if err != nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runningLocked()
}

func (n *node) runningLocked() bool { return n.jvm != nil && !n.jvm.hasExited() }

// StopBroker stops broker id. With kill it sends SIGKILL (a crash: no
// controlled shutdown, the controller notices by a missed heartbeat); else
// SIGTERM and waits up to a minute for Kafka's controlled shutdown, killing
// it and returning an error if it does not finish. The node's data stays for
// StartBroker.
func (r *Real) StopBroker(id int32, kill bool) error {
	n, err := r.node(id)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.runningLocked() {
		return fmt.Errorf("broker %d is not running", id)
	}
	j := n.jvm
	n.jvm = nil
	if kill {
		j.kill()
		return nil
	}
	if err := terminate(j.proc); err != nil {
		j.kill()
		return fmt.Errorf("stopping broker %d (pid %d) with SIGTERM: %w; killed it", id, j.proc.Pid, err)
	}
	const grace = time.Minute
	select {
	case <-j.exited:
		return nil
	case <-time.After(grace):
		pid := j.proc.Pid
		j.kill()
		return fmt.Errorf("broker %d (pid %d) did not shut down within %s of SIGTERM and was killed; its log ends:\n%s",
			id, pid, grace, n.logTail(30))
	}
}

// StartBroker restarts a stopped broker on its old data and ports, and
// returns once the cluster is as a test expects to find it: every broker in
// Metadata, every partition fully replicated, and leadership handed back to
// the preferred replicas (without that, a restarted broker leads nothing
// until Kafka's own rebalance runs minutes later).
func (r *Real) StartBroker(id int32) error { return r.startBroker(id, true) }

// StartBrokerLeavingLeaders restarts a stopped broker like StartBroker and
// waits until every broker lists it and every partition is fully in sync
// again, but leaves leadership where the controller put it while the broker
// was away: the state a preferred leader election starts from. (StartBroker
// elects the preferred leaders itself; on a cluster with Kafka's own
// auto.leader.rebalance.enable the controller does too, within minutes.)
func (r *Real) StartBrokerLeavingLeaders(id int32) error { return r.startBroker(id, false) }

// startBroker is StartBroker, electing the preferred leaders only with
// electLeaders.
func (r *Real) startBroker(id int32, electLeaders bool) error {
	n, err := r.node(id)
	if err != nil {
		return err
	}
	n.mu.Lock()
	running := n.runningLocked()
	n.mu.Unlock()
	if running {
		return fmt.Errorf("broker %d is already running", id)
	}
	if err := r.spawn(n); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.waitBrokers(ctx); err != nil {
		return fmt.Errorf("restarting broker %d: %w", id, err)
	}
	if err := r.WaitHealthy(ctx); err != nil {
		return fmt.Errorf("restarting broker %d: %w", id, err)
	}
	if !electLeaders {
		return nil
	}
	if err := r.electPreferred(ctx); err != nil {
		return fmt.Errorf("restarting broker %d: %w", id, err)
	}
	return nil
}

// CheckBrokers returns an error, with its log tail, if a broker that should
// be running has exited on its own (StopBroker'd brokers do not count).
func (r *Real) CheckBrokers() error { return r.nodeDied() }

// nodeDied returns an error with the log tail of a node that is expected to
// run but whose JVM exited.
func (r *Real) nodeDied() error {
	for _, n := range r.nodes {
		n.mu.Lock()
		j := n.jvm
		n.mu.Unlock()
		if j != nil && j.hasExited() {
			tailText := n.logTail(40)
			first := ""
			if line := n.firstError(); line != "" && !strings.Contains(tailText, line) {
				// A broker that fails at start-up can log more on its way
				// down (a second fault, its config) than the tail holds.
				first = "; its first error: " + line
			}
			err := fmt.Errorf("Kafka broker %d (pid %d, %s) exited: %v%s; its log ends:\n%s", n.id, j.proc.Pid, n.addr(), j.err, first, tailText)
			if strings.Contains(tailText, "Address already in use") {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		}
	}
	return nil
}

func (r *Real) allTails() string {
	var b strings.Builder
	for _, n := range r.nodes {
		fmt.Fprintf(&b, "\n--- broker %d (%s), last lines of its log:\n%s", n.id, n.addr(), n.logTail(15))
	}
	return b.String()
}

// firstError returns the first ERROR or FATAL line of the node's logs.
func (n *node) firstError() string {
	for _, f := range []string{stdoutLog, serverLog} {
		data, err := os.ReadFile(filepath.Join(n.dir, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, " ERROR ") || strings.Contains(line, " FATAL ") {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// LogTail returns the last n lines of broker id's log (and of the JVM's own
// output, where a crash or a bad flag shows up).
func (r *Real) LogTail(id int32, n int) string {
	nd, err := r.node(id)
	if err != nil {
		return err.Error()
	}
	return nd.logTail(n)
}

// logTail returns the last lines of each of the node's files (default: the
// JVM's output and the broker log) that has anything in it.
func (n *node) logTail(lines int, files ...string) string {
	if len(files) == 0 {
		files = []string{stdoutLog, serverLog}
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(n.dir, f))
		if err != nil || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		fmt.Fprintf(&b, "[%s]\n%s\n", filepath.Join(n.dir, f), tail(string(data), lines))
	}
	if b.Len() == 0 {
		return "(the node wrote no log)"
	}
	return strings.TrimRight(b.String(), "\n")
}

func (r *Real) adminClient() (*kgo.Client, error) {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(r.Bootstrap()...),
		kgo.DialTimeout(2*time.Second),
		kgo.RetryTimeout(5*time.Second),
		kgo.MetadataMinAge(100*time.Millisecond),
	)
	if err != nil {
		return nil, fmt.Errorf("creating an admin client for the test cluster: %w", err)
	}
	return cl, nil
}

// Close kills every node and removes the cluster's directory. The data is
// thrown away, so there is no point in a controlled shutdown; Shutdown is the
// gentle version.
func (r *Real) Close() {
	r.closeOnce.Do(func() {
		close(r.closed)
		var wg sync.WaitGroup
		for _, n := range r.nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n.mu.Lock()
				defer n.mu.Unlock()
				if n.jvm != nil {
					n.jvm.kill()
					n.jvm = nil
				}
			}()
		}
		wg.Wait()
		os.RemoveAll(r.dir)
	})
}

// Shutdown stops every node with SIGTERM concurrently, waits up to timeout
// for their controlled shutdown, kills what is left, and removes the
// cluster's directory.
func (r *Real) Shutdown(timeout time.Duration) error {
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range r.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.mu.Lock()
			j := n.jvm
			n.mu.Unlock()
			if j == nil {
				return
			}
			terminate(j.proc)
			select {
			case <-j.exited:
			case <-time.After(timeout):
				mu.Lock()
				errs = append(errs, fmt.Errorf("broker %d did not shut down within %s and was killed", n.id, timeout))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	r.Close()
	return errors.Join(errs...)
}

// --- starting processes ---

type nodeConfig struct {
	ID                   int32
	Port, ControllerPort int
	Listeners            string // listeners=
	Advertised           string // advertised.listeners=
	ProtocolMap          string // listener.security.protocol.map=
	Voters               string
	DataDir              string
	N, MinISR            int
}

func (r *Real) writeConfigs() error {
	tmpl, err := template.New("server.properties.tmpl").Option("missingkey=error").Parse(serverProperties)
	if err != nil {
		return fmt.Errorf("parsing files/server.properties.tmpl: %w", err)
	}
	var voters []string
	for _, n := range r.nodes {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.ctrlPort))
	}
	props := map[string]string{}
	if r.sec != nil {
		for k, v := range r.sec.brokerProps() {
			props[k] = v
		}
	}
	for k, v := range r.cfg.Props {
		props[k] = v
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, n := range r.nodes {
		names := []string{ListenerPlaintext, "CONTROLLER"}
		protos := []string{"PLAINTEXT:PLAINTEXT", "CONTROLLER:PLAINTEXT"}
		if r.sec != nil {
			names = append(names, ListenerSASLSSL, ListenerSSL, ListenerBadAdvertised)
			protos = append(protos, "SASL_SSL:SASL_SSL", "SSL:SSL", ListenerBadAdvertised+":PLAINTEXT")
		}
		advHost := map[string]string{}
		for _, l := range r.cfg.Listeners {
			names = append(names, l.Name)
			protos = append(protos, l.Name+":"+l.Protocol)
			advHost[l.Name] = l.AdvertisedHost
		}
		var listeners, advertised []string
		for _, name := range names {
			l := fmt.Sprintf("%s://127.0.0.1:%d", name, n.ports[name])
			listeners = append(listeners, l)
			if name == "CONTROLLER" {
				continue
			}
			if name == ListenerBadAdvertised && i == len(r.nodes)-1 {
				l = name + "://" + UnreachableAddr
			}
			if h := advHost[name]; h != "" {
				l = fmt.Sprintf("%s://%s:%d", name, h, n.ports[name])
			}
			advertised = append(advertised, l)
		}
		var b bytes.Buffer
		err := tmpl.Execute(&b, nodeConfig{
			ID: n.id, Port: n.port, ControllerPort: n.ctrlPort,
			Listeners: strings.Join(listeners, ","), Advertised: strings.Join(advertised, ","), ProtocolMap: strings.Join(protos, ","),
			Voters:  strings.Join(voters, ","),
			DataDir: filepath.Join(n.dir, "data"),
			N:       len(r.nodes), MinISR: min(2, len(r.nodes)),
		})
		if err != nil {
			return fmt.Errorf("rendering files/server.properties.tmpl for node %d: %w", n.id, err)
		}
		if len(keys) > 0 {
			b.WriteString("\n# RealConfig.Secure and RealConfig.Props (later entries win)\n")
			for _, k := range keys {
				fmt.Fprintf(&b, "%s=%s\n", k, propEscape(props[k]))
			}
		}
		if err := os.WriteFile(filepath.Join(n.dir, "server.properties"), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing node %d's config: %w", n.id, err)
		}
		if err := os.WriteFile(filepath.Join(n.dir, "log4j2.xml"), log4j2XML, 0o644); err != nil {
			return fmt.Errorf("writing node %d's log config: %w", n.id, err)
		}
	}
	return nil
}

// javaCmd builds a JVM command for node n running mainClass, logging to
// logName in the node's directory.
func (r *Real) javaCmd(ctx context.Context, n *node, logName, mainClass string, args ...string) *exec.Cmd {
	argv := slices.Clone(r.cfg.JVMOpts)
	argv = append(argv,
		"-Dlog4j2.configurationFile="+filepath.Join(n.dir, "log4j2.xml"),
		"-Dkql.node.log="+filepath.Join(n.dir, logName),
		"-Dkafka.logs.dir="+n.dir,
		"-cp", filepath.Join(r.libs, "*"),
		mainClass)
	argv = append(argv, args...)
	var cmd *exec.Cmd
	if ctx != nil {
		cmd = exec.CommandContext(ctx, r.java, argv...)
	} else {
		cmd = exec.Command(r.java, argv...)
	}
	cmd.Dir = n.dir
	return cmd
}

// format writes each node's storage (meta.properties with the cluster id and
// the bootstrap metadata for the static quorum), all nodes concurrently.
func (r *Real) format(ctx context.Context) error {
	errs := make([]error, len(r.nodes))
	var wg sync.WaitGroup
	for i, n := range r.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"format", "--cluster-id", r.clusterID, "--config", filepath.Join(n.dir, "server.properties")}
			if r.sec != nil {
				args = append(args, r.sec.scramFormatArgs()...)
			}
			cmd := r.javaCmd(ctx, n, formatLog, "kafka.tools.StorageTool", args...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("formatting broker %d's storage (%s) failed: %w\n%s\n%s",
					n.id, strings.Join(cmd.Args, " "), err, tail(string(out), 20), n.logTail(20, formatLog))
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// spawn starts node n's JVM, which lives until StopBroker, Close, or the
// death of this process (see startProcess).
func (r *Real) spawn(n *node) error {
	select {
	case <-r.closed:
		return errors.New("the cluster is closed")
	default:
	}
	out, err := os.OpenFile(filepath.Join(n.dir, stdoutLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening broker %d's output file: %w", n.id, err)
	}
	defer out.Close() // the child has its own descriptor
	cmd := r.javaCmd(nil, n, serverLog, "kafka.Kafka", filepath.Join(n.dir, "server.properties"))
	cmd.Stdout, cmd.Stderr = out, out

	n.mu.Lock()
	defer n.mu.Unlock()
	if err := startProcess(cmd); err != nil {
		return fmt.Errorf("starting broker %d (%s): %w", n.id, r.java, err)
	}
	if err := os.WriteFile(filepath.Join(n.dir, pidFile), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("recording broker %d's pid: %w", n.id, err)
	}
	j := &jvm{proc: cmd.Process, exited: make(chan struct{})}
	n.jvm = j
	go func() {
		j.err = cmd.Wait()
		close(j.exited)
	}()
	return nil
}

// findJava returns $JAVA_HOME/bin/java or java from PATH.
func findJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p := filepath.Join(home, "bin", "java")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", errors.New("java is not installed: the real-Kafka test bed needs Java 17 or newer; " +
			"run `make deps` (installs it on Debian/Ubuntu as root) or install it yourself " +
			"(Debian/Ubuntu: apt-get install openjdk-17-jdk-headless), or set JAVA_HOME")
	}
	return p, nil
}

// newClusterID returns a random Kafka cluster id: 16 random bytes in
// unpadded URL-safe base64, not starting with '-' (Kafka avoids those, they
// read as flags on a command line).
func newClusterID() (string, error) {
	for {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("generating a cluster id: %w", err)
		}
		id := base64.RawURLEncoding.EncodeToString(b[:])
		if id[0] != '-' {
			return id, nil
		}
	}
}

// freePorts returns n distinct ports that were free on 127.0.0.1 a moment
// ago (all held open together, so they are distinct). They are picked
// below the kernel's ephemeral range, which every bind to port 0 (kfake,
// httptest, another package's test binary running alongside) and every
// outgoing connection draws from: a broker restarted on its old ports
// (StartBroker) would otherwise find one taken by them meanwhile. When
// that range leaves no room below it, the kernel picks.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	lo := ephemeralLow()
	for tries := 0; len(ports) < n; tries++ {
		addr := "127.0.0.1:0"
		if lo > portFloor+1000 && tries < 100*n {
			addr = "127.0.0.1:" + strconv.Itoa(portFloor+mrand.IntN(lo-portFloor))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if addr != "127.0.0.1:0" {
				continue // taken: try another
			}
			return nil, fmt.Errorf("finding a free port on 127.0.0.1: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// portFloor is the lowest port freePorts picks (well above the ports of
// services a developer may run).
const portFloor = 20000

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// /proc/sys/net/ipv4/ip_local_port_range), or 0 if it cannot be read.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	lo, _ := strconv.Atoi(f[0])
	return lo
}

// propEscape writes a value for a Java properties file: backslashes are
// escapes there (a JAAS config or a mapping rule may hold them).
func propEscape(v string) string { return strings.ReplaceAll(v, `\`, `\\`) }
