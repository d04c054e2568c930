package kafkatest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RegistryConfig says how to start a schema registry. The zero value is the
// test bed's registry: Apicurio Registry DefaultRegistryVersion (or
// $KQL_REGISTRY_VERSION) with in-memory storage.
type RegistryConfig struct {
	Version string            // default RegistryVersion()
	Props   map[string]string // extra or overriding Quarkus/Apicurio properties, passed as -Dkey=value
	JVMOpts []string          // replace DefaultRegistryJVMOpts
	Log     io.Writer         // progress lines; nil discards them

	// StartTimeout bounds starting the JVM and waiting for the
	// Confluent-compatible API to answer (default 2 minutes); it does not
	// include fetching the registry.
	StartTimeout time.Duration
}

// DefaultRegistryJVMOpts keeps the registry as small as the Kafka nodes: a
// small heap, the serial collector and the client compiler only (about
// 250 MB resident, ready in 4 s on a quiet 2-core machine).
var DefaultRegistryJVMOpts = []string{
	"-Xms64m", "-Xmx256m",
	"-XX:+UseSerialGC",
	"-XX:TieredStopAtLevel=1",
	"-XX:+ExitOnOutOfMemoryError",
	"-Djava.awt.headless=true",
}

// registryProps is the registry's configuration (Java system properties,
// which Quarkus reads as config). spawn adds the http host and port.
//
//   - Storage: SQL on an in-memory H2 database (Apicurio's default, pinned
//     here): nothing on disk, everything gone when the JVM dies.
//   - apicurio.ccompat.legacy-id-mode.enabled=false (the default, pinned):
//     ids are Apicurio *content* ids, one per distinct content, so the same
//     schema registered in two subjects has one id, as in Confluent. Legacy
//     mode would hand out global ids, one per subject version.
//   - apicurio.ccompat.use-canonical-hash=true (default false): registering
//     or looking up a schema that differs from a subject's existing version
//     only in formatting finds that version, as Confluent does, instead of
//     creating a new version with a new id.
//   - apicurio.ccompat.max-subjects=100000 (default 1000): GET /subjects
//     returns every subject, as Confluent does. A real Apicurio with the
//     default silently truncates the list at 1000.
//   - Deleting subjects and versions through the ccompat API works with
//     Apicurio's defaults, permanent=true included (the
//     apicurio.rest.deletion.*.enabled switches, off by default, gate only
//     Apicurio's own v3 API; TestRegistryDelete passes with them off).
//   - Authentication and authorization stay off (Apicurio's defaults,
//     pinned): no OIDC tenant, no basic auth, no roles.
//   - apicurio.storage.snapshot.location and java.io.tmpdir point into the
//     registry's directory, so Vert.x's file cache and anything else the JVM
//     writes go away with it.
func registryProps(dir string) map[string]string {
	return map[string]string{
		"apicurio.storage.kind":                           "sql",
		"apicurio.storage.sql.kind":                       "h2",
		"apicurio.ccompat.legacy-id-mode.enabled":         "false",
		"apicurio.ccompat.use-canonical-hash":             "true",
		"apicurio.ccompat.max-subjects":                   "100000",
		"quarkus.oidc.tenant-enabled":                     "false",
		"apicurio.authn.basic-client-credentials.enabled": "false",
		"apicurio.auth.role-based-authorization":          "false",
		"apicurio.storage.snapshot.location":              filepath.Join(dir, "tmp"),
		"java.io.tmpdir":                                  filepath.Join(dir, "tmp"),
	}
}

// Registry is a running Apicurio Registry JVM on 127.0.0.1, serving the
// Confluent Schema Registry API (ccompat v7) at URL. Close it when done;
// SharedRegistry does that for tests.
//
// # How it differs from Confluent Schema Registry and srfake
//
// Measured with franz-go's pkg/sr v1.8.0 against Apicurio Registry 3.0.9 as
// the test bed configures it (registryProps), and against pkg/sr/srfake, by
// the TestRegistry*
// tests (registry_test.go runs each case on both and asserts each one's
// behaviour, so a change shows up as a failure). Confluent's behaviour is
// from its API reference and source, not run here.
//
// Reading schemas (what a decoder depends on):
//
//   - Ids are Apicurio content ids: the same schema text with the same
//     references registered in two subjects gets ONE id, as in Confluent and
//     srfake. But ids are not dense: the sequence is shared with other rows;
//     a fresh registry handed out 1, 3, 4, 5, 6 to TestRegistrySchemas'
//     first six new schemas (never 2). Never assume id n+1 exists or that
//     ids count schemas.
//   - The schema text comes back exactly as registered (srfake too).
//     Confluent returns Avro in its canonical compact form. A decoder must
//     parse the text, never compare it byte for byte.
//   - A formatting variant (same schema, other whitespace) registered in the
//     SAME subject is the existing version with the existing id, as in
//     Confluent (thanks to use-canonical-hash); in ANOTHER subject it gets a
//     NEW id (Confluent and srfake: the existing id).
//   - Reads carry "schemaType":"AVRO" explicitly (Confluent omits it for
//     Avro); sr decodes both to sr.TypeAvro. No GUID (Confluent 8 and
//     srfake send one).
//   - References: SchemaByID and SchemaByVersion return them as registered
//     (a Protobuf import is sr.SchemaReference{Name: "<import path>",
//     Subject, Version}); SchemaReferences (GET .../referencedby) lists the
//     ids that import a subject version.
//   - GET /schemas/ids/{id}/schema (SchemaTextByID) returns the raw text, as
//     Confluent does (srfake returns it JSON-quoted).
//   - Errors carry Confluent's codes: unknown id 404/40403
//     (SCHEMA_NOT_FOUND), unknown subject 404/40401, unknown version
//     404/40402, an invalid Avro schema 422/42201 (srfake accepts it). sr
//     returns them as
//     *sr.ResponseError: check ErrorCode or SchemaError() ==
//     sr.ErrSchemaNotFound; errors.Is(err, sr.ErrSchemaNotFound) is false
//     (sr v1.8.0 does not wrap them), on every registry.
//   - A soft-deleted subject's ids still resolve (all three registries).
//     After the hard delete of the only subject holding an id, the id is gone
//     (404/40403), as in Confluent; srfake keeps it.
//
// Not implemented by Apicurio 3.0.9 (404 with an empty body, error code 0):
// GET /schemas/ids/{id}/subjects (sr's SubjectsByID; use SchemaVersionsByID
// or SchemaUsagesByID, which work), GET /schemas (AllSchemas), GET /mode
// (Mode).
//
// Registering and administering:
//
//   - Compatibility: the global level is NONE (Confluent and srfake:
//     BACKWARD). GET /config/{subject} for a subject without a level of its
//     own answers 200 with the global level (srfake too); Confluent answers
//     404/40408 unless ?defaultToGlobal=true. A level that is set is
//     enforced: an incompatible schema gets 409 (sr.ErrIncompatibleSchema);
//     srfake never refuses one.
//   - JSON Schema: Apicurio guesses the type from the content, and refuses
//     a JSON Schema with neither "$schema" nor "properties" at the top (e.g.
//     {"type":"string"}, or {"type":"object"} alone) with 422/42201, even
//     with schemaType JSON. Confluent and srfake accept it.
//   - A hard delete of a subject that was not soft-deleted first: 409/40405
//     (Confluent: 404/40405; srfake allows it).
//   - With Apicurio's default apicurio.ccompat.max-subjects (1000), GET
//     /subjects silently returns only the first 1000 subjects; the test bed
//     raises the limit (TestRegistryLifecycle shows the truncation with 2).
type Registry struct {
	cfg  RegistryConfig
	java string
	jar  string
	dir  string // kql-registry-* under os.TempDir, removed by Close
	port int
	jvm  *jvm
	took time.Duration

	closeOnce sync.Once
}

// registryLog is the JVM's stdout and stderr (Quarkus logs to the console),
// in the registry's directory.
const registryLog = "registry.log"

// StartRegistry starts Apicurio Registry, fetching it first if it is not
// cached, and returns once its Confluent-compatible API answers GET
// /subjects with 200. On failure nothing is left running and the error
// carries the registry's log tail.
func StartRegistry(ctx context.Context, cfg RegistryConfig) (*Registry, error) {
	if cfg.Version == "" {
		cfg.Version = RegistryVersion()
	}
	if cfg.JVMOpts == nil {
		cfg.JVMOpts = DefaultRegistryJVMOpts
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	jar, err := EnsureRegistry(ctx, cfg.Version, cfg.Log)
	if err != nil {
		return nil, err
	}
	sweepStale()

	return retryPortTaken(ctx, cfg.Log, "the registry", func() (*Registry, error) { return startRegistryOnce(ctx, cfg, java, jar) })
}

func startRegistryOnce(ctx context.Context, cfg RegistryConfig, java, jar string) (_ *Registry, err error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()

	dir, err := ownedTempDir("kql-registry-", "registry")
	if err != nil {
		return nil, err
	}
	r := &Registry{cfg: cfg, java: java, jar: jar, dir: dir}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("creating the registry's temporary directory: %w", err)
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	r.port = ports[0]

	start := time.Now()
	if err := r.spawn(); err != nil {
		return nil, err
	}
	if err := r.waitReady(ctx); err != nil {
		return nil, err
	}
	r.took = time.Since(start)
	fmt.Fprintf(cfg.Log, "kafkatest: Apicurio Registry %s up in %s: %s\n", cfg.Version, r.took.Round(100*time.Millisecond), r.URL())
	return r, nil
}

// spawn starts the registry's JVM, which lives until Close or the death of
// this process (see startProcess). It inherits this process's environment,
// KQL_TEST_RUN included, so the Makefile's leak check sees it.
func (r *Registry) spawn() error {
	props := registryProps(r.dir)
	for k, v := range r.cfg.Props {
		props[k] = v
	}
	props["quarkus.http.host"] = "127.0.0.1" // loopback only, whatever Props says
	props["quarkus.http.port"] = strconv.Itoa(r.port)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	argv := slices.Clone(r.cfg.JVMOpts)
	for _, k := range keys {
		argv = append(argv, "-D"+k+"="+props[k])
	}
	argv = append(argv, "-jar", r.jar)

	out, err := os.OpenFile(filepath.Join(r.dir, registryLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the registry's log file: %w", err)
	}
	defer out.Close() // the child has its own descriptor
	cmd := exec.Command(r.java, argv...)
	cmd.Dir = r.dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := startProcess(cmd); err != nil {
		return fmt.Errorf("starting Apicurio Registry (%s): %w", r.java, err)
	}
	if err := os.WriteFile(filepath.Join(r.dir, pidFile), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("recording the registry's pid: %w", err)
	}
	j := &jvm{proc: cmd.Process, exited: make(chan struct{})}
	r.jvm = j
	go func() {
		j.err = cmd.Wait()
		close(j.exited)
	}()
	return nil
}

// waitReady polls GET /subjects on the ccompat API until it answers 200, the
// JVM exits, or ctx ends.
func (r *Registry) waitReady(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	probe := r.URL() + "/subjects"
	var last string
	for {
		if err := r.Check(); err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, probe, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = "HTTP " + resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("Apicurio Registry (pid %d) did not answer GET %s with 200 in time (last: %s); its log ends:\n%s",
				r.jvm.proc.Pid, probe, last, r.LogTail(30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// URL is the base URL of the Confluent-compatible API,
// http://127.0.0.1:PORT/apis/ccompat/v7: what sr.URLs and kql's
// --schema-registry take.
func (r *Registry) URL() string { return r.BaseURL() + "/apis/ccompat/v7" }

// BaseURL is http://127.0.0.1:PORT, the root of every Apicurio API (its own
// is at /apis/registry/v3).
func (r *Registry) BaseURL() string { return "http://" + r.Addr() }

// Addr is the registry's HTTP address, 127.0.0.1:PORT.
func (r *Registry) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// Version is the Apicurio Registry release running.
func (r *Registry) Version() string { return r.cfg.Version }

// Dir is the registry's directory (its log and temporary files); Close
// removes it.
func (r *Registry) Dir() string { return r.dir }

// StartupTime is how long the JVM took to answer, from its start.
func (r *Registry) StartupTime() time.Duration { return r.took }

// Check returns an error, with the log tail, if the registry's JVM has exited.
func (r *Registry) Check() error {
	j := r.jvm
	if j == nil || !j.hasExited() {
		return nil
	}
	tailText := r.LogTail(40)
	err := fmt.Errorf("Apicurio Registry (pid %d, %s) exited: %v; its log ends:\n%s", j.proc.Pid, r.Addr(), j.err, tailText)
	if strings.Contains(tailText, "already in use") || strings.Contains(tailText, "in use by another process") {
		return fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

// LogTail returns the last n lines of the registry's log.
func (r *Registry) LogTail(n int) string {
	p := filepath.Join(r.dir, registryLog)
	data, err := os.ReadFile(p)
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return "(the registry wrote no log)"
	}
	return fmt.Sprintf("[%s]\n%s", p, tail(string(data), n))
}

// Close kills the registry's JVM, waits for it, and removes its directory.
// Its storage is in memory, so there is nothing to shut down gently.
func (r *Registry) Close() {
	r.closeOnce.Do(func() {
		if r.jvm != nil {
			r.jvm.kill()
		}
		os.RemoveAll(r.dir)
	})
}
