package main

import (
	"regexp"
	"testing"
)

// The replica moves and elections: \trace shows where each request went
// (DescribeLogDirs to every broker, ElectLeaders to one), and the EXECUTE
// forms ask first, with what the dry run sees; "n" sends nothing.
func TestPTYOpsTraceAndConfirmation(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)
	s.send("\\trace on\r")
	s.expect(prompt)

	s.send("SHOW LOG DIRS;\r")
	s.expect(`\(3 rows\)`)
	s.expect(prompt)
	for _, b := range []string{"0", "1", "2"} {
		if !regexp.MustCompile(`trace: DescribeLogDirs -> broker ` + b + ` \(127\.0\.0\.1:\d+\) \[every log dir\]`).MatchString(s.text()) {
			t.Fatalf("no DescribeLogDirs to broker %s in the trace:\n%s", b, s.text())
		}
	}

	s.send("ELECT LEADERS FOR TOPIC orders EXECUTE;\r")
	s.expect(`elect preferred leaders for topic orders: 0 partitions not led by the preferred replica\? \[y/N\] `)
	s.send("n\r")
	s.expect(`not run`)
	s.expect(prompt)
	if regexp.MustCompile(`trace: ElectLeaders`).MatchString(s.text()) {
		t.Fatalf("answering n sent ElectLeaders:\n%s", s.text())
	}
	s.send("ELECT LEADERS FOR TOPIC orders EXECUTE;\r")
	s.expect(`\[y/N\] `)
	s.send("y\r")
	s.expect(`trace: ElectLeaders -> broker \d \(127\.0\.0\.1:\d+\) \[orders/0 orders/1 orders/2\]`)
	s.expect(`\(3 rows\)`)
	s.expect(prompt)

	s.send("ALTER TOPIC orders PARTITION 0 REPLICAS (1, 2, 0) EXECUTE;\r")
	s.expect(`move the replicas of orders/0 from \(\d, \d, \d\) to \(1, 2, 0\) \(copies the partition to each new broker\)\? \[y/N\] `)
	s.send("\r")
	s.expect(`not run`)
	s.expect(prompt)
	s.send("\x04")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}
