package lang

import (
	"testing"
)

var opsParseCases = []parseCase{
	{"SHOW LOG DIRS", &ShowLogDirs{}},
	{"show log dirs for broker 2", &ShowLogDirs{Broker: i32(2)}},
	{"SHOW LOG DIRS WHERE usable_bytes < 1000 ORDER BY broker", &ShowLogDirs{Query: Query{
		Where:   &Binary{Op: OpLt, L: &Column{Name: "usable_bytes"}, R: &IntLit{V: 1000}},
		OrderBy: []OrderItem{{X: &Column{Name: "broker"}}}}}},
	{"SHOW REASSIGNMENTS", &ShowReassignments{}},
	{"SHOW QUORUM", &ShowQuorum{}},
	{"SHOW FEATURES LIMIT 2", &ShowFeatures{Query: Query{Limit: i64(2)}}},
	{"ALTER TOPIC orders PARTITION 3 REPLICAS (1, 2, 3)", &AlterReplicas{Topic: "orders", Partition: 3, Replicas: []int32{1, 2, 3}}},
	{"alter topic 'my topic' partition 0 replicas (2) execute", &AlterReplicas{Topic: "my topic", Partition: 0, Replicas: []int32{2}, Execute: true}},
	{"CANCEL REASSIGNMENT ON TOPIC orders PARTITION 1", &CancelReassignment{Topic: "orders", Partition: 1}},
	{"CANCEL REASSIGNMENT ON TOPIC on PARTITION 0 EXECUTE", &CancelReassignment{Topic: "on", Partition: 0, Execute: true}},
	{"ELECT LEADERS", &ElectLeaders{}},
	{"ELECT LEADERS PREFERRED EXECUTE", &ElectLeaders{Execute: true}},
	{"ELECT LEADERS UNCLEAN FOR TOPIC orders", &ElectLeaders{Unclean: true, Topic: str("orders")}},
	{"ELECT LEADERS FOR TOPIC orders PARTITION 0, 2 EXECUTE", &ElectLeaders{Topic: str("orders"), Partitions: []int32{0, 2}, Execute: true}},
	{"ELECT LEADERS FOR TOPIC orders PARTITIONS (1, 3)", &ElectLeaders{Topic: str("orders"), Partitions: []int32{1, 3}}},
	{"ELECT LEADERS FOR TOPIC orders PARTITION 4", &ElectLeaders{Topic: str("orders"), Partitions: []int32{4}}},
	{"EXPLAIN ELECT LEADERS FOR TOPIC t EXECUTE", &Explain{Stmt: &ElectLeaders{Topic: str("t"), Execute: true}}},
}

func TestParseOps(t *testing.T) { checkParses(t, opsParseCases, true) }

func TestParseOpsErrors(t *testing.T) {
	cases := []errorCase{
		{"SHOW LOG DIRS FOR BROKER -1", "1:26: broker id -1 is out of range"},
		{"SHOW LOG DIRS WHERE size > 1", "1:21: unknown column size"},
		{"ALTER TOPIC t PARTITION 0 REPLICAS ()", "1:27: REPLICAS () names no broker"},
		{"ALTER TOPIC t PARTITION 0 REPLICAS (1, 2, 1)", "1:43: broker 1 listed twice"},
		{"ALTER TOPIC t PARTITION 0 REPLICAS (1, x)", "1:40: unexpected x"},
		{"ALTER BROKER 1 PARTITION 0 REPLICAS (1)", "1:16: only a topic has partitions and replicas"},
		{"ALTER TOPIC t PARTITION -1 REPLICAS (1)", "1:25: partition -1 is out of range"},
		{"ALTER TOPIC t PARTITION 0 REPLICAS 1, 2", "1:36: unexpected 1"},
		{"ALTER TOPIC t PARTITION 0 REPLICAS (1) EXECUTE (2)", "1:48: unexpected '(' after a complete ALTER TOPIC statement"},
		{"CANCEL REASSIGNMENT ON TOPIC t", "1:31: unexpected end of statement after t"},
		{"ELECT LEADERS FOR TOPIC t PARTITION 1, 1", "1:40: partition 1 listed twice"},
		{"ELECT LEADERS EXECUTE FOR TOPIC t", "1:23: unexpected FOR after a complete ELECT LEADERS statement"},
		{"ELECT LEADER", "1:7: unexpected LEADER"},
	}
	checkErrors(t, cases)
}
