package main

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A read whose partition lost its leader says so on the terminal, naming
// the partition and the broker it was read from, while it waits; once a
// leader answers it goes on and ends complete.
func TestPTYProgressSaysItWaitsForALeader(t *testing.T) {
	c, boot := ptyCluster(t)
	createBig(t, c)
	leader := c.LeaderFor("big", 0)
	fault := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "big", Err: kerr.NotLeaderForPartition, Count: -1})
	t.Cleanup(fault.Remove)

	// 5000 rows are taller than the terminal: cat stands for the pager.
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot, "KQL_PAGER": "cat"}, "--no-history", "--format", "csv")
	s.expect(prompt)
	s.send("CONSUME big LIMIT 1000000;\r")
	s.expect(fmt.Sprintf(`waiting for a leader for big/0 \(last read from broker %d at 127\.0\.0\.1:\d+\) for \d+s; 0 rows so far`, leader))
	fault.Remove()
	s.expect(`4999,`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatalf("kql exited with %v", err)
	}
}
