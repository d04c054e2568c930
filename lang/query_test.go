package lang

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func col(name string, path ...PathStep) *Column { return &Column{Name: name, Path: path} }
func key(k string) PathStep                     { return PathStep{Key: k} }
func idx(i int) PathStep                        { return PathStep{Index: i, IsIndex: true} }
func bytesLit(s string) *BytesLit               { return &BytesLit{V: []byte(s)} }
func bin(op Op, l, r Expr) *Binary              { return &Binary{Op: op, L: l, R: r} }

// queryCases pins the AST of the query grammar: expressions, projections,
// the record clauses and the metadata clauses.
var queryCases = []parseCase{
	// The projection reading wins where a SELECT reads both ways.
	{"SELECT offset FROM newest", &Consume{Topic: "newest", Projection: []SelectItem{{X: col("offset")}}}},
	{"SELECT key FROM OFFSET 5", &Consume{Topic: "key", From: &Start{Kind: FromOffset, Offset: 5}}},
	{"SELECT orders FROM NEWEST", &Consume{Topic: "orders", From: &Start{Kind: FromNewest}}},
	{"SELECT 'my topic' FROM NEWEST", &Consume{Topic: "my topic", From: &Start{Kind: FromNewest}}},
	{"SELECT * FROM orders WHERE key = 'a'", &Consume{Topic: "orders", Where: bin(OpEq, col("key"), bytesLit("a"))}},
	{"SELECT key, value.customer.id AS cid FROM orders", &Consume{Topic: "orders", Projection: []SelectItem{
		{X: col("key")}, {X: col("value", key("customer"), key("id")), As: "cid"}}}},
	{"SELECT count(*) FROM orders", &Consume{Topic: "orders", Projection: []SelectItem{{X: &Call{Name: "count", Star: true}}}}},
	{"SELECT key, COUNT(DISTINCT value.sku) AS n FROM orders GROUP BY key ORDER BY n DESC LIMIT 3", nil},
	{"SELECT key, count(*) AS n FROM orders GROUP BY key ORDER BY n DESC, key LIMIT 3", &Consume{Topic: "orders",
		Projection: []SelectItem{{X: col("key")}, {X: &Call{Name: "count", Star: true}, As: "n"}},
		GroupBy:    []Expr{col("key")},
		OrderBy:    []OrderItem{{X: col("n"), Desc: true, Alias: 2}, {X: col("key")}},
		Limit:      i64(3)}},
	{"SELECT sum(value.total) / count(*) FROM orders", &Consume{Topic: "orders", Projection: []SelectItem{
		{X: bin(OpDiv, &Call{Name: "sum", Args: []Expr{col("value", key("total"))}}, &Call{Name: "count", Star: true})}}}},

	// Expressions: precedence, literals, paths, operators.
	{"CONSUME t WHERE a.b = 1", nil},
	{"CONSUME t WHERE value.items[0].sku = 'x' OR key['odd-name'] IS NOT NULL AND NOT partition = 1",
		&Consume{Topic: "t", Where: bin(OpOr,
			bin(OpEq, col("value", key("items"), idx(0), key("sku")), bytesLit("x")),
			bin(OpAnd, &IsNull{X: col("key", key("odd-name")), Not: true}, &Unary{Op: OpNot, X: bin(OpEq, col("partition"), &IntLit{V: 1})}))}},
	{"CONSUME t WHERE offset + 1 * 2 - -3 % 4 > 0", &Consume{Topic: "t", Where: bin(OpGt,
		bin(OpSub, bin(OpAdd, col("offset"), bin(OpMul, &IntLit{V: 1}, &IntLit{V: 2})), bin(OpMod, &IntLit{V: -3}, &IntLit{V: 4})),
		&IntLit{V: 0})}},
	{"CONSUME t WHERE offset -1 > 0", &Consume{Topic: "t", Where: bin(OpGt, bin(OpSub, col("offset"), &IntLit{V: 1}), &IntLit{V: 0})}},
	{"CONSUME t WHERE -offset < -1.5", &Consume{Topic: "t", Where: bin(OpLt, &Unary{Op: OpNeg, X: col("offset")}, &FloatLit{V: -1.5})}},
	{"CONSUME t WHERE (offset + 1) * 2 <> 4", &Consume{Topic: "t", Where: bin(OpNe,
		bin(OpMul, bin(OpAdd, col("offset"), &IntLit{V: 1}), &IntLit{V: 2}), &IntLit{V: 4})}},
	{"CONSUME t WHERE (a = 1) = TRUE", nil},
	{"CONSUME t WHERE (key = 'a') = TRUE", &Consume{Topic: "t", Where: bin(OpEq, bin(OpEq, col("key"), bytesLit("a")), &BoolLit{V: true})}},
	{"CONSUME t WHERE key LIKE 'c-%' AND key NOT ILIKE 'X\\\\_%'", &Consume{Topic: "t", Where: bin(OpAnd,
		&Like{X: col("key"), Pattern: "c-%"}, &Like{X: col("key"), Pattern: `X\_%`, Not: true, CaseInsensitive: true})}},
	{"CONSUME t WHERE value ~ '^a+$' AND key !~ 'b'", &Consume{Topic: "t", Where: bin(OpAnd,
		&Regex{X: col("value"), Pattern: "^a+$"}, &Regex{X: col("key"), Pattern: "b", Not: true})}},
	{"CONSUME t WHERE partition NOT IN (0, 1 + 1) AND offset NOT BETWEEN 1 AND 9", &Consume{Topic: "t", Where: bin(OpAnd,
		&In{X: col("partition"), List: []Expr{&IntLit{V: 0}, bin(OpAdd, &IntLit{V: 1}, &IntLit{V: 1})}, Not: true},
		&Between{X: col("offset"), Lo: &IntLit{V: 1}, Hi: &IntLit{V: 9}, Not: true})}},
	{"CONSUME t WHERE timestamp BETWEEN TIMESTAMP '2026-01-02T03:04:05Z' AND 15m AGO", &Consume{Topic: "t", Where: &Between{
		X: col("timestamp"), Lo: &TimeLit{Ms: 1767323045000}, Hi: &AgoLit{Ago: 15 * time.Minute}}}},
	{"CONSUME t WHERE timestamp >= 1700000000000 AND timestamp < TIMESTAMP 1800000000000", &Consume{Topic: "t", Where: bin(OpAnd,
		bin(OpGe, col("timestamp"), &IntLit{V: 1700000000000}), bin(OpLt, col("timestamp"), &TimeLit{Ms: 1800000000000}))}},
	{"CONSUME t WHERE key = x'00ff' OR key = 'it''s' OR key = \"a\"\"b\" OR key IS NULL OR value = NULL OR FALSE",
		&Consume{Topic: "t", Where: bin(OpOr, bin(OpOr, bin(OpOr, bin(OpOr, bin(OpOr,
			bin(OpEq, col("key"), &BytesLit{V: []byte{0, 0xff}}), bin(OpEq, col("key"), bytesLit("it's"))),
			bin(OpEq, col("key"), bytesLit(`a"b`))), &IsNull{X: col("key")}), bin(OpEq, col("value"), &NullLit{})), &BoolLit{})}},
	{"CONSUME t WHERE length(value) > 2 AND lower(key) = upper(key) AND coalesce(key, value, 'x') = header(trace-id) AND header('a b') IS NULL",
		&Consume{Topic: "t", Where: bin(OpAnd, bin(OpAnd, bin(OpAnd,
			bin(OpGt, &Call{Name: "length", Args: []Expr{col("value")}}, &IntLit{V: 2}),
			bin(OpEq, &Call{Name: "lower", Args: []Expr{col("key")}}, &Call{Name: "upper", Args: []Expr{col("key")}})),
			bin(OpEq, &Call{Name: "coalesce", Args: []Expr{col("key"), col("value"), bytesLit("x")}}, &Call{Name: "header", Args: []Expr{bytesLit("trace-id")}})),
			&IsNull{X: &Call{Name: "header", Args: []Expr{bytesLit("a b")}}})}},
	{"CONSUME t WHERE VALUE.Customer = 1", &Consume{Topic: "t", Where: bin(OpEq, col("value", key("Customer")), &IntLit{V: 1})}},
	{"SELECT value_schema_id, value FROM t WHERE value_schema_id = 3", &Consume{Topic: "t",
		Projection: []SelectItem{{X: col("value_schema_id")}, {X: col("value")}}, Where: bin(OpEq, col("value_schema_id"), &IntLit{V: 3})}},
	{"SELECT KEY_SCHEMA_ID AS k, count(*) FROM t GROUP BY key_schema_id", &Consume{Topic: "t",
		Projection: []SelectItem{{X: col("key_schema_id"), As: "k"}, {X: &Call{Name: "count", Star: true}}}, GroupBy: []Expr{col("key_schema_id")}}},
	{"CONSUME t WHERE key_schema_id IS NULL AND value_schema_id IN (1, 2)", &Consume{Topic: "t", Where: bin(OpAnd,
		&IsNull{X: col("key_schema_id")}, &In{X: col("value_schema_id"), List: []Expr{&IntLit{V: 1}, &IntLit{V: 2}}})}},

	// Record clauses.
	{"CONSUME t PARTITION FOR KEY 'c-1'", &Consume{Topic: "t", PartitionForKey: []byte("c-1")}},
	{"CONSUME t PARTITION FOR KEY x''", &Consume{Topic: "t", PartitionForKey: []byte{}}},
	{"CONSUME t LIMIT ALL", &Consume{Topic: "t", LimitAll: true}},
	{"CONSUME t FOLLOW", &Consume{Topic: "t", Follow: true}},
	{"CONSUME t FROM NEWEST LIMIT 20 FOLLOW", &Consume{Topic: "t", From: &Start{Kind: FromNewest}, Limit: i64(20), Follow: true}},
	{"CONSUME t FROM OLDEST FOLLOW WHERE key = 'a'", &Consume{Topic: "t", From: &Start{Kind: FromOldest}, Follow: true,
		Where: bin(OpEq, col("key"), bytesLit("a"))}},
	{"CONSUME t ORDER BY value.total DESC, offset ASC LIMIT 5", &Consume{Topic: "t",
		OrderBy: []OrderItem{{X: col("value", key("total")), Desc: true}, {X: col("offset")}}, Limit: i64(5)}},
	{"CONSUME t WHERE key = 'a' LIMIT 5 FROM NEWEST PARTITION (0, 1)", &Consume{Topic: "t", From: &Start{Kind: FromNewest},
		Partitions: []int32{0, 1}, Limit: i64(5), Where: bin(OpEq, col("key"), bytesLit("a"))}},

	// Metadata clauses.
	{"SHOW GROUPS WHERE lag > 1000 ORDER BY lag DESC LIMIT 10", &ShowGroups{Query: Query{
		Where: bin(OpGt, col("lag"), &IntLit{V: 1000}), OrderBy: []OrderItem{{X: col("lag"), Desc: true}}, Limit: i64(10)}}},
	{"SHOW TOPICS LIKE 'ord%' WHERE under_replicated > 0 OR offline > 0", &ShowTopics{Like: str("ord%"), Query: Query{
		Where: bin(OpOr, bin(OpGt, col("under_replicated"), &IntLit{V: 0}), bin(OpGt, col("offline"), &IntLit{V: 0}))}}},
	{"SHOW CONSUMERS LIKE 'b*' LIMIT 1", &ShowGroups{Like: str("b*"), Query: Query{Limit: i64(1)}}},
	{"DESCRIBE GROUP billing WHERE lag > 0 ORDER BY lag DESC", &DescribeGroup{Group: "billing", Query: Query{
		Where: bin(OpGt, col("lag"), &IntLit{V: 0}), OrderBy: []OrderItem{{X: col("lag"), Desc: true}}}}},
	{"DESC TOPIC orders ORDER BY messages DESC LIMIT 2 WHERE leader = 1", &DescribeTopic{Topic: "orders", Query: Query{
		Where: bin(OpEq, col("leader"), &IntLit{V: 1}), OrderBy: []OrderItem{{X: col("messages"), Desc: true}}, Limit: i64(2)}}},
	{"SHOW PARTITIONS", &ShowPartitions{}},
	{"SHOW PARTITIONS WHERE in_sync_replicas < replicas", &ShowPartitions{Query: Query{Where: bin(OpLt, col("in_sync_replicas"), col("replicas"))}}},
	{"SHOW PARTITIONS OF orders LIKE 'x' ORDER BY partition", &ShowPartitions{Topic: str("orders"), Like: str("x"),
		Query: Query{OrderBy: []OrderItem{{X: col("partition")}}}}},
	{"SHOW BROKERS WHERE rack IS NULL", &ShowBrokers{Query: Query{Where: &IsNull{X: col("rack")}}}},
	{"SHOW CLUSTER WHERE property = 'brokers'", &ShowCluster{Query: Query{Where: bin(OpEq, col("property"), bytesLit("brokers"))}}},
	{"SHOW GROUPS WHERE group = 'billing' AND state IN ('Stable', 'Empty')", nil},
	{"EXPLAIN SELECT key FROM t WHERE key = 'x'", &Explain{Stmt: &Consume{Topic: "t", Projection: []SelectItem{{X: col("key")}},
		Where: bin(OpEq, col("key"), bytesLit("x"))}}},
}

func TestParseQuery(t *testing.T) {
	for _, tc := range queryCases {
		got, err := Parse(tc.src)
		if tc.want == nil { // a case for the round trip and fuzz seeds only; must parse unless it names an unknown column
			if err != nil && !strings.Contains(err.Error(), "unknown column") {
				t.Errorf("Parse(%q): %v", tc.src, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q)\n got %s\nwant %s", tc.src, Format(got), Format(tc.want))
		}
		text := Format(got)
		again, err := Parse(text)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(Format(%q)) = Parse(%q): %v", tc.src, text, err)
		}
	}
}

func TestFormatQueryCanonical(t *testing.T) {
	checkFormats(t, []formatCase{
		{"select offset from newest", `SELECT offset FROM "newest"`},
		{"consume t where (value.b = 1 or key = 'x') and not (partition = 1)", "CONSUME t WHERE (value.b = 1 OR key = 'x') AND NOT partition = 1"},
		{"consume t where offset - (1 - 2) > 0", "CONSUME t WHERE offset - (1 - 2) > 0"},
		{"consume t where - - offset > 0", "CONSUME t WHERE - -offset > 0"},
		{"consume t where key <> 'a'", "CONSUME t WHERE key != 'a'"},
		{"consume t where value['a'].b[2]['c d'] = 1", "CONSUME t WHERE value.a.b[2]['c d'] = 1"},
		{"consume t where 1.50 < 2", "CONSUME t WHERE 1.5 < 2"},
		{"consume t where timestamp > time '2023-11-14T22:13:20Z'", "CONSUME t WHERE timestamp > TIMESTAMP 1700000000000"},
		{"consume t where timestamp > 90m ago", "CONSUME t WHERE timestamp > 1h30m AGO"},
		{"show groups where lag > 1 order by lag desc limit 5", "SHOW GROUPS WHERE lag > 1 ORDER BY lag DESC LIMIT 5"},
		{"select key as k, count(*) from t group by key", "SELECT key AS k, count(*) FROM t GROUP BY key"},
	})
}

func TestQueryErrors(t *testing.T) {
	cases := []struct {
		src       string
		line, col int
		msg       string
	}{
		{"CONSUME t WHERE", 1, 16, "unexpected end of statement after WHERE"},
		{"CONSUME t WHERE valeu = 1", 1, 17, "unknown column valeu"},
		{"CONSUME t WHERE key ~ '(('", 1, 23, "bad regular expression"},
		{"CONSUME t WHERE key LIKE 5", 1, 26, "unexpected 5"},
		{"CONSUME t WHERE key LIKE 'a\\\\'", 1, 26, "escapes nothing"},
		{"CONSUME t WHERE a = b = c", 1, 23, "unexpected '='"},
		{"CONSUME t WHERE key IN ()", 1, 25, "unexpected ')'"},
		{"CONSUME t WHERE offset BETWEEN 1 OR 2", 1, 34, "unexpected OR"},
		{"CONSUME t WHERE key IS 5", 1, 24, "unexpected 5"},
		{"CONSUME t WHERE foo(key) = 1", 1, 17, "unknown function foo"},
		{"CONSUME t WHERE lower(key, value) = 1", 1, 17, "lower takes 1 argument, not 2"},
		{"CONSUME t WHERE coalesce() = 1", 1, 17, "coalesce takes at least 1 argument, not 0"},
		{"CONSUME t WHERE header(1) = 1", 1, 24, "header takes the header's name"},
		{"CONSUME t WHERE count(*) > 1", 1, 17, "aggregate count is not allowed in WHERE"},
		{"CONSUME t WHERE sum(*) > 1", 1, 17, "not allowed"},
		{"SELECT sum(*) FROM t", 1, 8, "sum(*) is not a function"},
		{"SELECT max(DISTINCT key) FROM t", 1, 8, "DISTINCT is only for count"},
		{"SELECT count(max(key)) FROM t", 1, 14, "aggregate max inside another aggregate"},
		{"SELECT value FROM t GROUP BY key", 1, 8, "value is neither in GROUP BY nor inside an aggregate"},
		{"SELECT key, count(*) FROM t GROUP BY key ORDER BY value", 1, 51, "ORDER BY value: it is neither in GROUP BY"},
		{"CONSUME t GROUP BY key", 1, 11, "GROUP BY needs a SELECT list"},
		{"CONSUME t ORDER BY offset LIMIT ALL", 1, 27, "ORDER BY with LIMIT ALL"},
		{"CONSUME t FROM OLDEST LIMIT 5 FOLLOW", 1, 23, "a forward read with FOLLOW has no LIMIT"},
		{"CONSUME t FOLLOW LIMIT ALL", 1, 18, "FOLLOW with LIMIT ALL"},
		{"CONSUME t ORDER BY offset FOLLOW", 1, 27, "FOLLOW cannot be used with ORDER BY"},
		{"SELECT count(*) FROM t FOLLOW", 1, 24, "FOLLOW cannot be used with aggregates"},
		{"CONSUME t FOLLOW FOLLOW", 1, 18, "FOLLOW given twice"},
		{"CONSUME t WHERE key = 'a' WHERE key = 'b'", 1, 27, "WHERE given twice"},
		{"CONSUME t PARTITION 1 PARTITION FOR KEY 'a'", 1, 23, "PARTITION given twice"},
		{"CONSUME t PARTITION FOR KEY NULL", 1, 29, "a null key has no partition"},
		{"CONSUME t WHERE headers.a = 1", 1, 17, "headers has no JSON path"},
		{"CONSUME t WHERE value. = 1", 1, 17, "empty step in the JSON path"},
		{"CONSUME t WHERE value[-1] = 1", 1, 23, "array index -1 is out of range"},
		{"CONSUME t WHERE timestamp > TIMESTAMP 'noon'", 1, 39, "is not an RFC 3339 timestamp"},
		{"CONSUME t WHERE timestamp > 0s AGO", 1, 29, "duration 0s is not positive"},
		{"CONSUME t WHERE offset > 5x", 1, 26, "5x is not a number"},
		{"CONSUME t WHERE offset > 99999999999999999999", 1, 26, "out of range"},
		{"CONSUME t WHERE offset-1 > 0", 1, 17, "unknown column offset-1"},
		{"CONSUME t WHERE key ! 'a'", 1, 21, "unexpected character '!'"},
		{"SHOW TOPICS WHERE lag > 1", 1, 19, "unknown column lag"},
		{"SHOW GROUPS WHERE count(*) > 1", 1, 19, "aggregate count is not allowed"},
		{"SHOW GROUPS WHERE value.x = 1", 1, 19, "unknown column value"},
		{"DESCRIBE TOPIC t LIMIT 0", 1, 24, "LIMIT 0 is out of range"},
		{"DESCRIBE TOPIC t LIMIT ALL", 1, 24, "unexpected ALL"},
		{"SHOW TOPICS WHERE topic = 'a' LIKE 'x'", 1, 31, "unexpected LIKE"},
		{"SHOW PARTITIONS OF", 1, 19, "unexpected end of statement after OF"},
		{"SELECT value.x + FROM t", 1, 18, "unexpected FROM"},
		{"SELECT valeu FROM t", 1, 8, "unknown column valeu"},
		{"SELECT key AS '' FROM t", 1, 15, "a column name cannot be empty"},
		{"SELECT *, key FROM t", 1, 9, "unexpected ','"},
	}
	for _, tc := range cases {
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

func TestQueryExpectedLists(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"CONSUME t WHERE", []string{"an expression"}},
		{"CONSUME t WHERE key x", []string{"FROM", "KEY", "VALUE", "PARTITION", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "SKIP", "FOLLOW", "an operator", "end of statement"}},
		{"SHOW GROUPS WHERE lag > 1 x", []string{"WHERE", "ORDER BY", "LIMIT", "an operator", "end of statement"}},
		{"CONSUME t ORDER BY key x", []string{"FROM", "KEY", "VALUE", "PARTITION", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "SKIP", "FOLLOW", "ASC", "DESC", "an operator", "','", "end of statement"}},
		{"CONSUME t WHERE key NOT", []string{"LIKE", "IN", "ILIKE", "BETWEEN"}},
		{"CONSUME t WHERE key LIKE", []string{"a quoted pattern"}},
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
