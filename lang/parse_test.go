package lang

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func i64(v int64) *int64   { return &v }
func i32(v int32) *int32   { return &v }
func i16(v int16) *int16   { return &v }
func str(v string) *string { return &v }
func lit(v string) *Literal {
	return &Literal{Bytes: []byte(v)}
}

var nullLit = &Literal{Null: true}

// parseCases pins the AST of every statement, alias and clause. Aliases
// are listed next to the canonical spelling with the same AST.
var parseCases = []parseCase{
	{"SHOW TOPICS", &ShowTopics{}},
	{"show topics;", &ShowTopics{}},
	{"Show Topics ;;", &ShowTopics{}},
	{"SHOW TOPICS LIKE 'orders*'", &ShowTopics{Like: str("orders*")}},
	{`SHOW TOPICS LIKE "a\tb"`, &ShowTopics{Like: str("a\tb")}},
	{"SHOW TOPICS LIKE ''", &ShowTopics{Like: str("")}},
	{"SHOW BROKERS", &ShowBrokers{}},
	{"SHOW CLUSTER", &ShowCluster{}},
	{"SHOW GROUPS", &ShowGroups{}},
	{"SHOW CONSUMERS", &ShowGroups{}},
	{"SHOW GROUPS LIKE 'billing-*'", &ShowGroups{Like: str("billing-*")}},
	{"show consumers like `b*`", &ShowGroups{Like: str("b*")}},

	{"DESCRIBE TOPIC orders", &DescribeTopic{Topic: "orders"}},
	{"DESC TOPIC orders", &DescribeTopic{Topic: "orders"}},
	{"describe topic Orders.V1", &DescribeTopic{Topic: "Orders.V1"}},
	{"DESCRIBE TOPIC my_topic-2", &DescribeTopic{Topic: "my_topic-2"}},
	{`DESCRIBE TOPIC "2024-events"`, &DescribeTopic{Topic: "2024-events"}},
	{"DESCRIBE TOPIC topics", &DescribeTopic{Topic: "topics"}},
	{"DESCRIBE TOPIC `from`", &DescribeTopic{Topic: "from"}},
	{"DESCRIBE TOPIC _internal", &DescribeTopic{Topic: "_internal"}},
	{"DESCRIBE TOPIC __consumer_offsets", &DescribeTopic{Topic: "__consumer_offsets"}},
	{"DESCRIBE GROUP billing", &DescribeGroup{Group: "billing"}},
	{"DESC GROUP 'group with spaces'", &DescribeGroup{Group: "group with spaces"}},

	{"CONSUME orders", &Consume{Topic: "orders"}},
	{"CONSUME FROM orders", &Consume{Topic: "orders"}},
	{"SELECT * FROM orders", &Consume{Topic: "orders"}},
	{"SELECT FROM orders", &Consume{Topic: "orders"}},
	{"SELECT * orders", &Consume{Topic: "orders"}},
	{"SELECT orders", &Consume{Topic: "orders"}},
	{"CONSUME FROM orders FROM NEWEST", &Consume{Topic: "orders", From: &Start{Kind: FromNewest}}},
	{"CONSUME orders FROM LATEST", &Consume{Topic: "orders", From: &Start{Kind: FromNewest}}},
	{"CONSUME orders FROM END", &Consume{Topic: "orders", From: &Start{Kind: FromNewest}}},
	{"CONSUME orders FROM OLDEST", &Consume{Topic: "orders", From: &Start{Kind: FromOldest}}},
	{"CONSUME orders FROM EARLIEST", &Consume{Topic: "orders", From: &Start{Kind: FromOldest}}},
	{"CONSUME orders FROM BEGINNING", &Consume{Topic: "orders", From: &Start{Kind: FromOldest}}},
	{"CONSUME orders FROM START", &Consume{Topic: "orders", From: &Start{Kind: FromOldest}}},
	{"CONSUME orders FROM OFFSET 42", &Consume{Topic: "orders", From: &Start{Kind: FromOffset, Offset: 42}}},
	{"CONSUME orders FROM OFFSET 0", &Consume{Topic: "orders", From: &Start{Kind: FromOffset}}},
	{"CONSUME orders FROM TIMESTAMP 1700000000000", &Consume{Topic: "orders", From: &Start{Kind: FromTimestamp, Timestamp: 1700000000000}}},
	{"CONSUME orders FROM TIME 1700000000000", &Consume{Topic: "orders", From: &Start{Kind: FromTimestamp, Timestamp: 1700000000000}}},
	{"CONSUME orders FROM TIMESTAMP '2026-01-02T03:04:05Z'", &Consume{Topic: "orders", From: &Start{Kind: FromTimestamp, Timestamp: 1767323045000}}},
	{"CONSUME orders FROM TIMESTAMP '2026-01-02T03:04:05.123Z'", &Consume{Topic: "orders", From: &Start{Kind: FromTimestamp, Timestamp: 1767323045123}}},
	{"CONSUME orders FROM TIMESTAMP '2026-01-02T04:04:05+01:00'", &Consume{Topic: "orders", From: &Start{Kind: FromTimestamp, Timestamp: 1767323045000}}},
	{"CONSUME orders FROM 15m AGO", &Consume{Topic: "orders", From: &Start{Kind: FromAgo, Ago: 15 * time.Minute}}},
	{"CONSUME orders FROM 1h30m ago", &Consume{Topic: "orders", From: &Start{Kind: FromAgo, Ago: 90 * time.Minute}}},
	{"CONSUME orders FROM 1.5h AGO", &Consume{Topic: "orders", From: &Start{Kind: FromAgo, Ago: 90 * time.Minute}}},
	{"CONSUME orders FROM 250ms AGO", &Consume{Topic: "orders", From: &Start{Kind: FromAgo, Ago: 250 * time.Millisecond}}},
	{"CONSUME orders FROM 3µs AGO", &Consume{Topic: "orders", From: &Start{Kind: FromAgo, Ago: 3 * time.Microsecond}}},
	{"CONSUME orders FROM TAIL (0:5, 1:7)", &Consume{Topic: "orders", From: &Start{Kind: FromTail,
		Positions: []PartitionOffset{{0, 5}, {1, 7}}}}},
	{"CONSUME orders FROM ANCHOR (2:0)", &Consume{Topic: "orders", From: &Start{Kind: FromAnchor,
		Positions: []PartitionOffset{{2, 0}}}}},
	{"CONSUME orders FROM ANCHOR (1:9,0:3)", &Consume{Topic: "orders", From: &Start{Kind: FromAnchor,
		Positions: []PartitionOffset{{1, 9}, {0, 3}}}}},
	{"CONSUME orders PARTITION 3", &Consume{Topic: "orders", Partitions: []int32{3}}},
	{"CONSUME orders PARTITIONS 3", &Consume{Topic: "orders", Partitions: []int32{3}}},
	{"CONSUME orders PARTITION (0, 2, 1)", &Consume{Topic: "orders", Partitions: []int32{0, 2, 1}}},
	{"CONSUME orders PARTITION (7)", &Consume{Topic: "orders", Partitions: []int32{7}}},
	{"CONSUME orders PARTITION 2147483647", &Consume{Topic: "orders", Partitions: []int32{2147483647}}},
	{"CONSUME orders LIMIT 1", &Consume{Topic: "orders", Limit: i64(1)}},
	{"CONSUME orders LIMIT 1000000", &Consume{Topic: "orders", Limit: i64(1000000)}},
	{"CONSUME orders LIMIT +10", &Consume{Topic: "orders", Limit: i64(10)}},
	{"CONSUME orders SKIP 0", &Consume{Topic: "orders", Skip: i64(0)}},
	{"CONSUME orders OFFSET 20", &Consume{Topic: "orders", Skip: i64(20)}},
	{"CONSUME orders SKIP 20", &Consume{Topic: "orders", Skip: i64(20)}},
	{"CONSUME orders LIMIT 10 SKIP 5 PARTITION 1 FROM NEWEST",
		&Consume{Topic: "orders", From: &Start{Kind: FromNewest}, Partitions: []int32{1}, Limit: i64(10), Skip: i64(5)}},
	{"SELECT * FROM orders FROM OFFSET 5 OFFSET 2 LIMIT 3",
		&Consume{Topic: "orders", From: &Start{Kind: FromOffset, Offset: 5}, Skip: i64(2), Limit: i64(3)}},
	{"consume\n  orders\n  from oldest\n  limit 5", &Consume{Topic: "orders", From: &Start{Kind: FromOldest}, Limit: i64(5)}},
	{"CONSUME orders /* inline */ LIMIT 5 -- trailing", &Consume{Topic: "orders", Limit: i64(5)}},
	{"CONSUME limit LIMIT 5", &Consume{Topic: "limit", Limit: i64(5)}},
	{"CONSUME FROM from", &Consume{Topic: "from"}},
	{`CONSUME "from" FROM NEWEST`, &Consume{Topic: "from", From: &Start{Kind: FromNewest}}},

	{"PRODUCE INTO orders VALUE 'hello'", &Produce{Topic: "orders", Value: lit("hello")}},
	{"PRODUCE orders VALUE 'hello'", &Produce{Topic: "orders", Value: lit("hello")}},
	{"PRODUCE orders PAYLOAD 'hello'", &Produce{Topic: "orders", Value: lit("hello")}},
	{"PRODUCE orders KEY 'k'", &Produce{Topic: "orders", Key: lit("k")}},
	{"PRODUCE orders KEY NULL VALUE null", &Produce{Topic: "orders", Key: nullLit, Value: nullLit}},
	{"PRODUCE orders VALUE 'NULL'", &Produce{Topic: "orders", Value: lit("NULL")}},
	{"PRODUCE orders VALUE ''", &Produce{Topic: "orders", Value: lit("")}},
	{"PRODUCE orders VALUE x'DEADbeef'", &Produce{Topic: "orders", Value: &Literal{Bytes: []byte{0xde, 0xad, 0xbe, 0xef}}}},
	{"PRODUCE orders VALUE X''", &Produce{Topic: "orders", Value: lit("")}},
	{`PRODUCE orders VALUE "\xff\x00\u{1F600}\0\n\r\t\\\"\'` + "\\`" + `"`,
		&Produce{Topic: "orders", Value: lit("\xff\x00\U0001F600\x00\n\r\t\\\"'`")}},
	{"PRODUCE orders VALUE 'multi\nline'", &Produce{Topic: "orders", Value: lit("multi\nline")}},
	{"PRODUCE orders KEY 'k' VALUE 'v' PARTITION 2 HEADER trace-id 'abc' HEADER 'x y' NULL HEADER trace-id 'again'",
		&Produce{Topic: "orders", Key: lit("k"), Value: lit("v"), Partition: i32(2),
			Headers: []Header{{"trace-id", Literal{Bytes: []byte("abc")}}, {"x y", Literal{Null: true}}, {"trace-id", Literal{Bytes: []byte("again")}}}}},
	{"PRODUCE orders HEADER '' 'empty key' VALUE 'v'", &Produce{Topic: "orders", Value: lit("v"),
		Headers: []Header{{"", Literal{Bytes: []byte("empty key")}}}}},
	{"PRODUCE INTO into VALUE 'v'", &Produce{Topic: "into", Value: lit("v")}},

	{"CREATE TOPIC orders", &CreateTopic{Topic: "orders"}},
	{"CREATE TOPIC orders PARTITIONS 6", &CreateTopic{Topic: "orders", Partitions: i32(6)}},
	{"CREATE TOPIC orders REPLICATION 3 PARTITIONS 6", &CreateTopic{Topic: "orders", Partitions: i32(6), Replication: i16(3)}},
	{"CREATE TOPIC orders REPLICATION 32767", &CreateTopic{Topic: "orders", Replication: i16(32767)}},
	{"CREATE TOPIC orders WITH (cleanup.policy = 'compact')", &CreateTopic{Topic: "orders",
		Configs: []TopicConfig{{"cleanup.policy", "compact"}}}},
	{"create topic orders with (retention.ms=86400000, cleanup.policy = compact, 'segment.ms' = \"1000\", retention.bytes = -1) partitions 1",
		&CreateTopic{Topic: "orders", Partitions: i32(1), Configs: []TopicConfig{
			{"retention.ms", "86400000"}, {"cleanup.policy", "compact"}, {"segment.ms", "1000"}, {"retention.bytes", "-1"}}}},

	{"DROP TOPIC orders", &DropTopic{Topic: "orders"}},
	{"DROP TOPIC IF EXISTS orders", &DropTopic{IfExists: true, Topic: "orders"}},
	{"drop topic if exists `if`", &DropTopic{IfExists: true, Topic: "if"}},

	{"EXPLAIN SHOW TOPICS", &Explain{Stmt: &ShowTopics{}}},
	{"EXPLAIN CONSUME orders FROM NEWEST LIMIT 10", &Explain{Stmt: &Consume{Topic: "orders", From: &Start{Kind: FromNewest}, Limit: i64(10)}}},
	{"explain drop topic x", &Explain{Stmt: &DropTopic{Topic: "x"}}},
}

func TestParse(t *testing.T) { checkParses(t, parseCases, false) }

// TestFormatRoundTrip: every AST prints as KafkaQL that parses back to
// the same AST (the shell writes next-page statements and history this way).
func TestFormatRoundTrip(t *testing.T) {
	for _, tc := range parseCases {
		checkRoundTrip(t, tc)
	}
}

func TestFormatCanonical(t *testing.T) {
	checkFormats(t, []formatCase{
		{"select * from orders from latest limit 5 offset 2 partitions (1,0)", "CONSUME orders FROM NEWEST PARTITION (1, 0) LIMIT 5 SKIP 2"},
		{"consume orders from 90m ago", "CONSUME orders FROM 1h30m AGO"},
		{"consume orders from 2h ago", "CONSUME orders FROM 2h AGO"},
		{"consume orders from 3µs ago", "CONSUME orders FROM 3us AGO"},
		{"consume orders from time '2023-11-14T22:13:20Z'", "CONSUME orders FROM TIMESTAMP 1700000000000"},
		{"consume orders from tail (0:1)", "CONSUME orders FROM TAIL (0:1)"},
		{"consume `topics`", `CONSUME "topics"`},
		{"produce orders payload 'it'", "PRODUCE INTO orders VALUE 'it'"},
		{`produce orders value "it's \"q\""`, `PRODUCE INTO orders VALUE 'it\'s "q"'`},
		{"produce orders value x'00ff41'", `PRODUCE INTO orders VALUE '\0\xffA'`},
		{"produce 'my topic' header k null key null", `PRODUCE INTO "my topic" KEY NULL HEADER k NULL`},
		{"desc group g", "DESCRIBE GROUP g"},
		{"show consumers like 'x'", "SHOW GROUPS LIKE 'x'"},
		{"create topic t with (a.b = 5) replication 2", "CREATE TOPIC t REPLICATION 2 WITH (a.b = '5')"},
		{"drop topic if exists 'if'", `DROP TOPIC IF EXISTS "if"`},
		{"explain consume t", "EXPLAIN CONSUME t"},
	})
}

// errorCases pins where each error is reported and what it says. The
// golden files under testdata/lang/errors pin the full text.
var errorCases = []struct {
	src       string
	line, col int
	msg       string // substring of Msg
}{
	{"SHOW TOPICS INTERNAL", 1, 13, "unexpected INTERNAL after a complete SHOW TOPICS statement"},
	{`DESCRIBE TOPIC "a" "b"`, 1, 20, `unexpected "b" after a complete DESCRIBE TOPIC statement`},
	{"SHWO TOPICS", 1, 1, "unknown statement SHWO"},
	{"DROP TABLE x", 1, 6, "Kafka has topics, not tables: write DROP TOPIC"},
	{"SHOW TABLES", 1, 6, "Kafka has topics, not tables: write SHOW TOPICS"},
	{"CONSUME orders FROM", 1, 20, "unexpected end of statement after FROM"},
	{"CONSUME orders FROM YESTERDAY", 1, 21, "unexpected YESTERDAY"},
	{"CONSUME t LIMIT 5 LIMIT 6", 1, 19, "LIMIT given twice"},
	{"CONSUME t SKIP 5 OFFSET 6", 1, 18, "SKIP given twice"},
	{"CONSUME t FROM NEWEST FROM OLDEST", 1, 23, "FROM given twice"},
	{"CONSUME t PARTITION 1 PARTITIONS (2)", 1, 23, "PARTITION given twice"},
	{"CONSUME t PARTITION 99999999999", 1, 21, "partition 99999999999 is out of range"},
	{"CONSUME t PARTITION -1", 1, 21, "partition -1 is out of range"},
	{"CONSUME t PARTITION (0, 1, 0)", 1, 28, "partition 0 listed twice"},
	{"CONSUME t PARTITION (0,two,2)", 1, 24, "unexpected two"},
	{"CONSUME t LIMIT 0", 1, 17, "LIMIT 0 is out of range"},
	{"CONSUME t LIMIT 1000001", 1, 17, "LIMIT 1000001 is out of range"},
	{"CONSUME t SKIP -1", 1, 16, "SKIP -1 is out of range"},
	{"CONSUME t OFFSET 99999999999999999999", 1, 18, "OFFSET 99999999999999999999 is out of range"},
	{"CONSUME t FROM OFFSET -5", 1, 23, "offset -5 is out of range"},
	{"CONSUME t FROM TIMESTAMP -1", 1, 26, "timestamp -1 is out of range"},
	{"CONSUME t FROM TIMESTAMP 'yesterday'", 1, 26, "is not an RFC 3339 timestamp"},
	{"CONSUME t FROM TIMESTAMP '1969-12-31T23:59:59Z'", 1, 26, "before 1970"},
	{"CONSUME t FROM 0s AGO", 1, 16, "duration 0s is not positive"},
	{"CONSUME t FROM -5m AGO", 1, 16, "duration -5m is not positive"},
	{"CONSUME t FROM 5x AGO", 1, 16, "5x is not a duration"},
	{"CONSUME t FROM 15 AGO", 1, 16, "unexpected 15"},
	{"CONSUME t FROM 15m", 1, 19, "unexpected end of statement after 15m"},
	{"CONSUME t FROM TAIL ()", 1, 22, "unexpected ')'"},
	{"CONSUME t FROM TAIL (0:1, 0:2)", 1, 27, "partition 0 listed twice"},
	{"CONSUME t FROM ANCHOR (0:-1)", 1, 26, "offset -1 is out of range"},
	{"CONSUME t FROM ANCHOR (3000000000:1)", 1, 24, "partition 3000000000 is out of range"},
	{"CONSUME from", 1, 13, "unexpected end of statement after from"},
	{"CONSUME ''", 1, 9, "a topic name cannot be empty"},
	{"CONSUME 2024-events", 1, 9, "2024-events is not a valid bare name"},
	{"PRODUCE t PARTITION 1", 1, 22, "PRODUCE needs a KEY or a VALUE"},
	{"PRODUCE t", 1, 10, "PRODUCE needs a KEY or a VALUE"},
	{"PRODUCE t VALUE 'a' VALUE 'b'", 1, 21, "VALUE given twice"},
	{"PRODUCE t KEY 'a' KEY 'b'", 1, 19, "KEY given twice"},
	{"PRODUCE t VALUE 'a' PAYLOAD 'b'", 1, 21, "VALUE given twice"},
	{"PRODUCE t VALUE 'a' PARTITION 1 PARTITION 2", 1, 33, "PARTITION given twice"},
	{"PRODUCE t VALUE hello", 1, 17, "unexpected hello"},
	{"PRODUCE t VALUE 42", 1, 17, "unexpected 42"},
	{`PRODUCE t VALUE "C:\temp\app.log"`, 1, 25, `unknown escape \a`},
	{`PRODUCE t VALUE 'ab`, 1, 17, "unclosed quote"},
	{"PRODUCE t VALUE x'abc'", 1, 17, "even number of hex digits"},
	{"PRODUCE t VALUE x'zz'", 1, 19, "is not a hex digit"},
	{`PRODUCE t VALUE '\x4'`, 1, 18, `bad escape \x`},
	{`PRODUCE t VALUE '\u{D800}'`, 1, 18, `bad escape \u`},
	{`PRODUCE t VALUE '\u{110000}'`, 1, 18, `bad escape \u`},
	{`PRODUCE t VALUE '\u41'`, 1, 18, `bad escape \u`},
	{"PRODUCE t VALUE 'a' HEADER k", 1, 29, "unexpected end of statement after k"},
	{"CREATE TOPIC t PARTITIONS 0", 1, 27, "PARTITIONS 0 is out of range"},
	{"CREATE TOPIC t PARTITIONS 2147483648", 1, 27, "PARTITIONS 2147483648 is out of range"},
	{"CREATE TOPIC t REPLICATION 32768", 1, 28, "REPLICATION 32768 is out of range"},
	{"CREATE TOPIC t PARTITIONS 1 PARTITIONS 2", 1, 29, "PARTITIONS given twice"},
	{"CREATE TOPIC t WITH (a = 'x') WITH (b = 'y')", 1, 31, "WITH given twice"},
	{"CREATE TOPIC t WITH (a = 'x', a = 'y')", 1, 31, "config a given twice"},
	{"CREATE TOPIC t WITH ()", 1, 22, "unexpected ')'"},
	{"CREATE TABLE t", 1, 8, "Kafka has topics, not tables: write CREATE TOPIC"},
	{"CREATE TOPIC t PARTITION 3", 1, 16, "unexpected PARTITION after a complete CREATE TOPIC statement"},
	{"DROP TOPIC", 1, 11, "unexpected end of statement after TOPIC"},
	{"DROP TOPIC IF EXISTS", 1, 21, "unexpected end of statement after EXISTS"},
	{"EXPLAIN EXPLAIN SHOW TOPICS", 1, 9, "EXPLAIN cannot explain an EXPLAIN"},
	{"EXPLAIN", 1, 8, "unexpected end of statement after EXPLAIN"},
	{"", 1, 1, "empty statement"},
	{"-- only a comment", 1, 1, "empty statement"},
	{"SHOW TOPICS; SHOW BROKERS", 1, 12, "unexpected ';'"},
	{"SHOW TOPICS @", 1, 13, "unexpected character '@'"},
	{"DESCRIBE TOPIC zürich", 1, 17, "unexpected character 'ü'"},
	{"SHOW /* never closed", 1, 6, "unclosed comment"},
	{"SHOW TOPICS\nLIKE\n'x' extra", 3, 5, "unexpected extra after a complete SHOW TOPICS statement"},
	{"CONSUME t\n\tLIMIT 'x'", 2, 8, "unexpected 'x'"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range errorCases {
		_, err := Parse(tc.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q): want *Error, got %v", tc.src, err)
			continue
		}
		if e.Line != tc.line || e.Col != tc.col || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("Parse(%q):\n got %d:%d %q\nwant %d:%d %q", tc.src, e.Line, e.Col, e.Msg, tc.line, tc.col, tc.msg)
		}
	}
}

func TestErrorHints(t *testing.T) {
	cases := []struct{ src, hint string }{
		{"SHWO TOPICS", "did you mean SHOW?"},
		{"SELCT * FROM t", "did you mean SELECT?"},
		{"CONSUEM t", "did you mean CONSUME?"},
		{"SHOW TOPIC", "did you mean TOPICS?"},
		{"CONSUME t LIMT 5", "did you mean LIMIT?"},
		{"CONSUME t FROM NEWST", "did you mean NEWEST?"},
		{"CREATE TOPIC t PARTITION 3", "did you mean PARTITIONS?"},
		{"CONSUME t FROM 15 AGO", "a duration needs a unit"},
		{"CONSUME from", `a topic named from must be quoted: CONSUME "from"`},
		{"SELECT * FROM", `a topic named FROM must be quoted: SELECT "FROM"`},
		{"PRODUCE INTO", `a topic named INTO must be quoted: PRODUCE "INTO"`},
		{"SHOW TOPICS LIKE orders", "strings are quoted: 'orders'"},
		{"SHOW 'TOPICS'", "keywords are written without quotes: TOPICS"},
		{"CONSUME 2024", `a name that starts with a digit must be quoted: "2024"`},
		{"CONSUME t LIMIT 5 LIMIT 6", "the first LIMIT is at 1:11"},
		{"CONSUME t SKIP 5 OFFSET 6", "OFFSET is another spelling of SKIP"},
		{`PRODUCE t VALUE "C:\temp\app.log"`, `to write a backslash, double it: \\`},
	}
	for _, tc := range cases {
		_, err := Parse(tc.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q): want *Error, got %v", tc.src, err)
			continue
		}
		if !strings.Contains(e.Hint, tc.hint) {
			t.Errorf("Parse(%q): hint %q, want it to contain %q", tc.src, e.Hint, tc.hint)
		}
	}
}

func TestExpectedLists(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"CONSUME orders FROM", []string{"NEWEST", "OLDEST", "OFFSET", "TIMESTAMP", "TAIL", "ANCHOR", "a duration AGO"}},
		{"FOO", []string{"SHOW", "DESCRIBE", "CONSUME", "PRODUCE", "CREATE", "DROP", "ALTER", "RESET", "DELETE", "ABORT", "EXPLAIN", "GRANT", "DENY", "REVOKE", "CANCEL", "ELECT"}},
		{"SHOW", []string{"TOPICS", "GROUPS", "BROKERS", "CLUSTER", "PARTITIONS", "CONFIGS", "SUBJECTS", "SCHEMAS", "ACLS", "USERS", "QUOTAS", "SHARE", "TRANSACTIONS", "HANGING", "LOG", "REASSIGNMENTS", "QUORUM", "FEATURES"}},
		{"CONSUME t x", []string{"FROM", "KEY", "VALUE", "PARTITION", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "SKIP", "FOLLOW", "end of statement"}},
		{"PRODUCE t VALUE", []string{"SCHEMA", "AS", "a string", "x'hex'", "NULL"}},
		{"PRODUCE t VALUE SCHEMA", []string{"ID", "a subject name"}},
		{"PRODUCE t VALUE 'v' VALUE SCHEMA 's' x", []string{"FROM", "TIMESTAMP", "KEY", "VALUE", "VERSION", "ID", "MESSAGE", "PARTITION", "HEADER", "FORMAT", "KEEP", "end of statement"}},
		{"DESCRIBE SUBJECT", []string{"a subject name"}},
		{"DESCRIBE SUBJECT s x", []string{"VERSION", "WHERE", "ORDER BY", "LIMIT", "end of statement"}},
		{"SHOW SCHEMAS", []string{"FOR"}},
		{"PRODUCE t VALUE 'v' x", []string{"FROM", "TIMESTAMP", "KEY", "VALUE", "PARTITION", "HEADER", "FORMAT", "KEEP", "end of statement"}}, // FROM ... and its options: the import form
		{"CREATE TOPIC t x", []string{"PARTITIONS", "REPLICATION", "WITH", "end of statement"}},
		{"CONSUME t FROM TIMESTAMP", []string{"epoch milliseconds", "an RFC 3339 timestamp in quotes"}},
		{"DESCRIBE GROUP", []string{"a group name"}},
		{"DESCRIBE", []string{"TOPIC", "GROUP", "SUBJECT", "SHARE", "TRANSACTION"}},
		{"CONSUME t FROM TAIL (0", []string{"':'"}},
		{"CONSUME t FROM TAIL (0:1", []string{"','", "')'"}},
		{"CREATE TOPIC t WITH (a =", []string{"a value"}},
		{"CREATE TOPIC t WITH (", []string{"a config name"}},
		{"DROP TOPIC", []string{"IF", "a topic name"}},
	}
	for _, tc := range cases {
		_, err := Parse(tc.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q): want *Error, got %v", tc.src, err)
			continue
		}
		if !reflect.DeepEqual(e.Expected, tc.want) {
			t.Errorf("Parse(%q): expected %q, want %q", tc.src, e.Expected, tc.want)
		}
	}
}

func TestErrorRendering(t *testing.T) {
	_, err := Parse("CONSUME orders FROM YESTERDAY")
	want := "1:21: unexpected YESTERDAY\n" +
		"CONSUME orders FROM YESTERDAY\n" +
		"                    ^^^^^^^^^\n" +
		"expected one of NEWEST, OLDEST, OFFSET, TIMESTAMP, TAIL, ANCHOR or a duration AGO"
	if err == nil || err.Error() != want {
		t.Fatalf("got\n%v\nwant\n%s", err, want)
	}
	// Tabs before the token are copied so the caret lines up in a terminal.
	_, err = Parse("CONSUME t\n\tLIMIT 'x'")
	if !strings.Contains(err.Error(), "\n\tLIMIT 'x'\n\t      ^^^\n") {
		t.Errorf("caret not under the token with a tab:\n%v", err)
	}
}

func TestParseSourcePositions(t *testing.T) {
	script := "SHOW TOPICS; SHOW BROKERS;\n  CONSUME t\n    LIMIT 0;"
	srcs, err := Split(script)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 3 {
		t.Fatalf("got %d statements", len(srcs))
	}
	_, err = ParseSource(srcs[2])
	var e *Error
	if !errors.As(err, &e) || e.Line != 3 || e.Col != 11 {
		t.Fatalf("want error at 3:11, got %v", err)
	}
	// An error on a statement's first line is shifted by its column and
	// the caret still sits under the token.
	_, err = ParseSource(Source{Text: "SHWO x", Line: 4, Col: 14})
	if !errors.As(err, &e) || e.Line != 4 || e.Col != 14 {
		t.Fatalf("want error at 4:14, got %v", err)
	}
	lines := strings.Split(e.Error(), "\n")
	if strings.Index(lines[1], "SHWO") != strings.Index(lines[2], "^") {
		t.Errorf("caret misaligned:\n%s", e.Error())
	}
}

func TestCheckScript(t *testing.T) {
	script := "SHOW TOPICS;\nSHWO BROKERS;\nCONSUME t LIMIT 0; DESCRIBE TOPIC a b;\nSHOW CLUSTER"
	errs := CheckScript(script)
	if len(errs) != 3 {
		t.Fatalf("want 3 errors, got %d: %v", len(errs), errs)
	}
	want := []struct{ line, col int }{{2, 1}, {3, 17}, {3, 37}}
	for i, w := range want {
		e := errs[i].(*Error)
		if e.Line != w.line || e.Col != w.col {
			t.Errorf("error %d at %d:%d, want %d:%d: %v", i, e.Line, e.Col, w.line, w.col, e)
		}
	}
	// The source line is the script's own line, with the statement before it.
	if e := errs[2].(*Error); e.SourceLine != "CONSUME t LIMIT 0; DESCRIBE TOPIC a b;" {
		t.Errorf("source line %q", e.SourceLine)
	}
	if errs := CheckScript("SHOW TOPICS; SHOW 'unclosed"); len(errs) != 1 || !strings.Contains(errs[0].Error(), "1:19: unclosed quote") {
		t.Errorf("unclosed quote: %v", errs)
	}
	if errs := CheckScript("-- nothing\n;;\n"); len(errs) != 0 {
		t.Errorf("empty script: %v", errs)
	}
}

// TestHintPositionsAreScriptPositions: a hint that names where something
// else is ("the first LIMIT is at 1:24") counts lines and columns from the
// start of the script, as the error's own position does, not from the
// start of its statement: after another statement on the same line, and on
// a later, indented line.
func TestHintPositionsAreScriptPositions(t *testing.T) {
	cases := []struct{ script, at, hint string }{
		{"SHOW TOPICS; CONSUME x LIMIT 5 LIMIT 6", "1:32", "the first LIMIT is at 1:24"},
		{"SHOW TOPICS;\n\n  CONSUME x LIMIT 5 LIMIT 6;\n", "3:21", "the first LIMIT is at 3:13"},
		// The first on the statement's second line: its column is the script's.
		{"SHOW TOPICS; CONSUME x\n  LIMIT 5 LIMIT 6", "2:11", "the first LIMIT is at 2:3"},
		// The first on the statement's first line, the repeat on its second.
		{"SHOW TOPICS; CONSUME x LIMIT 5\nLIMIT 6", "2:1", "the first LIMIT is at 1:24"},
		{"SHOW TOPICS; CONSUME x SKIP 5 OFFSET 6", "1:31", "OFFSET is another spelling of SKIP; the first is at 1:24"},
		{"SHOW TOPICS; PRODUCE INTO t FROM STDIN KEEP PARTITION PARTITION BY KEY", "1:55", "KEEP PARTITION is at 1:40; choose one"},
		{"SHOW TOPICS;\n  PRODUCE INTO t FROM STDIN TIMESTAMP NOW KEEP TIMESTAMP", "2:43", "TIMESTAMP NOW is at 2:29; choose one"},
		{"SHOW TOPICS; PRODUCE t VALUE '{}' VALUE SCHEMA 's' VERSION 1 ID 2", "1:62", "the other is at 1:52"},
		// INSERT's options against its SELECT list's columns.
		{"SHOW TOPICS;\nINSERT INTO d KEEP PARTITION SELECT key, value, partition FROM s", "2:49", "KEEP PARTITION is at 2:15; drop it"},
		{"SHOW TOPICS; INSERT INTO d TIMESTAMP NOW SELECT key, timestamp FROM s", "1:54", "TIMESTAMP NOW is at 1:28; drop the timestamp column"},
		{"SHOW TOPICS;\n\n  INSERT INTO d KEEP TIMESTAMP SELECT key, timestamp + 1 AS timestamp FROM s", "3:44", "KEEP TIMESTAMP is at 3:17; drop KEEP TIMESTAMP"},
	}
	for _, tc := range cases {
		errs := CheckScript(tc.script)
		if len(errs) != 1 {
			t.Errorf("CheckScript(%q): want one error, got %v", tc.script, errs)
			continue
		}
		srcs, err := Split(tc.script)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseSource(srcs[len(srcs)-1])
		for _, err := range []error{errs[0], err} {
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("%q: want *Error, got %v", tc.script, err)
				continue
			}
			if got := fmt.Sprintf("%d:%d", e.Line, e.Col); got != tc.at || !strings.Contains(e.Hint, tc.hint) {
				t.Errorf("%q:\n got %s, hint %q\nwant %s, hint containing %q", tc.script, got, e.Hint, tc.at, tc.hint)
			}
		}
	}
	// Parse, of one statement, still counts from the statement.
	if _, err := Parse("CONSUME x LIMIT 5 LIMIT 6"); err == nil || !strings.Contains(err.Error(), "the first LIMIT is at 1:11") {
		t.Errorf("Parse: %v", err)
	}
}

func TestNumberWithSeparators(t *testing.T) {
	_, err := Parse("CONSUME t LIMIT 1_000")
	var e *Error
	if !errors.As(err, &e) || e.Col != 17 || !strings.Contains(e.Msg, "without '_'") || e.Hint != "as in 1000" {
		t.Fatalf("got %v", err)
	}
}
