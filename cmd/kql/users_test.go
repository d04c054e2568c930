package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka"
)

// TestREPLUsersTraceConfirmationAndNoPassword: in the shell, CREATE and
// DROP USER and ALTER QUOTA ask first; \trace names each request and its
// broker; the password from $KQL_NEW_PASSWORD shows nowhere: not in the
// output, the questions, the trace lines or EXPLAIN.
func TestREPLUsersTraceConfirmationAndNoPassword(t *testing.T) {
	_, boot := ptyCluster(t)
	const pw = "Trace-Never-Shows-3b9"
	h := newHarness(t)
	h.env["KQL_NEW_PASSWORD"] = pw
	h.tty, h.stdin = true, strings.Join([]string{
		`\trace on`,
		`CREATE USER alice MECHANISM SCRAM-SHA-256;`, `y`,
		`ALTER QUOTA FOR USER alice SET (producer_byte_rate = 1024);`, `n`,
		`EXPLAIN ALTER USER alice PASSWORD;`,
		`ALTER USER alice PASSWORD;`, `y`,
		`SHOW QUOTAS;`,
		`DROP USER alice;`, `yes`,
		`SHOW USERS;`, ``}, "\n")
	r := h.runWithDial([]string{"--no-history", "--color", "never", "--format", "csv", "--bootstrap", boot}, func(cfg kafka.Config) (*connection, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return dialKafka(ctx, cfg)
	})
	if r.code != 0 {
		t.Fatalf("the shell failed:\n%s", r)
	}
	wantAll(t, "stderr", r.stderr,
		"create user alice (SCRAM-SHA-256, 4096 iterations)? [y/N] ",
		"trace: DescribeUserScramCredentials -> broker ",
		"trace: AlterUserScramCredentials -> broker ", "[upsert alice SCRAM-SHA-256 iterations=4096]",
		"alter the quotas of user-principal 'alice': producer_byte_rate (none) -> 1024? [y/N] ",
		"not run (answer y to run it",
		"change the password of user alice for SCRAM-SHA-256? [y/N] ",
		"drop user alice: its SCRAM-SHA-256 credential? [y/N] ",
		"[delete alice SCRAM-SHA-256]")
	if strings.Contains(r.stderr, "trace: AlterClientQuotas") {
		t.Errorf("the refused ALTER QUOTA was sent:\n%s", r.stderr)
	}
	wantAll(t, "stdout", r.stdout, "alice,SCRAM-SHA-256,4096,created", "alice,SCRAM-SHA-256,4096,password changed", "alice,SCRAM-SHA-256,4096,dropped")
	explained := regexp.MustCompile(`\n2,AlterUserScramCredentials,\d,127\.0\.0\.1:\d+,"upsert alice each mechanism the user has, one request each \(a KRaft broker forwards it to the active controller\)"\n`)
	if !explained.MatchString(r.stdout) {
		t.Errorf("EXPLAIN does not route AlterUserScramCredentials to a broker:\n%s", r.stdout)
	}
	for what, text := range map[string]string{"stdout": r.stdout, "stderr": r.stderr} {
		if strings.Contains(text, pw) {
			t.Errorf("%s shows the password:\n%s", what, text)
		}
	}
}

// TestPTYNewPasswordIsAskedTwiceWithoutEcho: on a terminal, without
// $KQL_NEW_PASSWORD, the new password is asked twice without echo; two
// entries that differ are an error and nothing is sent.
func TestPTYNewPasswordIsAskedTwiceWithoutEcho(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	s.send("CREATE USER alice;\r")
	s.expect(`create user alice \(SCRAM-SHA-512, 4096 iterations\)\? \[y/N\] `)
	s.send("y\r")
	s.expect(`New password for user alice: `)
	s.send("first-Typed-Pw1\r")
	s.expect(`Retype the new password for user alice: `)
	s.send("other-Typed-Pw2\r")
	s.expect(`CREATE USER alice: nothing was changed: the two passwords typed for "alice" differ`)
	s.expect(prompt)
	s.send("SHOW USERS;\r")
	s.expect(`\(0 rows\)`)
	s.expect(prompt)

	s.send("CREATE USER alice;\r")
	s.expect(`\[y/N\] `)
	s.send("y\r")
	s.expect(`New password for user alice: `)
	s.send("same-Typed-Pw3\r")
	s.expect(`Retype the new password for user alice: `)
	s.send("same-Typed-Pw3\r")
	s.expect(`alice\s+.*SCRAM-SHA-512\s+.*4096\s+.*created`)
	s.expect(prompt)
	s.send("SHOW USERS;\r")
	s.expect(`\(1 row\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"first-Typed-Pw1", "other-Typed-Pw2", "same-Typed-Pw3"} {
		if strings.Contains(s.text(), pw) {
			t.Errorf("the password %s was echoed", pw)
		}
	}
}

// TestHistoryNeverKeepsAPasswordTypedIntoAStatement: a statement with a
// password written into it is an error that shows the password as '*',
// and the history does not keep it (other mistakes it keeps, to be fixed).
func TestHistoryNeverKeepsAPasswordTypedIntoAStatement(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h := newHarness(t)
	h.tty = true
	h.stdin = "ALTER USER alice PASSWORD 'hunter2-typed';\nCREATE USER bob PASSWORD 'swordfish-typed';\nSHOW TOPCS;\nSHOW TOPICS;\n"
	r := h.run("--history-file", path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"hunter2-typed", "swordfish-typed"} {
		if strings.Contains(string(data), pw) || strings.Contains(r.stdout+r.stderr, pw) {
			t.Errorf("%s is in the history or the output:\n--- history\n%s\n%s", pw, data, r)
		}
	}
	wantAll(t, "stderr", r.stderr, "a password is never written in a statement", "ALTER USER alice PASSWORD ***************")
	wantAll(t, "history", string(data), "SHOW TOPCS", "SHOW TOPICS;")
}
