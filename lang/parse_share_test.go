package lang

import (
	"testing"
	"time"
)

var shareParseCases = []parseCase{
	{"SHOW SHARE GROUPS", &ShowShareGroups{}},
	{"show share groups like 'pay*' limit 5", &ShowShareGroups{Like: str("pay*"), Query: Query{Limit: i64(5)}}},
	{"DESCRIBE SHARE GROUP billing", &DescribeShareGroup{Group: "billing"}},
	{"DESC SHARE GROUP 'share'", &DescribeShareGroup{Group: "share"}},
	{"RESET SHARE GROUP billing TO EARLIEST", &ResetShareGroup{Group: "billing", To: ResetTarget{Kind: ResetEarliest}}},
	{"RESET SHARE GROUP billing TOPIC orders PARTITION (0, 2) TO OFFSET 7 EXECUTE", &ResetShareGroup{Group: "billing", Topic: str("orders"),
		Partitions: []int32{0, 2}, To: ResetTarget{Kind: ResetOffset, Offset: 7}, Execute: true}},
	{"RESET SHARE GROUP g TO 15m AGO TOPIC t", &ResetShareGroup{Group: "g", Topic: str("t"), To: ResetTarget{Kind: ResetAgo, Ago: 15 * time.Minute}}},
	{"RESET SHARE GROUP g TO TIMESTAMP 1767323045000", &ResetShareGroup{Group: "g", To: ResetTarget{Kind: ResetTimestamp, Timestamp: 1767323045000}}},
	{"RESET SHARE GROUP share TO LATEST", &ResetShareGroup{Group: "share", To: ResetTarget{Kind: ResetLatest}}},
	{"RESET GROUP share TO LATEST", &ResetGroup{Group: "share", To: ResetTarget{Kind: ResetLatest}}},
	{"DELETE SHARE GROUP billing", &DeleteShareGroup{Group: "billing"}},
	{"DELETE SHARE GROUP billing TOPIC orders", &DeleteShareGroup{Group: "billing", Topics: []string{"orders"}}},
	{"DELETE SHARE GROUP billing TOPIC (orders, 'pay ments')", &DeleteShareGroup{Group: "billing", Topics: []string{"orders", "pay ments"}}},
	{"EXPLAIN DESCRIBE SHARE GROUP g", &Explain{Stmt: &DescribeShareGroup{Group: "g"}}},
}

func TestParseShare(t *testing.T) { checkParses(t, shareParseCases, true) }

// Every column of the share statements may be named in WHERE and ORDER BY.
func TestParseShareQueries(t *testing.T) {
	for _, src := range []string{
		"SHOW SHARE GROUPS WHERE lag > 0 AND members = 0 AND state = 'Empty' ORDER BY coordinator, topics, group",
		"DESCRIBE SHARE GROUP g WHERE start_offset < end_offset AND lag > 0 ORDER BY members DESC, member_ids, client_ids, topic, partition LIMIT 3",
	} {
		if _, err := Parse(src); err != nil {
			t.Errorf("Parse(%q): %v", src, err)
		}
	}
}

func TestParseShareErrors(t *testing.T) {
	cases := []errorCase{
		{"RESET SHARE GROUP g", "1:20: RESET SHARE GROUP needs TO"},
		{"RESET SHARE GROUP g TO SHIFT BY 3", "1:24: RESET SHARE GROUP takes no SHIFT BY"},
		{"RESET SHARE GROUP g PARTITION 1 TO EARLIEST", "1:21: PARTITION needs a TOPIC"},
		{"RESET SHARE GROUP g EXECUTE TO EARLIEST", "1:29: unexpected TO after a complete RESET SHARE GROUP statement"},
		{"SHOW SHARE GROUP", "1:12: unexpected GROUP"},
		{"DESCRIBE SHARE GROUP g WHERE committed_offset > 0", "1:30: unknown column committed_offset"},
		{"SHOW SHARE GROUPS WHERE protocol_type = 'share'", "1:25: unknown column protocol_type"},
		{"DELETE SHARE GROUP g TOPIC (a, a)", "1:32: topic a listed twice"},
		{"DELETE SHARE GROUP g EXECUTE", "1:22: unexpected EXECUTE after a complete DELETE SHARE GROUP statement"},
	}
	checkErrors(t, cases)
}
