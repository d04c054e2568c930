package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// followWithin is how soon a FOLLOW in the shell must show a row: the
// backlog at once, then each record as it is written (README, CONSUME).
const followWithin = 2 * time.Second

// CONSUME ... FOLLOW in the shell, in table format on a terminal, shows
// the backlog at once and then each new record as it is written, although
// the progress line is up; Ctrl-C ends it and the shell goes on. (The table
// once waited for a full batch because the progress wrapper hid that the
// result was live: nothing was shown until Ctrl-C.)
func TestPTYFollowShowsTheBacklogThenEachNewRow(t *testing.T) {
	c, boot := ptyCluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(value string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		produce(fmt.Sprintf("backlog-%d", i))
	}

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	s.send("CONSUME orders FOLLOW;\r")
	within := func(re, what string) {
		t.Helper()
		if !s.tryExpect(re, followWithin) {
			t.Fatalf("%s was not shown within %s of being there; after the last match the terminal shows:\n%s", what, followWithin, s.text()[s.seen:])
		}
	}
	within(`backlog-0`, "the backlog's first row")
	within(`backlog-2`, "the backlog's last row")
	// Past the progress line's first second: the rows still come one by one.
	time.Sleep(1500 * time.Millisecond)
	for i := range 3 {
		produce(fmt.Sprintf("live-%d", i))
		within(fmt.Sprintf(`live-%d`, i), fmt.Sprintf("new record live-%d", i))
	}
	s.send("\x03")
	s.expect(prompt)
	s.send("SHOW TOPICS;\r")
	s.expect(`\(2 rows\)`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatalf("kql exited with %v after Ctrl-C ended a FOLLOW", err)
	}
}
