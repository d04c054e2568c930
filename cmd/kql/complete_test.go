package main

import (
	"context"
	"reflect"
	"sort"
	"testing"
	"time"
)

func TestCompletions(t *testing.T) {
	topics := []string{"order-events", "orders", "payments", "2024-events"}
	groups := []string{"billing", "shipping"}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"sh", []string{"ow "}},        // keyword, typed in lower case
		{"SH", []string{"OW "}},        // upper case
		{"Sh", []string{"OW "}},        // mixed: upper
		{"show top", []string{"ics "}}, // second keyword
		{"DESCRIBE TOPIC ord", []string{"er-events ", "ers "}},
		{"describe topic pay", []string{"ments "}},
		{`DESCRIBE TOPIC "ord`, []string{`er-events" `, `ers" `}},
		{"DESCRIBE GROUP bi", []string{"lling "}},
		{"CONSUME FROM pa", []string{"yments "}},
		{"DESCRIBE TOPIC zz", nil},
		{"DESCRIBE TOPIC ", []string{`"2024-events" `, "orders ", "payments "}}, // a name that needs quotes comes quoted
		{"DESCRIBE TOPIC 20", nil},                                              // and cannot be completed bare
		{"DESCRIBE TOPIC '20", []string{"24-events' "}},
		{"PRODUCE INTO pay", []string{"ments "}},
		{"CONSUME orders FROM NE", []string{"WEST "}}, // FROM after a topic starts a FROM clause
		{"consume from or", []string{"der-events ", "ders "}},
		{`\for`, []string{"mat "}},
		{`\format js`, []string{"on", "onl"}},
		{"SHOW TOPICS LIKE 'o", nil},
		{"SHOW PARTITIONS OF pa", []string{"yments "}},
		{"SELECT key, value FROM pa", []string{"yments "}},
		{"SELECT key FROM orders FROM NE", []string{"WEST "}},
		{"DESCRIBE SUBJECT pay", []string{"ments-value "}}, // the registry's subjects
		{"PRODUCE INTO orders VALUE '{}' VALUE SCHEMA 'pay", []string{"ments-value' "}},
		{"PRODUCE INTO orders VALUE '{}' VALUE SCHEMA 's' MESSAGE O", nil}, // not keywords: a message name
		{"gr", []string{"ant "}},                                           // the access-control statements
		{"REV", []string{"OKE "}},
		{"EXPLAIN ACC", []string{"ESS "}},
		{"GRANT IDEMPOTENT_W", []string{"RITE "}},
		{"GRANT READ ON TOPIC pay", []string{"ments "}},
		{"REVOKE READ ON GROUP bi", []string{"lling "}},
		{"SHOW AC", []string{"LS "}},
		{"SHOW CLU", []string{"STER "}}, // not CLUSTER_ACTION: only ACL statements take it
		{"EXPLAIN ACCESS 'User:a' CLUSTER_A", []string{"CTION "}},
	} {
		line := []rune(tc.line)
		c := &nameCache{topics: topics, groups: groups, subjects: []string{"payments-value"}, loaded: time.Now(), ctx: context.Background()}
		got, n := c.Do(line, len(line))
		var strs []string
		for _, g := range got {
			strs = append(strs, string(g))
		}
		// keywords may add more candidates: check ours are there, and
		// that nothing else is when we expect none
		if tc.want == nil {
			if len(strs) != 0 {
				t.Errorf("%q: want no completion, got %q", tc.line, strs)
			}
			continue
		}
		sort.Strings(strs)
		for _, w := range tc.want {
			if !contains(strs, w) {
				t.Errorf("%q: want %q among %q", tc.line, w, strs)
			}
		}
		wordLen := len([]rune(lastWord(tc.line)))
		if n != wordLen {
			t.Errorf("%q: length %d, want %d", tc.line, n, wordLen)
		}
	}
}

func lastWord(s string) string {
	i := len(s)
	for i > 0 && !isWordBreak(rune(s[i-1])) {
		i--
	}
	return s[i:]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// blockingExec blocks name lookups until released, like a slow cluster.
type blockingExec struct {
	fakeExec
	release chan struct{}
}

func (b *blockingExec) Topics(ctx context.Context) ([]string, error) {
	select {
	case <-b.release:
		return []string{"late-topic"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestCompletionNeverBlocksOnTheCluster(t *testing.T) {
	ex := &blockingExec{release: make(chan struct{})}
	c := newNameCache(ex)
	defer c.close()
	c.refresh()
	done := make(chan struct{})
	go func() {
		c.Do([]rune("DESCRIBE TOPIC la"), 17)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Tab waited for the cluster")
	}
	close(ex.release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := c.Do([]rune("DESCRIBE TOPIC la"), 17)
		if reflect.DeepEqual(got, [][]rune{[]rune("te-topic ")}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background refresh never filled the cache: %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCompletionKeepsACLOperationsToACLStatements: Kafka's multi-word
// operations are keywords, but outside GRANT, DENY, REVOKE and EXPLAIN
// ACCESS they would only stand in the way (SHOW CLU<Tab> must stay
// CLUSTER, a unique completion).
func TestCompletionKeepsACLOperationsToACLStatements(t *testing.T) {
	if got := completions("CLU", []string{"SHOW"}, nil, nil, nil); !reflect.DeepEqual(got, []string{"STER "}) {
		t.Errorf("SHOW CLU: %q, want exactly [STER ]", got)
	}
	if got := completions("CLU", []string{"GRANT"}, nil, nil, nil); !reflect.DeepEqual(got, []string{"STER ", "STER_ACTION "}) {
		t.Errorf("GRANT CLU: %q, want CLUSTER and CLUSTER_ACTION", got)
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
