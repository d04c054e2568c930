package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The interactive shell asks before DROP TOPIC, DELETE GROUP and the
// EXECUTE forms, with what would go counted from the cluster; Enter (no),
// Ctrl-C and "n" leave everything as it was, "y" runs it, and
// \set confirm off stops asking.
func TestPTYConfirmationPrompt(t *testing.T) {
	c, boot := ptyCluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := int32(0); p < 3; p++ {
		for i := 0; i < 2; i++ {
			recs = append(recs, &kgo.Record{Topic: "orders", Partition: p, Value: []byte("v")})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)

	// Enter: the default is no.
	s.send("DROP TOPIC orders;\r")
	s.expect(`drop topic orders: 3 partitions, up to 6 records\? \[y/N\] `)
	s.send("\r")
	s.expect(`not run \(answer y to run it`)
	s.expect(prompt)

	// Ctrl-C at the question: no, and the shell goes on.
	s.send("DROP TOPIC orders;\r")
	s.expect(`\[y/N\] `)
	s.send("\x03")
	s.expect(`not run: cancelled \(Ctrl-C\)`)
	s.expect(prompt)
	s.send("SHOW TOPICS;\r")
	s.expect(`orders`)
	s.expect(`\(2 rows\)`)
	s.expect(prompt)

	// A dry run never asks; its EXECUTE does, and "y" runs it.
	s.send("DELETE RECORDS FROM orders BEFORE OFFSET 1;\r")
	s.expect(`dry run: nothing was deleted`)
	s.expect(prompt)
	s.send("DELETE RECORDS FROM orders BEFORE OFFSET 1 EXECUTE;\r")
	s.expect(`delete records from orders: 3 records in 3 partitions\? \[y/N\] `)
	s.send("n\r")
	s.expect(`not run`)
	s.expect(prompt)
	s.send("DELETE RECORDS FROM orders BEFORE OFFSET 1 EXECUTE;\r")
	s.expect(`\[y/N\] `)
	s.send("y\r")
	s.expect(`executed: deleted 3 records from "orders"`)
	s.expect(prompt)

	s.send("DROP TOPIC orders;\r")
	s.expect(`drop topic orders: 3 partitions, up to 3 records\? \[y/N\] `)
	s.send("yes\r")
	s.expect(`dropped`)
	s.expect(prompt)

	// \set confirm off: no more questions this session.
	s.send("\\set confirm off\r")
	s.expect(`Confirmation is off\.`)
	s.expect(prompt)
	s.send("DROP TOPIC inventory-updates;\r")
	s.expect(`dropped`)
	s.expect(prompt)
	if _, after, _ := strings.Cut(s.text(), "Confirmation is off."); strings.Contains(after, "[y/N]") {
		t.Errorf("asked after \\set confirm off:\n%s", after)
	}
	s.send("\\q\r")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}
