package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakePager writes an executable script that stands for less: it records
// each start in calls and frames what it is given.
func fakePager(t *testing.T, body string) (path, dir string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "pager")
	script := "#!/bin/sh\necho started >> " + filepath.Join(dir, "calls") + "\n" + body
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, dir
}

func pagerCalls(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "calls"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "started")
}

// The pager opens for a result taller than the terminal (40 lines) and
// gets all of it; a short result is printed as it is. $KQL_PAGER wins over
// $PAGER; \pager off prints even a tall result.
func TestPTYPagerOpensForATallResultOnly(t *testing.T) {
	c, boot := ptyCluster(t)
	if err := c.CreateTopic("tall", 60, nil); err != nil {
		t.Fatal(err)
	}
	pager, dir := fakePager(t, "echo PAGER-START\ncat\necho PAGER-END\n")
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot, "KQL_PAGER": pager, "PAGER": "/nonexistent/pager"}, "--no-history")
	s.expect(prompt)
	s.send("SHOW TOPICS;\r")
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	if n := pagerCalls(t, dir); n != 0 {
		t.Fatalf("a 3-row result went through the pager (%d starts)", n)
	}
	s.send("DESCRIBE TOPIC tall;\r")
	s.expect(`PAGER-START`)
	s.expect(`\n\s+59 \|`)
	s.expect(`\(60 rows\)`)
	s.expect(`PAGER-END`)
	s.expect(prompt)
	if n := pagerCalls(t, dir); n != 1 {
		t.Fatalf("a 60-row result: the pager started %d times, want once", n)
	}
	s.send("\\pager off\r")
	s.expect(`Pager is off\.`)
	s.expect(prompt)
	s.send("DESCRIBE TOPIC tall;\r")
	s.expect(`\(60 rows\)`)
	s.expect(prompt)
	if n := pagerCalls(t, dir); n != 1 {
		t.Fatalf(`\pager off: the pager started again (%d starts)`, n)
	}
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// A pager that cannot start: the result is printed, with one warning for
// the session.
func TestPTYPagerThatDoesNotStartFallsBackToPrinting(t *testing.T) {
	c, boot := ptyCluster(t)
	if err := c.CreateTopic("tall", 60, nil); err != nil {
		t.Fatal(err)
	}
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot, "PAGER": "/nonexistent/pager -x"}, "--no-history")
	s.expect(prompt)
	s.send("DESCRIBE TOPIC tall;\r")
	s.expect(`warning: the pager "/nonexistent/pager -x" did not start \([^)]*\): printing the result instead`)
	s.expect(`\(60 rows\)`)
	s.expect(prompt)
	s.send("DESCRIBE TOPIC tall;\r")
	s.expect(`\(60 rows\)`)
	s.expect(prompt)
	if n := strings.Count(s.text(), "did not start"); n != 1 {
		t.Fatalf("want one warning, got %d", n)
	}
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// Ctrl-C while a pager shows a long result (as less does, it ignores
// Ctrl-C and stays until q): kql waits for the pager, which leaves no
// zombie, and the session goes on.
func TestPTYCtrlCWhilePagingLeavesTheSessionUsable(t *testing.T) {
	c, boot := ptyCluster(t)
	createBig(t, c)
	pager, dir := fakePager(t, "trap '' INT\necho $$ > "+"\"$(dirname \"$0\")/pid\""+"\necho PAGER-WAITING\nread line < /dev/tty\necho PAGER-QUIT \"$line\"\n")
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot, "KQL_PAGER": pager}, "--no-history")
	s.expect(prompt)
	s.send("\\pager always\r")
	s.expect(`Pager is always used`)
	s.expect(prompt)
	// 5000 rows: more than a pipe holds, so kql is still writing into the
	// pager, which does not read.
	s.send("CONSUME big LIMIT 5000;\r")
	s.expect(`PAGER-WAITING`)
	s.send("\x03")
	s.send("q\r")
	s.expect(`PAGER-QUIT q`)
	s.expect(prompt)
	if after := s.text()[strings.LastIndex(s.text(), "PAGER-QUIT q"):]; strings.Contains(after, "error") {
		t.Fatalf("quitting the pager after Ctrl-C printed an error:\n%s", after)
	}
	data, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
			t.Fatalf("the pager (pid %d) is a zombie: kql did not wait for it", pid)
		}
	}
	s.send("\\pager on\r")
	s.expect(prompt)
	s.send("SHOW TOPICS;\r")
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// A pager quit midway (q in less; here head, which reads three lines and
// exits) stops the statement: no error and no warning, and the session
// goes on.
func TestPTYPagerQuitMidwayStopsTheStatementQuietly(t *testing.T) {
	c, boot := ptyCluster(t)
	createBig(t, c)
	pager, _ := fakePager(t, "head -n 3\necho PAGER-DONE\n")
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot, "KQL_PAGER": pager}, "--no-history")
	s.expect(prompt)
	s.send("CONSUME big LIMIT 5000;\r")
	s.expect(`PAGER-DONE`)
	s.expect(prompt)
	after := s.text()[strings.LastIndex(s.text(), "PAGER-DONE"):]
	if strings.Contains(after, "error") || strings.Contains(after, "warning") || strings.Contains(after, "5000 rows") {
		t.Fatalf("quitting the pager printed more than the prompt:\n%s", after)
	}
	s.send("SHOW TOPICS;\r")
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}
