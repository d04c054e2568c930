package main

// The shell at its edges: meta-commands on continuation lines, \next after
// a forward read, Tab after PRODUCE, Ctrl-C over Tab's list, the README's
// first command, a script with a byte order mark.

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// psql runs a backslash command typed on a continuation line and keeps the
// statement being typed; kql appends it to the statement, so \q cannot quit
// and \x turns into a syntax error whose hint says meta-commands work "in the
// interactive shell only" -- while the user is in the interactive shell.
func TestMetaCommandOnAContinuationLineRuns(t *testing.T) {
	h := newHarness(t)
	r := h.repl("SHOW\n\\x\nTOPICS;\n")
	if strings.Contains(r.stderr, `unexpected character '\'`) || strings.Contains(r.stderr, "interactive shell only") {
		t.Fatalf("\\x on a continuation line became part of the statement:\n%s", r)
	}
	if !strings.Contains(r.stderr, "Expanded display is on") {
		t.Errorf("\\x on a continuation line did not run:\n%s", r)
	}
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"ShowTopics"}) {
		t.Errorf("the statement around the meta-command must still run once, ran %v:\n%s", got, r)
	}

	h = newHarness(t)
	r = h.repl("SHOW TOPICS\n\\q\nSHOW GROUPS;\n")
	if got := h.exec.ranKinds(); len(got) != 0 {
		t.Errorf("\\q on a continuation line must quit; kql went on and ran %v:\n%s", got, r)
	}
}

// After a forward read (FROM OLDEST, FROM OFFSET, FROM ANCHOR ...) \next
// pages towards the newest record; at the end kql says "no older page: the
// last CONSUME reached the oldest record", which is the opposite of what
// happened.
func TestNextAtTheEndOfAForwardReadDoesNotSayOldest(t *testing.T) {
	h := newHarness(t)
	h.exec.answers["Consume"] = func(context.Context, lang.Statement) (result.Result, error) {
		return pagedResult(result.NewSlice(topicCols, []result.Row{{"orders", int64(1)}}), nil), nil
	}
	r := h.repl("CONSUME orders FROM OLDEST LIMIT 1000;\n\\next\n")
	if strings.Contains(r.stderr, "older") || strings.Contains(r.stderr, "oldest") {
		t.Fatalf("a forward read ended at the newest record, \\next says otherwise:\n%s", r.stderr)
	}
}

// PRODUCE pay<Tab> should complete the topic "payments"; kql also offers the
// keyword PAYLOAD (an alias of VALUE, which cannot come before the topic), so
// Tab completes nothing and a second Tab lists "payload" next to "payments".
func TestTabAfterProduceOffersOnlyWhatCanFollow(t *testing.T) {
	got := completions("pay", []string{"produce"}, []string{"payments", "orders"}, nil, nil)
	if !reflect.DeepEqual(got, []string{"ments "}) {
		t.Fatalf(`"produce pay<Tab>": got %q, want only the topic ["ments "]`, got)
	}
}

// Ctrl-C while Tab's candidate list is shown only closes the list
// (chzyer/readline's completer swallows the interrupt): the typed text stays,
// and the next statement is glued to it.
func TestPTYCtrlCAfterTabCandidatesClearsTheLine(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	completed := false // wait until the background name cache has loaded
	for i := 0; i < 50 && !completed; i++ {
		s.send("describe topic inv\t")
		completed = s.tryExpect(`inventory-updates `, 400*time.Millisecond)
		s.send("\x03")
		s.expect(prompt)
	}
	if !completed {
		t.Fatal("Tab never completed the topic name")
	}
	s.send("describe topic \t\t") // two topics: the second Tab lists them
	s.expect(`orders`)
	time.Sleep(200 * time.Millisecond)
	s.send("\x03") // drop "describe topic "
	time.Sleep(200 * time.Millisecond)
	s.send("SHOW TOPICS;\r")
	s.expect(`\(2 rows\)`)
}

// The issue and docs/shell.md say the README documents installation, flags
// and the playground, with `go run ./cmd/kql --playground` as its first
// command; the repository has no README.md.
func TestReadmeStartsWithThePlayground(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	first := ""
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "go run ") || strings.HasPrefix(strings.TrimSpace(l), "kql ") {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first != "go run ./cmd/kql --playground" {
		t.Fatalf("the README's first command is %q, want go run ./cmd/kql --playground", first)
	}
}

// A script saved with a UTF-8 byte order mark (Windows editors) is KafkaQL
// all the same.
func TestScriptWithByteOrderMark(t *testing.T) {
	if got := scriptText([]byte("\uFEFFSHOW TOPICS;")); got != "SHOW TOPICS;" {
		t.Fatalf("scriptText kept the BOM: %q", got)
	}
}
