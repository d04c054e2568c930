package lang

import (
	"testing"
	"time"
)

var adminParseCases = []parseCase{
	{"SHOW CONFIGS FOR TOPIC orders", &ShowConfigs{Resource: ConfigResource{Kind: ResourceTopic, Topic: "orders"}}},
	{"show configs for topic orders all", &ShowConfigs{Resource: ConfigResource{Kind: ResourceTopic, Topic: "orders"}, All: true}},
	{"SHOW CONFIGS FOR TOPIC all", &ShowConfigs{Resource: ConfigResource{Kind: ResourceTopic, Topic: "all"}}},
	{"SHOW CONFIGS FOR BROKER 2", &ShowConfigs{Resource: ConfigResource{Kind: ResourceBroker, Broker: 2}}},
	{"SHOW CONFIGS FOR BROKER 0 ALL", &ShowConfigs{Resource: ConfigResource{Kind: ResourceBroker, Broker: 0}, All: true}},
	{"SHOW CONFIGS FOR CLUSTER", &ShowConfigs{Resource: ConfigResource{Kind: ResourceCluster}}},

	{"ALTER TOPIC orders SET (retention.ms = '1000', cleanup.policy = compact)", &AlterConfigs{
		Resource: ConfigResource{Kind: ResourceTopic, Topic: "orders"},
		Set:      []TopicConfig{{"retention.ms", "1000"}, {"cleanup.policy", "compact"}}}},
	{"ALTER TOPIC orders SET (retention.ms = 1000)", &AlterConfigs{
		Resource: ConfigResource{Kind: ResourceTopic, Topic: "orders"}, Set: []TopicConfig{{"retention.ms", "1000"}}}},
	{"ALTER TOPIC orders UNSET (retention.ms, 'cleanup.policy')", &AlterConfigs{
		Resource: ConfigResource{Kind: ResourceTopic, Topic: "orders"}, Unset: []string{"retention.ms", "cleanup.policy"}}},
	{"ALTER TOPIC orders UNSET (a) SET (b = '1')", &AlterConfigs{
		Resource: ConfigResource{Kind: ResourceTopic, Topic: "orders"}, Set: []TopicConfig{{"b", "1"}}, Unset: []string{"a"}}},
	{"ALTER BROKER 1 SET (log.cleaner.threads = 2)", &AlterConfigs{
		Resource: ConfigResource{Kind: ResourceBroker, Broker: 1}, Set: []TopicConfig{{"log.cleaner.threads", "2"}}}},
	{"ALTER CLUSTER UNSET (log.retention.ms)", &AlterConfigs{
		Resource: ConfigResource{Kind: ResourceCluster}, Unset: []string{"log.retention.ms"}}},
	{"ALTER TOPIC orders PARTITIONS 12", &AlterPartitions{Topic: "orders", Count: 12}},

	{"RESET GROUP billing TO EARLIEST", &ResetGroup{Group: "billing", To: ResetTarget{Kind: ResetEarliest}}},
	{"RESET GROUP billing TO OLDEST", &ResetGroup{Group: "billing", To: ResetTarget{Kind: ResetEarliest}}},
	{"RESET GROUP billing TO LATEST EXECUTE", &ResetGroup{Group: "billing", To: ResetTarget{Kind: ResetLatest}, Execute: true}},
	{"RESET GROUP billing TOPIC orders TO OFFSET 5", &ResetGroup{Group: "billing", Topic: str("orders"),
		To: ResetTarget{Kind: ResetOffset, Offset: 5}}},
	{"RESET GROUP billing TOPIC orders PARTITION (0, 2) TO SHIFT BY -10 EXECUTE", &ResetGroup{Group: "billing", Topic: str("orders"),
		Partitions: []int32{0, 2}, To: ResetTarget{Kind: ResetShift, Shift: -10}, Execute: true}},
	{"RESET GROUP billing TO SHIFT BY +3 TOPIC orders PARTITION 1", &ResetGroup{Group: "billing", Topic: str("orders"),
		Partitions: []int32{1}, To: ResetTarget{Kind: ResetShift, Shift: 3}}},
	{"RESET GROUP g TO TIMESTAMP '2026-01-02T03:04:05Z'", &ResetGroup{Group: "g", To: ResetTarget{Kind: ResetTimestamp, Timestamp: 1767323045000}}},
	{"RESET GROUP g TO 1h30m AGO", &ResetGroup{Group: "g", To: ResetTarget{Kind: ResetAgo, Ago: 90 * time.Minute}}},
	{"RESET GROUP execute TO EARLIEST", &ResetGroup{Group: "execute", To: ResetTarget{Kind: ResetEarliest}}},

	{"DELETE GROUP billing", &DeleteGroup{Group: "billing"}},
	{"DELETE RECORDS FROM orders BEFORE (0:100, 3:250)", &DeleteRecords{Topic: "orders",
		Before: []PartitionOffset{{0, 100}, {3, 250}}}},
	{"DELETE RECORDS FROM orders BEFORE (0:100) EXECUTE", &DeleteRecords{Topic: "orders",
		Before: []PartitionOffset{{0, 100}}, Execute: true}},
	{"DELETE RECORDS FROM orders BEFORE OFFSET 10", &DeleteRecords{Topic: "orders", BeforeOffset: i64(10)}},
	{"DELETE RECORDS FROM orders PARTITION (1, 2) BEFORE OFFSET 10 EXECUTE", &DeleteRecords{Topic: "orders",
		BeforeOffset: i64(10), Partitions: []int32{1, 2}, Execute: true}},
	{"DELETE RECORDS FROM from BEFORE OFFSET 0", &DeleteRecords{Topic: "from", BeforeOffset: i64(0)}},

	{"EXPLAIN RESET GROUP g TO LATEST EXECUTE", &Explain{Stmt: &ResetGroup{Group: "g", To: ResetTarget{Kind: ResetLatest}, Execute: true}}},
}

func TestParseAdmin(t *testing.T) { checkParses(t, adminParseCases, true) }

func TestParseAdminErrors(t *testing.T) {
	cases := []errorCase{
		{"SHOW CONFIGS FOR CLUSTER ALL", "1:26: SHOW CONFIGS FOR CLUSTER takes no ALL"},
		{"SHOW CONFIGS FOR BROKER -1", "1:25: broker id -1 is out of range"},
		{"ALTER BROKER 1 PARTITIONS 3", "1:16: only a topic has partitions"},
		{"ALTER TOPIC t PARTITIONS 0", "1:26: PARTITIONS 0 is out of range"},
		{"ALTER TOPIC t SET (a = '1', a = '2')", "1:29: config a given twice"},
		{"ALTER TOPIC t SET (a = '1') UNSET (a)", "1:36: config a is both SET and UNSET"},
		{"ALTER TOPIC t SET (a = '1') SET (b = '2')", "1:29: SET given twice"},
		{"ALTER TOPIC t", "1:14: unexpected end of statement after t"},
		{"RESET GROUP g", "1:14: RESET GROUP needs TO"},
		{"RESET GROUP g EXECUTE", "1:15: RESET GROUP needs TO"},
		{"RESET GROUP g PARTITION 1 TO EARLIEST", "1:15: PARTITION needs a TOPIC"},
		{"RESET GROUP g TO EARLIEST TO LATEST", "1:27: TO given twice"},
		{"RESET GROUP g TO SHIFT 5", "1:24: unexpected 5"},
		{"RESET GROUP g EXECUTE TO EARLIEST", "1:23: unexpected TO after a complete RESET GROUP statement"},
		{"DELETE RECORDS FROM t", "1:22: DELETE RECORDS needs BEFORE"},
		{"DELETE RECORDS FROM t BEFORE (0:1) PARTITION 0", "1:36: BEFORE (p:o, ...) already names the partitions"},
		{"DELETE RECORDS FROM t BEFORE (0:1, 0:2)", "1:36: partition 0 listed twice"},
		{"DELETE TOPIC t", "1:8: unexpected TOPIC"},
	}
	checkErrors(t, cases)
}
