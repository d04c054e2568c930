package main

import "testing"

// GRANT and DENY ask before they run in the interactive shell, and REVOKE
// asks with EXECUTE (counting what would go); the dry run never asks.
// \trace shows each ACL request and the broker it went to.
func TestPTYConfirmationOfACLChanges(t *testing.T) {
	_, boot := ptyCluster(t)
	s := startPTY(t, map[string]string{"KQL_BOOTSTRAP": boot}, "--no-history")
	s.expect(prompt)

	s.send("GRANT READ, DESCRIBE ON TOPIC orders TO 'User:alice';\r")
	s.expect(`grant READ, DESCRIBE on topic orders to User:alice, from every host\? \[y/N\] `)
	s.send("\r")
	s.expect(`not run \(answer y to run it`)
	s.expect(prompt)
	s.send("SHOW ACLS;\r")
	s.expect(`\(0 rows\)`)
	s.expect(prompt)

	s.send("DENY WRITE ON TOPIC pay PREFIXED TO 'User:bob' HOST '10.0.0.5';\r")
	s.expect(`deny WRITE on topic pay \(PREFIXED\) to User:bob, from host 10\.0\.0\.5\? \[y/N\] `)
	s.send("y\r")
	s.expect(`created`)
	s.expect(prompt)
	s.send("GRANT READ, DESCRIBE ON TOPIC orders TO 'User:alice';\r")
	s.expect(`\[y/N\] `)
	s.send("y\r")
	s.expect(`\(2 rows\)`)
	s.expect(prompt)

	s.send("\\trace on\r")
	s.expect(`Trace is on\.`)
	s.expect(prompt)
	s.send("REVOKE READ, DESCRIBE ON TOPIC orders FROM 'User:alice';\r")
	s.expect(`trace: DescribeAcls -> broker \d \(127\.0\.0\.1:\d+\) \[READ TOPIC orders for User:alice\] `)
	s.expect(`would be removed`)
	s.expect(`a dry run: add EXECUTE to remove 2 bindings`)
	s.expect(prompt)
	s.send("REVOKE READ, DESCRIBE ON TOPIC orders FROM 'User:alice' EXECUTE;\r")
	s.expect(`revoke READ, DESCRIBE on topic orders from User:alice: removes 2 bindings \(REVOKE without EXECUTE lists them\)\? \[y/N\] `)
	s.send("n\r")
	s.expect(`not run`)
	s.expect(prompt)
	s.send("SHOW ACLS FOR 'User:alice';\r")
	s.expect(`\(2 rows\)`)
	s.expect(prompt)
	s.send("REVOKE READ, DESCRIBE ON TOPIC orders FROM 'User:alice' EXECUTE;\r")
	s.expect(`\[y/N\] `)
	s.send("y\r")
	s.expect(`trace: DeleteAcls -> broker \d \(127\.0\.0\.1:\d+\) \[READ TOPIC orders for User:alice DESCRIBE TOPIC orders for User:alice\] `)
	s.expect(`removed`)
	s.expect(prompt)
	s.send("\\trace off\r")
	s.expect(prompt)
	s.send("SHOW ACLS FOR 'User:alice';\r")
	s.expect(`\(0 rows\)`)
	s.expect(prompt)
	s.send("\\q\r")
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
}
