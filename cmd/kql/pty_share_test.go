package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The shell asks before RESET SHARE GROUP ... EXECUTE and DELETE SHARE
// GROUP, with what would change counted from the cluster; a dry run never
// asks, "n" leaves the group as it was and "y" runs the statement.
func TestPTYShareGroupConfirmation(t *testing.T) {
	c, boot := ptyCluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for p := int32(0); p < 3; p++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("v")}, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("w")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	s.send("RESET SHARE GROUP work TOPIC orders TO LATEST;\r")
	s.expect(`dry run: nothing was changed`)
	s.expect(prompt)
	s.send("RESET SHARE GROUP work TOPIC orders TO LATEST EXECUTE;\r")
	s.expect(`reset share group work: move the start offsets of 3 partitions of orders, lag unknown -> 0\? \[y/N\] `)
	s.send("y\r")
	s.expect(`executed: moved the start offsets of 3 partitions of share group "work"`)
	s.expect(prompt)
	s.send("RESET SHARE GROUP work TO EARLIEST EXECUTE;\r")
	s.expect(`reset share group work: move the start offsets of 3 partitions of orders, lag 0 -> 6\? \[y/N\] `)
	s.send("n\r")
	s.expect(`not run \(answer y to run it`)
	s.expect(prompt)
	s.send("DELETE SHARE GROUP work;\r")
	s.expect(`delete share group work: its start offsets for 3 partitions of 1 topic\? \[y/N\] `)
	s.send("\r")
	s.expect(`not run`)
	s.expect(prompt)
	s.send("DESCRIBE SHARE GROUP work;\r")
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	s.send("DELETE SHARE GROUP work;\r")
	s.expect(`\[y/N\] `)
	s.send("y\r")
	s.expect(`deleted`)
	s.expect(prompt)
	s.send("SHOW SHARE GROUPS;\r")
	s.expect(`\(0 rows\)`)
	s.expect(prompt)
}
