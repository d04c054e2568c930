package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A read whose partition lost its leader says so on the terminal, naming
// the partition and the broker it was read from, while it waits; once a
// leader answers it goes on and ends complete.
func TestPTYProgressSaysItWaitsForALeader(t *testing.T) {
	c, boot := ptyCluster(t)
	if err := c.CreateTopic("big", 1, nil); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("big"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 5000)
	for i := range recs {
		recs[i] = &kgo.Record{Key: []byte(fmt.Sprint(i)), Value: []byte("value")}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	leader := c.LeaderFor("big", 0)
	fault := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "big", Err: kerr.NotLeaderForPartition, Count: -1})
	t.Cleanup(fault.Remove)

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history", "--format", "csv")
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
