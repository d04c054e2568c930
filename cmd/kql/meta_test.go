package main

import (
	"context"
	"reflect"
	"strings"
	"testing"

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

// \next pages the last CONSUME. After a FOLLOW (which has no pages) it
// paged the CONSUME before the FOLLOW instead, and ran a statement about
// another topic; it must say that a FOLLOW has no pages and run nothing.
func TestNextAfterAFollowDoesNotPageTheConsumeBeforeIt(t *testing.T) {
	h := newHarness(t)
	limit := int64(3)
	older := &lang.Consume{Topic: "orders", Limit: &limit}
	h.exec.answers["Consume"] = func(_ context.Context, stmt lang.Statement) (result.Result, error) {
		rows := result.NewSlice(topicCols, []result.Row{{"page", int64(1)}})
		if stmt.(*lang.Consume).Follow {
			return rows, nil // a FOLLOW's result has no pages
		}
		return pagedResult(rows, older), nil
	}
	r := h.repl("CONSUME orders LIMIT 3;\nCONSUME payments FOLLOW;\n\\next\n")
	if got := h.exec.ranKinds(); !reflect.DeepEqual(got, []string{"Consume", "Consume"}) {
		t.Fatalf(`\next after a FOLLOW ran %v (the page after the CONSUME before it):`+"\n%s", got, r)
	}
	if !strings.Contains(r.stderr, "FOLLOW") || !strings.Contains(r.stderr, "no pages") {
		t.Errorf(`\next after a FOLLOW must say that a FOLLOW has no pages:`+"\n%s", r.stderr)
	}
}
