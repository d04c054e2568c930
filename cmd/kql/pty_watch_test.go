package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/watch"
)

// watchedGroup is a consumer group "billing" on topic "events" (one
// partition) with one live member that commits only when the test says so,
// so its lag moves exactly as the test makes it.
type watchedGroup struct {
	t       *testing.T
	c       *kfake.Cluster
	member  *kgo.Client
	produce *kgo.Client
	written int64
}

func newWatchedGroup(t *testing.T, c *kfake.Cluster) *watchedGroup {
	t.Helper()
	if err := c.CreateTopic("events", 1, nil); err != nil {
		t.Fatal(err)
	}
	g := &watchedGroup{t: t, c: c}
	var err error
	if g.produce, err = kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("events")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.produce.Close)
	g.write(10)
	g.member, err = kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("billing"),
		kgo.ConsumeTopics("events"), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.member.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Polling joins the group; the records it reads are not committed.
	if fs := g.member.PollFetches(ctx); fs.NumRecords() == 0 {
		t.Fatalf("the group member read nothing: %v", fs.Errors())
	}
	return g
}

func (g *watchedGroup) write(n int) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Value: []byte(fmt.Sprint("e", g.written+int64(i)))}
	}
	if err := g.produce.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		g.t.Fatal(err)
	}
	g.written += int64(n)
}

func (g *watchedGroup) commit(offset int64) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var cerr error
	g.member.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{"events": {0: {Epoch: -1, Offset: offset}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			cerr = err
			if err == nil {
				for _, tp := range resp.Topics {
					for _, p := range tp.Partitions {
						if p.ErrorCode != 0 {
							cerr = fmt.Errorf("commit: error code %d", p.ErrorCode)
						}
					}
				}
			}
		})
	if cerr != nil {
		g.t.Fatal(cerr)
	}
}

// gateRefreshes holds every OffsetFetch (kql asks it once per refresh of
// SHOW GROUPS or DESCRIBE GROUP of one group) until the test lets one
// through: each refresh then sees exactly one step of the test, however
// slow the machine. open lets everything through from then on.
func gateRefreshes(c *kfake.Cluster) (next func(), open func()) {
	steps := make(chan struct{}, 100)
	done := make(chan struct{})
	c.ControlKey(kmsg.OffsetFetch.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.SleepControl(func() {
			select {
			case <-steps:
			case <-done:
			case <-time.After(time.Minute):
			}
		})
		return nil, nil, false
	})
	var once sync.Once
	return func() { steps <- struct{}{} }, func() { once.Do(func() { close(done) }) }
}

var sparkRE = regexp.MustCompile(`[▁▂▃▄▅▆▇█]+`)

// risingSparkline checks the sparkline in cell: it ends higher than it
// starts, and at the top.
func risingSparkline(t *testing.T, cell string) {
	t.Helper()
	s := []rune(sparkRE.FindString(cell))
	if len(s) < 3 || s[0] >= s[len(s)-1] || s[len(s)-1] != '█' {
		t.Fatalf("want a rising sparkline in %q", cell)
	}
}

// \watch SHOW GROUPS over a group whose lag grows at every refresh (the
// member commits 3 of every 10 new records) shows the lag's sparkline
// rising and the group falling behind; Ctrl-C ends it, and the shell goes on.
func TestPTYWatchShowsALagThatGrows(t *testing.T) {
	c, boot := ptyCluster(t)
	g := newWatchedGroup(t, c)
	committed := int64(5)
	g.commit(committed)
	next, open := gateRefreshes(c)
	t.Cleanup(open)

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	next()
	s.send("SHOW GROUPS;\r")
	s.expect(`billing`)
	s.expect(prompt)
	s.send("\\watch 0.05\r")
	for i := 0; i < 8; i++ {
		next()
		s.expect(`\(1 row[;)]`) // the end of one refresh's table
		g.write(10)
		committed += 3
		g.commit(committed)
	}
	next()
	line := s.expect(`billing [^\n]*\n`)
	// The lag column follows topics; max_lag_ms (and any later number)
	// sits between it and the status.
	m := regexp.MustCompile(`\| events \|\s+(\d+) ([ ▁▂▃▄▅▆▇█]+) \+[0-9.]+k?/s \|.*\| falling behind`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("want the lag with a rising trend and falling behind in:\n%s", line)
	}
	if m[1] != fmt.Sprint(g.written-committed) {
		t.Errorf("lag %s, want %d", m[1], g.written-committed)
	}
	risingSparkline(t, m[2])
	t.Logf("the last refresh:\n%s", s.text()[strings.LastIndex(s.text(), "Every 0.05s"):])
	s.send("\x03")
	open()
	s.expect(prompt)
	s.send("SHOW TOPICS;\r")
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatalf("kql exited with %v after Ctrl-C ended a \\watch", err)
	}
}

// A group with a live member that commits nothing while records keep
// coming is stalled (Burrow's rule: committed offsets not moving while
// lag > 0), partition by partition in DESCRIBE GROUP.
func TestPTYWatchShowsAStalledGroup(t *testing.T) {
	c, boot := ptyCluster(t)
	g := newWatchedGroup(t, c)
	g.commit(4)
	next, open := gateRefreshes(c)
	t.Cleanup(open)

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	next()
	s.send("DESCRIBE GROUP billing;\r")
	s.expect(`\(1 row\)`)
	s.expect(prompt)
	s.send("\\watch 0.05\r")
	// A stall is judged over a full window (watch.Window refreshes): a
	// consumer between two commits looks the same over fewer.
	for i := 0; i < watch.Window; i++ {
		next()
		s.expect(`\(1 row[;)]`)
		g.write(5)
	}
	next()
	line := s.expect(`events [^\n]*\n`)
	if !strings.Contains(line, "| stalled") {
		t.Fatalf("want stalled in:\n%s", line)
	}
	s.send("\x03")
	open()
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}

// \watch redraws the terminal: with results going to a file (\o) it does
// not run, and says how to get back. (Off a terminal, meta-commands do not
// run at all: a script is KafkaQL only.)
func TestWatchNeedsTheTerminal(t *testing.T) {
	h := newHarness(t)
	out := filepath.Join(t.TempDir(), "out.txt")
	r := h.repl("SHOW TOPICS;\n\\o " + out + "\n\\watch\n")
	if !strings.Contains(r.stderr, `\watch redraws the terminal, and output goes to `+out+` (\o): run \o to send it back`) {
		t.Fatalf("%s", r)
	}
}
