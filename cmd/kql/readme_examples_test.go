package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/playground"
)

// A README code block that cannot run on the playground (it needs a secure
// cluster, a registry subject the playground lacks, ...) is preceded by
//
//	<!-- not on the playground: REASON -->
//
// (invisible on GitHub). Its statements are still parsed (--check).
var notOnPlayground = regexp.MustCompile(`^<!-- not on the playground: (.+) -->$`)

// emptyOnThePlayground lists the runnable examples whose empty answer is
// the right one on the playground (a healthy cluster has no offline
// partitions). Each entry must be in the README.
var emptyOnThePlayground = map[string]string{
	"SHOW TOPICS LIKE 'ord%' WHERE under_replicated > 0 OR offline > 0;":  "no partition is under-replicated or offline",
	"SHOW TOPICS WHERE under_replicated > 0 OR offline > 0;":              "no partition is under-replicated or offline",
	"SHOW PARTITIONS WHERE in_sync_replicas < replicas;":                  "every replica is in sync",
	"SHOW PARTITIONS WHERE offline OR under_replicated;":                  "no partition is under-replicated or offline",
	"SHOW PARTITIONS WHERE replicas_size_bytes > 3 * size_bytes;":         "kfake keeps one copy of each partition",
	"SHOW BROKERS WHERE rack IS NULL ORDER BY node_id;":                   "kfake's brokers have racks",
	"DESCRIBE TOPIC orders WHERE lso_lag > 0;":                            "no transaction is open",
	"SHOW CONFIGS FOR TOPIC orders;":                                      "orders sets no config of its own",
	"SHOW CONFIGS FOR CLUSTER;":                                           "no cluster-wide config is set",
	"SHOW SHARE GROUPS;":                                                  "the playground has no share groups",
	"SHOW SHARE GROUPS LIKE 'work-*' WHERE lag > 0 ORDER BY lag DESC;":    "the playground has no share groups",
	"SHOW TRANSACTIONS;":                                                  "the playground has no transactions",
	"SHOW TRANSACTIONS WHERE state = 'Ongoing' ORDER BY timeout_ms DESC;": "the playground has no transactions",
	"SHOW HANGING TRANSACTIONS ON TOPIC orders;":                          "the playground has no transactions",
	"SHOW HANGING TRANSACTIONS OLDER THAN 1h ORDER BY minutes DESC;":      "the playground has no transactions",
	"SHOW ACLS ON TOPIC payments;":                                        "the playground has no ACLs",
	"SHOW ACLS FOR 'User:alice' WHERE permission = 'DENY';":               "the playground has no ACLs",
	"SHOW ACLS WHERE pattern_type = 'PREFIXED' ORDER BY resource_name;":   "the playground has no ACLs",
	"SHOW USERS;": "the playground has no SCRAM users",
	"SHOW USERS WHERE mechanism = 'SCRAM-SHA-256';": "the playground has no SCRAM users",
	"SHOW QUOTAS;":                  "the playground has no quotas",
	"SHOW QUOTAS FOR USER alice;":   "the playground has no quotas",
	"SHOW QUOTAS FOR DEFAULT USER;": "the playground has no quotas",
	"SHOW QUOTAS WHERE key = 'producer_byte_rate' ORDER BY value DESC;": "the playground has no quotas",
	"SHOW LOG DIRS WHERE usable_bytes < 0.1 * total_bytes;":             "no disk is nearly full",
	"SHOW REASSIGNMENTS WHERE topic = 'orders';":                        "no reassignment is in progress",
	"SHOW FEATURES WHERE finalized_version < supported_max;":            "every feature is at its newest version",
}

// changesALiveGroup matches a statement that moves or deletes a group's
// offsets. On `kql --playground` (traffic on, the default) Kafka refuses it
// for the groups with a live member, so a README example may not name one:
// the test's static playground would accept what a user's is refused.
var changesALiveGroup = regexp.MustCompile(`(?i)^(?:EXPLAIN\s+)?(?:RESET|DELETE)\s+GROUP\s+"?([^\s";]+)`)

func liveGroup(name string) bool {
	switch name {
	case playground.GroupKeepsUp, playground.GroupCatchesUp, playground.GroupStalled:
		return true
	}
	return false
}

// followsUntilCtrlC: FOLLOW examples run until Ctrl-C; they are only
// parsed (FOLLOW itself is tested in pty_follow_test.go).
func followsUntilCtrlC(stmt string) bool { return strings.Contains(strings.ToUpper(stmt), " FOLLOW") }

type readmeBlock struct {
	line  int    // of the opening fence
	skip  string // why it does not run on the playground; "" when it does
	stmts []readmeStmt
}

type readmeStmt struct {
	line int
	text string
}

// readmeSQLBlocks returns README.md's ```sql blocks, one statement a line.
func readmeSQLBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var cur *readmeBlock
	skip := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "--") {
				cur.stmts = append(cur.stmts, readmeStmt{n, s})
			}
		case l == "```sql":
			cur = &readmeBlock{line: n, skip: skip}
			skip = ""
		case strings.HasPrefix(l, "```"):
			skip = ""
		default:
			if m := notOnPlayground.FindStringSubmatch(l); m != nil {
				skip = m[1]
			} else if l != "" {
				skip = "" // a marker applies to the block right after it
			}
		}
	}
	if len(blocks) < 40 {
		t.Fatalf("found %d sql blocks in README.md: the extraction is broken", len(blocks))
	}
	return blocks
}

// TestReadmeExamplesRunOnThePlayground runs every statement of the README's
// sql blocks on a playground without traffic (a fresh one per block, since
// blocks drop and alter topics), each as a user would paste it into
// `kql -e`: it must succeed, a query must answer with rows, and no column a
// SELECT asks for may be NULL in every row (a path the data does not have).
func TestReadmeExamplesRunOnThePlayground(t *testing.T) {
	blocks := readmeSQLBlocks(t)
	inReadme := map[string]bool{}
	for _, b := range blocks {
		for _, s := range b.stmts {
			inReadme[s.text] = true
		}
	}
	// The markers must not take the test's substance away: most blocks run.
	ran := 0
	for _, b := range blocks {
		if b.skip == "" {
			ran++
		}
	}
	if ran < len(blocks)/2 {
		t.Fatalf("only %d of README.md's %d sql blocks run on the playground: the markers hide most of them", ran, len(blocks))
	}
	for s := range emptyOnThePlayground {
		if !inReadme[s] {
			t.Errorf("emptyOnThePlayground lists %q, which is not in README.md", s)
		}
	}
	for _, b := range blocks {
		if b.skip != "" {
			for _, s := range b.stmts {
				check(t, s)
			}
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		pg, err := playground.Start(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range b.stmts {
			if m := changesALiveGroup.FindStringSubmatch(s.text); m != nil && liveGroup(m[1]) {
				t.Errorf("README.md:%d: %s: %s has a live member on kql --playground, which refuses this; use a group without members (analytics, shipping)", s.line, s.text, m[1])
			}
			if followsUntilCtrlC(s.text) {
				check(t, s)
				continue
			}
			var out, errb bytes.Buffer
			args := []string{"-q", "-b", strings.Join(pg.Bootstrap(), ","), "--schema-registry", pg.RegistryURL(), "--format", "jsonl", "-e", s.text}
			if code := Main(args, strings.NewReader(""), &out, &errb); code != 0 {
				t.Errorf("README.md:%d: %s: exit %d:\n%s", s.line, s.text, code, errb.String())
				continue
			}
			if !isQuery(s.text) || emptyOnThePlayground[s.text] != "" {
				continue
			}
			rows := jsonRows(t, out.Bytes())
			if len(rows) == 0 {
				t.Errorf("README.md:%d: %s: no rows", s.line, s.text)
				continue
			}
			if strings.HasPrefix(strings.ToUpper(s.text), "SELECT") {
				for col := range rows[0] {
					allNull := true
					for _, r := range rows {
						allNull = allNull && r[col] == nil
					}
					if allNull {
						t.Errorf("README.md:%d: %s: column %s is NULL in every row", s.line, s.text, col)
					}
				}
			}
		}
		pg.Close()
	}
}

// check parses stmt as `kql --check` does, without a cluster.
func check(t *testing.T, s readmeStmt) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main([]string{"--check", "-e", s.text}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Errorf("README.md:%d: %s: does not parse (exit %d): %s", s.line, s.text, code, errb.String())
	}
}

func isQuery(stmt string) bool {
	u := strings.ToUpper(stmt)
	for _, p := range []string{"SHOW ", "DESCRIBE ", "DESC ", "CONSUME ", "SELECT ", "EXPLAIN "} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

func jsonRows(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatalf("not JSON: %s: %v", l, err)
		}
		rows = append(rows, r)
	}
	return rows
}
