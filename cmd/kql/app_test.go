package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

func TestVersionAndHelp(t *testing.T) {
	h := newHarness(t)
	r := h.run("--version")
	if r.code != 0 || r.stdout != "kql "+Version+"\n" || r.stderr != "" {
		t.Fatalf("--version:\n%s", r)
	}
	r = h.run("--help")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--help:\n%s", r)
	}
	fs := newFlagSet(&options{})
	for _, name := range []string{"bootstrap", "playground", "playground-static", "execute", "file", "format", "check", "command-config",
		"tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name", "tls-insecure-skip-verify", "sasl-mechanism",
		"sasl-user", "schema-registry", "schema-registry-user", "schema-registry-ca", "timeout", "client-id", "keep-going", "color", "no-history", "history-file", "quiet", "trace", "version", "help"} {
		if fs.Lookup(name) == nil {
			t.Errorf("flag --%s is not defined", name)
		}
		if !strings.Contains(r.stdout, "--"+name+" ") && !strings.Contains(r.stdout, "--"+name+"\n") {
			t.Errorf("--help does not list --%s", name)
		}
	}
	if strings.Contains(r.stdout, "true|false") {
		t.Errorf("--help shows pflag's [=true|false] noise:\n%s", r.stdout)
	}
	if len(h.dials) != 0 {
		t.Errorf("--help/--version connected to a cluster")
	}
}

func TestUsageErrorsExit2NamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "--nope"},
		{[]string{"--format", "xml"}, `"--format"`},
		{[]string{"--color", "sometimes"}, `"--color"`},
		{[]string{"--timeout", "soon"}, `"--timeout"`},
		{[]string{"--timeout=-1s"}, "--timeout"},
		{[]string{"SHOW TOPICS;"}, `unexpected argument "SHOW TOPICS;"`},
		{[]string{"--playground", "-b", "x:1"}, "--bootstrap"},
		{[]string{"--playground", "--sasl-user", "u"}, "--sasl-user"},
		{[]string{"--tls-cert", "c.pem", "-e", "SHOW TOPICS;"}, "--tls-key"},
		{[]string{"--tls-key", "k.pem", "-e", "SHOW TOPICS;"}, "--tls-cert"},
		{[]string{"--sasl-mechanism", "GSSAPI", "-e", "SHOW TOPICS;"}, "--sasl-mechanism"},
		{[]string{"--sasl-mechanism", "PLAIN", "-e", "SHOW TOPICS;"}, "--sasl-user"},
		{[]string{"--sasl-user", "alice", "-e", "SHOW TOPICS;"}, "--sasl-mechanism"},
		{[]string{"-f", filepath.Join(dir, "missing.kql")}, "missing.kql"},
		{[]string{"-f", "-", "-f", "-"}, "-f -"},
		{[]string{"-b", "", "-e", "SHOW TOPICS;"}, "--bootstrap"},
		{[]string{"--history-file", ""}, "--history-file"},
		{[]string{"--client-id", " ", "-e", "SHOW TOPICS;"}, "--client-id"},
		{[]string{"--command-config", filepath.Join(dir, "none.properties"), "-e", "SHOW TOPICS;"}, "--command-config"},
		{[]string{"--schema-registry", "", "-e", "SHOW TOPICS;"}, `"--schema-registry"`},
		{[]string{"--schema-registry", "sr:8081", "-e", "SHOW TOPICS;"}, "--schema-registry: \"sr:8081\" has no scheme"},
		{[]string{"--schema-registry", "http://:8081", "-e", "SHOW TOPICS;"}, "--schema-registry: \"http://:8081\" has no host"},
		{[]string{"--schema-registry", "http://sr:8081?x=1", "-e", "SHOW TOPICS;"}, "no query"},
		{[]string{"--schema-registry", "http://sr:port", "-e", "SHOW TOPICS;"}, "--schema-registry: \"http://sr:port\" is not a URL"},
		{[]string{"--schema-registry-user", "bob", "-e", "SHOW TOPICS;"}, "--schema-registry-user needs --schema-registry"},
		{[]string{"--schema-registry-ca", "ca.pem", "-e", "SHOW TOPICS;"}, "--schema-registry-ca needs --schema-registry"},
		{[]string{"--schema-registry", "http://sr:8081", "--schema-registry-user", "", "-e", "SHOW TOPICS;"}, "--schema-registry-user: must not be empty"},
		{[]string{"--schema-registry", "https://sr:8081", "--schema-registry-ca", filepath.Join(dir, "none.pem"), "-e", "SHOW TOPICS;"}, "none.pem"},
		{[]string{"--playground", "--schema-registry", "http://sr:8081"}, "--schema-registry"},
		{[]string{"--playground", "--schema-registry-user", "bob"}, "--schema-registry-user"},
	} {
		h := newHarness(t)
		r := h.run(tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("kql %q: want exit 2 naming %s on stderr, got\n%s", tc.args, tc.want, r)
		}
		if len(h.exec.ran) != 0 {
			t.Errorf("kql %q ran statements", tc.args)
		}
	}
}

func TestSASLPasswordNeverFromAFlagAndNotPromptedOffATerminal(t *testing.T) {
	h := newHarness(t)
	r := h.run("--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "alice", "-e", "SHOW TOPICS;")
	if r.code != exitUsage || !strings.Contains(r.stderr, "KQL_SASL_PASSWORD") {
		t.Fatalf("no password and no terminal: want exit 2 pointing at KQL_SASL_PASSWORD:\n%s", r)
	}
	if fs := newFlagSet(&options{}); fs.Lookup("sasl-password") != nil || fs.Lookup("password") != nil {
		t.Fatal("there must be no password flag")
	}
	h.env["KQL_SASL_PASSWORD"] = "s3cret"
	r = h.run("--sasl-mechanism", "scram-sha-256", "--sasl-user", "alice", "-e", "SHOW TOPICS;")
	if r.code != 0 {
		t.Fatalf("with $KQL_SASL_PASSWORD:\n%s", r)
	}
	if m := h.dials[0].SASL; m == nil || m.Name() != "SCRAM-SHA-256" {
		t.Fatalf("dialled with SASL %v, want SCRAM-SHA-256", m)
	}
}

func TestCheckParsesWithoutConnecting(t *testing.T) {
	h := newHarness(t)
	r := h.run("--check", "-e", "SHOW TOPICS; SHOW GROUPS;")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("--check on valid statements:\n%s", r)
	}
	if len(h.dials) != 0 {
		t.Fatal("--check connected to a cluster")
	}
	h.stdin = "SHOW TOPICS;\nSHOW NOTHING;\nSHOW GROUPS;\nFROB;\n"
	r = h.run("--check")
	if r.code != exitUsage || len(h.dials) != 0 {
		t.Fatalf("--check with errors: want exit 2, no connection:\n%s", r)
	}
	for _, want := range []string{"<stdin>:2:6: unexpected NOTHING", "<stdin>:4:1: unknown statement FROB"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("--check does not report %s:\n%s", want, r.stderr)
		}
	}
}

func TestScriptWithASyntaxErrorRunsNothing(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.kql")
	os.WriteFile(path, []byte("SHOW TOPICS;\nSHOW GROUPS;\n\nSHOW NONSENSE;\n"), 0o644)
	r := h.run("-f", path)
	if r.code != exitUsage {
		t.Fatalf("want exit 2:\n%s", r)
	}
	if len(h.exec.ran) != 0 || len(h.dials) != 0 || r.stdout != "" {
		t.Fatalf("a script with a syntax error must run nothing; ran %v, dialled %d times, stdout %q", h.exec.ranKinds(), len(h.dials), r.stdout)
	}
	if !strings.Contains(r.stderr, path+":4:6") {
		t.Errorf("error does not name %s:4:6:\n%s", path, r.stderr)
	}
}

func TestScriptStopsAtTheFailingStatement(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.kql")
	os.WriteFile(path, []byte("SHOW TOPICS;\n\nDESCRIBE GROUP \"x\";\nSHOW GROUPS;\n"), 0o644)
	r := h.run("-f", path)
	if r.code != exitFailed {
		t.Fatalf("want exit 1:\n%s", r)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics", "DescribeGroup"}) {
		t.Fatalf("ran %v: the statement after the failure must not run", got)
	}
	if !strings.Contains(r.stdout, "orders") {
		t.Errorf("output of the statement before the failure is lost:\n%s", r)
	}
	if want := path + `:3: DESCRIBE GROUP x: no consumer group named "x"`; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if strings.Contains(r.stdout, "no consumer group") {
		t.Errorf("an error went to stdout:\n%s", r.stdout)
	}

	h = newHarness(t)
	r = h.run("--keep-going", "-f", path)
	if r.code != exitFailed {
		t.Fatalf("--keep-going: want exit 1 at the end:\n%s", r)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics", "DescribeGroup", "ShowGroups"}) {
		t.Fatalf("--keep-going ran %v", got)
	}
	if !strings.Contains(r.stdout, "billing") {
		t.Errorf("--keep-going lost the output after the failure:\n%s", r)
	}
}

func TestScriptsRunInCommandLineOrder(t *testing.T) {
	h := newHarness(t)
	path := filepath.Join(t.TempDir(), "g.kql")
	os.WriteFile(path, []byte("SHOW GROUPS;"), 0o644)
	r := h.run("-e", "SHOW TOPICS; SHOW CLUSTER;", "-f", path, "-e", "SHOW TOPICS;")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	want := []lang.Statement{&lang.ShowTopics{}, &lang.ShowCluster{}, &lang.ShowGroups{}, &lang.ShowTopics{}}
	if !reflect.DeepEqual(h.exec.ran, want) {
		t.Fatalf("ran %v, want %v", h.exec.ran, want)
	}
}

func TestPartialResultKeepsRowsAndExits1(t *testing.T) {
	h := newHarness(t)
	h.exec.answers["ShowGroups"] = func(context.Context, lang.Statement) (result.Result, error) {
		s := result.NewSlice([]result.Column{{Name: "group", Type: result.String}}, []result.Row{{"billing"}})
		s.Failure = &result.PartialError{What: "SHOW GROUPS", Missing: []error{errors.New("broker 3 (127.0.0.1:9094): connection refused")}}
		return s, nil
	}
	r := h.run("-e", "SHOW GROUPS; SHOW TOPICS;")
	if r.code != exitFailed {
		t.Fatalf("partial result: want exit 1:\n%s", r)
	}
	if !strings.Contains(r.stdout, "billing") || !strings.Contains(r.stdout, "orders") {
		t.Errorf("partial rows or the next statement's rows are missing:\n%s", r)
	}
	if !strings.Contains(r.stderr, "partial result") || !strings.Contains(r.stderr, "broker 3") {
		t.Errorf("the partial error is not reported:\n%s", r)
	}
}

func TestUnreachableExits3(t *testing.T) {
	h := newHarness(t)
	h.dialErr = &kafka.UnreachableError{Bootstrap: []string{"127.0.0.1:1"}, Err: errors.New("connection refused")}
	r := h.run("-b", "127.0.0.1:1", "-e", "SHOW TOPICS;")
	if r.code != exitUnreachable || !strings.Contains(r.stderr, "127.0.0.1:1") || r.stdout != "" {
		t.Fatalf("want exit 3 naming the address:\n%s", r)
	}
}

func TestBootstrapPrecedence(t *testing.T) {
	h := newHarness(t)
	h.run("-e", "SHOW TOPICS;")
	h.env["KQL_BOOTSTRAP"] = "env:1,env:2"
	h.run("-e", "SHOW TOPICS;")
	h.run("-b", "flag:1", "-e", "SHOW TOPICS;")
	got := [][]string{h.dials[0].Bootstrap, h.dials[1].Bootstrap, h.dials[2].Bootstrap}
	want := [][]string{{"localhost:9092"}, {"env:1", "env:2"}, {"flag:1"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("bootstrap: got %v, want %v", got, want)
	}
	h.run("--client-id", "me", "-e", "SHOW TOPICS;")
	if id := h.dials[3].ClientID; id != "me" {
		t.Fatalf("--client-id: dialled with %q", id)
	}
}

func TestTimeoutCancelsTheStatement(t *testing.T) {
	h := newHarness(t)
	h.exec.answers["ShowTopics"] = func(ctx context.Context, _ lang.Statement) (result.Result, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, errors.New("the statement's context was not cancelled")
		}
	}
	r := h.run("--timeout", "50ms", "-e", "SHOW TOPICS; SHOW GROUPS;")
	if r.code != exitFailed || !strings.Contains(r.stderr, "--timeout 50ms") {
		t.Fatalf("want the statement cancelled by --timeout:\n%s", r)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics"}) {
		t.Fatalf("ran %v", got)
	}
}

func TestEmptyScriptDoesNotConnect(t *testing.T) {
	h := newHarness(t)
	h.stdin = "\n  \n"
	if r := h.run(); r.code != 0 || len(h.dials) != 0 {
		t.Fatalf("empty stdin: %s (dials %d)", r, len(h.dials))
	}
}

func TestPlaygroundFlag(t *testing.T) {
	h := newHarness(t)
	r := h.run("--playground", "-e", "SHOW TOPICS;")
	if r.code != 0 || !strings.Contains(r.stderr, "127.0.0.1:1111") {
		t.Fatalf("--playground must print its bootstrap on stderr:\n%s", r)
	}
	if !reflect.DeepEqual(h.dials[0].Bootstrap, []string{"127.0.0.1:1111"}) {
		t.Fatalf("--playground dialled %v", h.dials[0].Bootstrap)
	}
	if strings.Contains(r.stdout, "1111") {
		t.Fatalf("the playground notice went to stdout:\n%s", r.stdout)
	}
	r = h.run("--playground", "-q", "-e", "SHOW TOPICS;")
	if strings.Contains(r.stderr, "1111") {
		t.Fatalf("-q must silence the playground notice:\n%s", r)
	}
	if len(h.registries) != 0 {
		t.Fatalf("a playground without a registry gave the session one")
	}
	// The playground's registry: named in the notice, given to the session.
	h.playgroundRegistry = "http://127.0.0.1:2222"
	r = h.run("--playground", "-e", "SHOW TOPICS;")
	if r.code != 0 || !strings.Contains(r.stderr, "running at 127.0.0.1:1111 with a schema registry at http://127.0.0.1:2222 ") {
		t.Fatalf("--playground must name its schema registry on stderr:\n%s", r)
	}
	if len(h.registries) != 1 || h.registries[0].URLs() != "http://127.0.0.1:2222" {
		t.Fatalf("the session was given registries %v", h.registries)
	}
}

func TestColour(t *testing.T) {
	h := newHarness(t)
	r := h.run("--color", "always", "-e", `DESCRIBE GROUP "x";`)
	if !strings.Contains(r.stderr, "\x1b[31m") {
		t.Errorf("--color always: error not red:\n%q", r.stderr)
	}
	r = h.run("-e", `DESCRIBE GROUP "x";`)
	if strings.Contains(r.stderr, "\x1b[") {
		t.Errorf("colour off a terminal:\n%q", r.stderr)
	}
	h.tty = true
	h.env["NO_COLOR"] = "1"
	r = h.run("-e", `DESCRIBE GROUP "x";`)
	if strings.Contains(r.stderr, "\x1b[") {
		t.Errorf("colour despite NO_COLOR:\n%q", r.stderr)
	}
	delete(h.env, "NO_COLOR")
	r = h.run("-e", `DESCRIBE GROUP "x";`)
	if !strings.Contains(r.stderr, "\x1b[31m") {
		t.Errorf("no red error on a terminal:\n%q", r.stderr)
	}
	r = h.run("--color", "never", "-e", `DESCRIBE GROUP "x";`)
	if strings.Contains(r.stderr, "\x1b[") {
		t.Errorf("--color never:\n%q", r.stderr)
	}
}

func TestNothingExtraOffATerminal(t *testing.T) {
	h := newHarness(t)
	h.stdin = "SHOW TOPICS;\n"
	r := h.run()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("a piped script must print nothing but results:\n%s", r)
	}
}
