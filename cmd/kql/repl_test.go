package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// repl runs the REPL on the plain-line editor: the harness says stdin and
// stdout are terminals but hands it a string.
func (h *harness) repl(input string, args ...string) runResult {
	h.t.Helper()
	h.tty = true
	h.stdin = input
	return h.run(append([]string{"--no-history", "--color", "never"}, args...)...)
}

func TestREPLMultiLineStatementAndBanner(t *testing.T) {
	h := newHarness(t)
	r := h.repl("SHOW\n  TOPICS\n;\n")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics"}) {
		t.Fatalf("ran %v", got)
	}
	if !strings.Contains(r.stderr, "kql> ") || !strings.Contains(r.stderr, "  -> ") {
		t.Errorf("prompts missing:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "fake-cluster") || !strings.Contains(r.stderr, "3 brokers") {
		t.Errorf("banner does not name the cluster id and broker count:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "orders") {
		t.Errorf("no result:\n%s", r)
	}
	if strings.Contains(r.stdout, "kql>") {
		t.Errorf("prompt on stdout:\n%s", r.stdout)
	}
}

func TestREPLQuietHasNoBanner(t *testing.T) {
	h := newHarness(t)
	r := h.repl("", "-q")
	if strings.Contains(r.stderr, "connected") {
		t.Fatalf("-q printed a banner:\n%s", r.stderr)
	}
}

func TestREPLErrorsDoNotEndTheSession(t *testing.T) {
	h := newHarness(t)
	r := h.repl("DESCRIBE GROUP \"x\";\nSHOW NONSENSE;\nSHOW GROUPS;\n")
	if r.code != 0 {
		t.Fatalf("the REPL exits 0 after \\q or EOF:\n%s", r)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"DescribeGroup", "ShowGroups"}) {
		t.Fatalf("ran %v", got)
	}
	if !strings.Contains(r.stderr, `no consumer group named "x"`) || !strings.Contains(r.stdout, "billing") {
		t.Fatalf("%s", r)
	}
}

func TestREPLIncompleteStatementAtEOF(t *testing.T) {
	h := newHarness(t)
	r := h.repl("SHOW TOPICS")
	if len(h.exec.ranKinds()) != 0 || !strings.Contains(r.stderr, "incomplete statement") {
		t.Fatalf("an unfinished statement at EOF must be reported, not run:\n%s", r)
	}
}

func TestMetaCommands(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	inc := filepath.Join(dir, "inc.kql")
	os.WriteFile(inc, []byte("SHOW GROUPS;\n"), 0o644)

	h := newHarness(t)
	r := h.repl(strings.Join([]string{
		`\?`,
		`\help`,
		`\help consume`,
		`\help desc group`,
		`\frobnicate`,
		`\format`,
		`\format json`,
		`\format xml`,
		`\x`,
		`\timing on`,
		`\o ` + out,
		`SHOW TOPICS;`,
		`\o`,
		`\i ` + inc,
		`\q`,
		`SHOW TOPICS;`,
	}, "\n") + "\n")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	for _, m := range metaCommands() {
		if !strings.Contains(r.stderr, `\`+m.name+" ") {
			t.Errorf(`\? does not list \%s`, m.name)
		}
	}
	for _, want := range []string{
		"CONSUME",                          // \help lists statements
		"example: DESC GROUP billing;",     // \help of an alias
		"x'",                               // \help explains how bytes are shown
		`unknown meta-command \frobnicate`, // named
		`\? lists`,                         // and pointed to \?
		"Output format is table.",
		"Output format is json.",
		`"xml"`,
		"Expanded display is on.",
		"Timing is on.",
		"Time: ",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics", "ShowGroups"}) {
		t.Fatalf(`ran %v: \q must stop the session`, got)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "orders") || strings.Contains(r.stdout, "orders") {
		t.Errorf(`\o did not send the result to the file: file %q, stdout %q`, data, r.stdout)
	}
	if !strings.Contains(r.stdout, "billing") {
		t.Errorf(`after \o alone results must go to stdout again; stdout %q`, r.stdout)
	}
}

func TestMetaFormatChangesOutput(t *testing.T) {
	h := newHarness(t)
	r := h.repl("\\format jsonl\nSHOW TOPICS;\n")
	if !strings.Contains(r.stdout, `{"`) || !strings.Contains(r.stdout, `"topic":"orders"`) {
		t.Fatalf(`\format jsonl did not change the output:\n%s`, r.stdout)
	}
}

func TestMetaTrace(t *testing.T) {
	h := newHarness(t)
	r := h.repl("\\trace\nSHOW TOPICS;\n\\trace off\nSHOW GROUPS;\n")
	if n := strings.Count(r.stderr, "trace: Metadata -> broker 2 (127.0.0.1:9093) [orders/0 orders/3]"); n != 1 {
		t.Fatalf("want one trace line for the one traced statement, got %d:\n%s", n, r.stderr)
	}
	if strings.Contains(r.stdout, "trace:") {
		t.Fatalf("trace on stdout")
	}
}

// pagedResult is a CONSUME's result as the shell sees it: rows, and in
// its Stats the statement that reads the next page (none: next is nil).
func pagedResult(s *result.Slice, next *lang.Consume) result.Result {
	s.Stats().SetNextPage(func() (any, bool) { return next, next != nil })
	return s
}

func TestMetaNext(t *testing.T) {
	h := newHarness(t)
	limit := int64(3)
	page2 := &lang.Consume{Topic: "orders", Limit: &limit}
	calls := 0
	h.exec.answers["Consume"] = func(_ context.Context, stmt lang.Statement) (result.Result, error) {
		calls++
		var next *lang.Consume
		if calls == 1 {
			next = page2
		}
		return pagedResult(result.NewSlice(topicCols, []result.Row{{"page", int64(calls)}}), next), nil
	}
	r := h.repl("\\next\nCONSUME orders LIMIT 3;\n\\next\n\\next\n")
	if calls != 2 {
		t.Fatalf(`\next ran %d CONSUMEs, want 2:\n%s`, calls, r)
	}
	if !strings.Contains(r.stderr, `there is none yet`) || !strings.Contains(r.stderr, "no further page") {
		t.Errorf(`\next before a CONSUME and after the last page must say why:\n%s`, r.stderr)
	}
	if !strings.Contains(r.stderr, formatStatement(page2)) {
		t.Errorf(`\next must print the statement it runs (%s):\n%s`, formatStatement(page2), r.stderr)
	}
	if !reflect.DeepEqual(h.exec.ran[len(h.exec.ran)-1], page2) {
		t.Errorf(`\next ran %#v`, h.exec.ran[len(h.exec.ran)-1])
	}
}

func TestMetaConnect(t *testing.T) {
	h := newHarness(t)
	r := h.repl("\\connect\n\\connect other:9092,other:9093\nSHOW TOPICS;\n", "-b", "first:9092")
	if len(h.dials) != 2 || !reflect.DeepEqual(h.dials[1].Bootstrap, []string{"other:9092", "other:9093"}) {
		t.Fatalf(`\connect dialled %v:\n%s`, h.dials, r)
	}
	if !strings.Contains(r.stderr, `\connect needs a bootstrap address`) {
		t.Errorf(`bare \connect must explain itself:\n%s`, r.stderr)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics"}) {
		t.Fatalf("ran %v", got)
	}
}

func TestMetaConnectFailureKeepsTheOldConnection(t *testing.T) {
	h := newHarness(t)
	n := 0
	h.tty = true
	h.stdin = "\\connect nowhere:1\nSHOW TOPICS;\n"
	origExec := h.exec
	r := h.runWithDial([]string{"--no-history"}, func(cfg kafka.Config) (*connection, error) {
		n++
		if n == 2 {
			return nil, &kafka.UnreachableError{Bootstrap: cfg.Bootstrap, Err: os.ErrDeadlineExceeded}
		}
		return &connection{exec: origExec, setTrace: origExec.setTrace, close: func() {}, bootstrap: cfg.Bootstrap}, nil
	})
	if !strings.Contains(r.stderr, "still connected to") || len(origExec.ranKinds()) != 1 {
		t.Fatalf("%s", r)
	}
}

func TestHistoryOneEntryPerStatement(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "history")
	h := newHarness(t)
	h.tty = true
	h.stdin = "SHOW\n  TOPICS;\nSHOW GROUPS;\nSHOW GROUPS;\n\\x\n"
	r := h.run("--history-file", path)
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "SHOW TOPICS;") {
		t.Errorf("the multi-line statement is not one history entry:\n%s", data)
	}
	if strings.Count(string(data), "SHOW GROUPS;") != 1 {
		t.Errorf("consecutive duplicates must be dropped:\n%s", data)
	}

	// --no-history writes nothing.
	other := filepath.Join(dir, "other")
	h.stdin = "SHOW TOPICS;\n"
	h.run("--no-history", "--history-file", other)
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("--no-history created %s", other)
	}
}

func TestHistoryThatCannotBeWrittenWarnsOnce(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o644)
	h := newHarness(t)
	h.tty = true
	h.stdin = "SHOW TOPICS;\nSHOW GROUPS;\n"
	r := h.run("--history-file", filepath.Join(blocker, "history")) // a file as a directory
	if r.code != 0 || len(h.exec.ranKinds()) != 2 {
		t.Fatalf("%s", r)
	}
	if n := strings.Count(r.stderr, "warning:"); n != 1 || !strings.Contains(r.stderr, "history is off") {
		t.Fatalf("want exactly one warning that history is off, got %d:\n%s", n, r.stderr)
	}
}

func TestMetaWatch(t *testing.T) {
	h := newHarness(t)
	h.interrupt = make(chan struct{})
	calls := 0
	h.exec.answers["ShowTopics"] = func(context.Context, lang.Statement) (result.Result, error) {
		calls++
		if calls == 4 { // the statement, then three \watch runs: Ctrl-C
			close(h.interrupt)
		}
		return result.NewSlice(topicCols, []result.Row{{"orders", int64(calls)}}), nil
	}
	r := h.repl("SHOW TOPICS WHERE partitions > 1;\n\\watch 0.01\n")
	if calls != 4 {
		t.Fatalf(`\watch ran the statement %d times, want 1 + 3:\n%s`, calls, r)
	}
	if n := strings.Count(r.stderr, "Every 0.01s: SHOW TOPICS WHERE partitions > 1    "); n != 3 {
		t.Errorf("want a header line per run, got %d:\n%s", n, r.stderr)
	}
	if n := strings.Count(r.stdout, "\x1b[H\x1b[2J"); n != 3 {
		t.Errorf("want the screen cleared before each run on a terminal, got %d", n)
	}
	if r.code != 0 {
		t.Errorf("Ctrl-C ends \\watch, not the shell: %s", r)
	}

	h2 := newHarness(t)
	r = h2.repl("\\watch\nSHOW TOPICS;\n\\watch x\n\\watch -1\nPRODUCE INTO t VALUE 'v';\n\\watch\n")
	for _, want := range []string{`\watch re-runs the last statement, and there is none yet`,
		`\watch: want a number of seconds between 0 and 86400, as in \watch 5, got "x"`, `got "-1"`,
		`\watch does not repeat PRODUCE: it would write to the cluster every time`} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("missing %q in:\n%s", want, r.stderr)
		}
	}

}

// \watch refuses every statement that writes, not only PRODUCE, CREATE and
// DROP: a GRANT, an ALTER ... SET or an EXECUTE form repeated every few
// seconds writes again each time, and is never asked about again. Their
// dry runs and EXPLAIN still watch.
func TestMetaWatchRefusesEveryWrite(t *testing.T) {
	for _, tc := range []struct{ stmt, want string }{
		{`GRANT READ ON TOPIC orders TO 'User:alice'`, `\watch does not repeat GRANT: it would write to the cluster every time`},
		{`ALTER TOPIC orders SET (retention.ms = '1')`, `\watch does not repeat ALTER: it would write to the cluster every time`},
		{`ALTER QUOTA FOR USER alice SET (consumer_byte_rate = 1048576)`, `\watch does not repeat ALTER: it would write`},
		{`DELETE GROUP billing`, `\watch does not repeat DELETE: it would write`},
		{`DELETE RECORDS FROM orders BEFORE OFFSET 1 EXECUTE`, `\watch does not repeat DELETE RECORDS FROM orders BEFORE OFFSET 1 EXECUTE: it would write to the cluster every time (its dry run, without EXECUTE, can be watched)`},
		{`RESET GROUP billing TOPIC orders TO EARLIEST EXECUTE`, `\watch does not repeat RESET GROUP billing TOPIC orders TO EARLIEST EXECUTE: it would write`},
	} {
		t.Run(tc.stmt, func(t *testing.T) {
			h := newHarness(t)
			st, err := lang.Parse(tc.stmt + ";")
			if err != nil {
				t.Fatal(err)
			}
			// A repeat ends the watch (Ctrl-C), so that a \watch that
			// repeats fails here rather than running forever.
			h.interrupt = make(chan struct{})
			calls := 0
			h.exec.answers[stmtKind(st)] = func(context.Context, lang.Statement) (result.Result, error) {
				if calls++; calls == 2 {
					close(h.interrupt)
				}
				return result.NewSlice([]result.Column{{Name: "result", Type: result.String}}, []result.Row{{"done"}}), nil
			}
			r := h.repl("\\set confirm off\n" + tc.stmt + ";\n\\watch 0.01\n")
			if !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("want %q:\n%s", tc.want, r)
			}
			if got := h.exec.ranKinds(); len(got) != 1 {
				t.Fatalf("\\watch repeated %s: the executor ran %v", tc.stmt, got)
			}
		})
	}
	// A dry run reads: \watch repeats it (Ctrl-C after two runs).
	h := newHarness(t)
	h.interrupt = make(chan struct{})
	calls := 0
	h.exec.answers["DeleteRecords"] = func(context.Context, lang.Statement) (result.Result, error) {
		calls++
		if calls == 3 {
			close(h.interrupt)
		}
		return result.NewSlice([]result.Column{{Name: "result", Type: result.String}}, []result.Row{{"dry run"}}), nil
	}
	r := h.repl("DELETE RECORDS FROM orders BEFORE OFFSET 1;\n\\watch 0.01\n")
	if calls != 3 || strings.Contains(r.stderr, "does not repeat") {
		t.Fatalf("the dry run ran %d times, want 1 + 2:\n%s", calls, r)
	}
}
