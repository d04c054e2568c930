package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

// writingStatements is one statement of every kind that writes or changes
// the cluster, and the EXECUTE form of every dry run.
var writingStatements = []string{
	`PRODUCE INTO orders KEY 'k' VALUE 'v'`,
	`PRODUCE INTO orders FROM FILE 'orders.jsonl'`,
	`INSERT INTO orders SELECT * FROM orders LIMIT 1 EXECUTE`,
	`CREATE TOPIC fresh PARTITIONS 1`,
	`DROP TOPIC orders`,
	`ALTER TOPIC orders SET (retention.ms = '1')`,
	`ALTER TOPIC orders UNSET (retention.ms)`,
	`ALTER TOPIC orders PARTITIONS 4`,
	`ALTER BROKER 0 SET (log.cleaner.threads = '2')`,
	`ALTER CLUSTER SET (log.retention.ms = '1')`,
	`RESET GROUP billing TOPIC orders TO EARLIEST EXECUTE`,
	`DELETE GROUP billing`,
	`RESET SHARE GROUP work TOPIC orders TO EARLIEST EXECUTE`,
	`DELETE SHARE GROUP work`,
	`DELETE SHARE GROUP work TOPIC orders`,
	`DELETE RECORDS FROM orders BEFORE (0:1) EXECUTE`,
	`DELETE RECORDS FROM orders BEFORE OFFSET 1 EXECUTE`,
	`GRANT READ ON TOPIC orders TO 'User:alice'`,
	`DENY WRITE ON TOPIC orders TO 'User:bob'`,
	`REVOKE READ ON TOPIC orders FROM 'User:alice' EXECUTE`,
	`CREATE USER alice`,
	`ALTER USER alice PASSWORD`,
	`DROP USER alice`,
	`ALTER QUOTA FOR USER alice SET (consumer_byte_rate = 1048576)`,
	`ABORT TRANSACTION ON TOPIC orders PARTITION 0 PRODUCER 1 EPOCH 0 EXECUTE`,
	`ELECT LEADERS FOR TOPIC orders EXECUTE`,
	`ELECT LEADERS UNCLEAN FOR TOPIC orders EXECUTE`,
	`CANCEL REASSIGNMENT ON TOPIC orders PARTITION 0 EXECUTE`,
	`ALTER TOPIC orders PARTITION 0 REPLICAS (1, 2, 0) EXECUTE`,
}

// The list above covers every statement type exec classifies as writing:
// a writing statement added to the language is added here too.
func TestWritingStatementsListIsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, src := range writingStatements {
		st, err := lang.Parse(src + ";")
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if exec.StatementAccess(st) != exec.Writes {
			t.Errorf("%s does not write", src)
		}
		seen[fmt.Sprintf("%T", st)] = true
	}
	// Every help example that writes is of a kind listed here.
	for _, e := range lang.StatementHelp() {
		st, err := lang.Parse(e.Example + ";")
		if err != nil {
			t.Fatalf("help example %s: %v", e.Example, err)
		}
		if exec.WritesToCluster(st) && !seen[fmt.Sprintf("%T", st)] {
			t.Errorf("help example %q writes (%T) and no statement of its kind is in writingStatements", e.Example, st)
		}
	}
}

// readOnlyProfile writes a profile NAME for bootstrap with kql.readonly=true
// and returns the environment that finds it.
func readOnlyProfile(t *testing.T, name string, bootstrap []string) map[string]string {
	t.Helper()
	cfg := t.TempDir()
	dir := filepath.Join(cfg, "kql", "clusters")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	text := "bootstrap.servers=" + strings.Join(bootstrap, ",") + "\nkql.readonly=true\n"
	if err := os.WriteFile(filepath.Join(dir, name+".properties"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"XDG_CONFIG_HOME": cfg, "HOME": t.TempDir()}
}

// TestReadOnlyRefusesEveryWriteBeforeSendingAnything runs every writing
// statement through the real kafka client against kfake's 3 brokers, with
// a hook on every request: connecting sends ApiVersions and Metadata, and
// no statement sends anything (--trace prints nothing, the hook sees no
// other key), for a read-only profile and for --read-only.
func TestReadOnlyRefusesEveryWriteBeforeSendingAnything(t *testing.T) {
	f := kafkatest.NewFake(t)
	cl := kafkatest.Client(t, f)
	ctx := context.Background()
	kafkatest.CreateTopic(t, f, "orders", 3, 1, nil)
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("kept")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	keys := map[string]int{}
	f.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		mu.Lock()
		keys[kmsg.NameForKey(req.Key())]++
		mu.Unlock()
		return nil, nil, false
	})
	script := filepath.Join(t.TempDir(), "writes.kql")
	if err := os.WriteFile(script, []byte(strings.Join(writingStatements, ";\n")+";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := readOnlyProfile(t, "prod", f.Bootstrap())
	for _, tc := range []struct {
		name string
		args []string
		why  string
	}{
		{"profile", []string{"-c", "prod"}, `the cluster profile "prod" is read-only (kql.readonly=true in ` + filepath.Join(env["XDG_CONFIG_HOME"], "kql", "clusters", "prod.properties") + `); to change this cluster, use a profile without kql.readonly=true`},
		{"flag", []string{"-b", strings.Join(f.Bootstrap(), ","), "--read-only"}, "kql runs with --read-only; run kql without --read-only to change the cluster"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			clear(keys)
			mu.Unlock()
			r := runReal(t, env, append(tc.args, "--trace", "--keep-going", "-f", script)...)
			if r.code != exitFailed {
				t.Fatalf("want exit 1:\n%s", r)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if len(lines) != len(writingStatements) {
				t.Fatalf("want one error per statement (%d):\n%s", len(writingStatements), r)
			}
			for i, line := range lines {
				want := fmt.Sprintf("%s:%d: ", script, i+1)
				if !strings.HasPrefix(line, want) || !strings.Contains(line, ": refused, nothing was sent: it writes to the cluster and "+tc.why) {
					t.Errorf("statement %d (%s): got\n%s", i+1, writingStatements[i], line)
				}
			}
			if strings.Contains(r.stderr, "trace:") {
				t.Errorf("a refused statement sent a request:\n%s", r.stderr)
			}
			mu.Lock()
			defer mu.Unlock()
			var other []string
			for k := range keys {
				// The connection's own requests. franz-go also asks for
				// its telemetry subscription (KIP-714) in the background,
				// whenever it gets to it: on a loaded machine that can
				// land inside this run, and it writes nothing.
				switch k {
				case "ApiVersions", "Metadata", "GetTelemetrySubscriptions", "PushTelemetry":
				default:
					other = append(other, k)
				}
			}
			sort.Strings(other)
			if len(other) > 0 || keys["Metadata"] == 0 {
				t.Fatalf("the brokers saw %v: only the connection's ApiVersions, Metadata and client telemetry may reach them", keys)
			}
		})
	}
	// Nothing changed: the topic is there with its record.
	r := runReal(t, env, "-c", "prod", "--format", "csv", "-e", "CONSUME orders FROM OLDEST LIMIT 5")
	if r.code != 0 || !strings.Contains(r.stdout, "kept") {
		t.Fatalf("%s", r)
	}
}

// Reads and dry runs still run on a read-only connection.
func TestReadOnlyRunsReadsAndDryRuns(t *testing.T) {
	f := kafkatest.NewFake(t)
	kafkatest.CreateTopic(t, f, "orders", 3, 1, nil)
	env := readOnlyProfile(t, "prod", f.Bootstrap())
	r := runReal(t, env, "-c", "prod", "--format", "csv", "-e", `SHOW TOPICS;
DESCRIBE TOPIC orders;
CONSUME orders LIMIT 1;
DELETE RECORDS FROM orders BEFORE OFFSET 0;
ELECT LEADERS FOR TOPIC orders;
EXPLAIN DROP TOPIC orders;
EXPLAIN PRODUCE INTO orders VALUE 'x'`)
	if r.code != 0 || strings.Contains(r.stderr, "refused") {
		t.Fatalf("reads and dry runs must run:\n%s", r)
	}
}

// The guard decides from the statement alone: the shell's fake executor
// never sees a refused statement, and every help example that reads runs.
func TestReadOnlyOverTheHelpExamples(t *testing.T) {
	var reads, writes []string
	var all []string
	for _, e := range lang.StatementHelp() {
		st, err := lang.Parse(e.Example + ";")
		if err != nil {
			t.Fatal(err)
		}
		if exec.WritesToCluster(st) {
			writes = append(writes, e.Example)
		} else {
			reads = append(reads, fmt.Sprintf("%T", st))
		}
		all = append(all, e.Example)
	}
	h := newHarness(t)
	r := h.run("--read-only", "--keep-going", "-e", strings.Join(all, ";\n")+";")
	if got := strings.Count(r.stderr, "refused, nothing was sent"); got != len(writes) {
		t.Fatalf("want %d refusals (%v):\n%s", len(writes), writes, r)
	}
	var ran []string
	for _, s := range h.exec.ran {
		ran = append(ran, fmt.Sprintf("%T", s))
	}
	if strings.Join(ran, " ") != strings.Join(reads, " ") {
		t.Fatalf("the executor ran\n%v\nwant exactly the reads\n%v", ran, reads)
	}
}

// In the shell a refused statement is not asked about (the question counts
// what would go, which asks the cluster) and the prompt names the profile.
func TestReadOnlyInTheShellAsksNothing(t *testing.T) {
	h := newHarness(t)
	profileHome(t, h, map[string]string{"prod": prodProfile})
	r := h.repl("DROP TOPIC orders;\nSHOW TOPICS;\n", "-c", "prod")
	if strings.Contains(r.stderr, "[y/N]") || !strings.Contains(r.stderr, `error: DROP TOPIC orders: refused, nothing was sent: it writes to the cluster and the cluster profile "prod" is read-only`) {
		t.Fatalf("%s", r)
	}
	if got := h.exec.ranKinds(); len(got) != 1 || got[0] != "ShowTopics" {
		t.Fatalf("ran %v", got)
	}
	if !strings.Contains(r.stderr, `read-only: the cluster profile "prod" is read-only`) {
		t.Errorf("the banner must say the connection is read-only:\n%s", r)
	}
}
