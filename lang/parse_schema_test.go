package lang

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// schemaParseCases pins the AST of the Schema Registry statements and of
// PRODUCE's SCHEMA clauses.
var schemaParseCases = []parseCase{
	{"SHOW SUBJECTS", &ShowSubjects{}},
	{"show subjects like 'payments*'", &ShowSubjects{Like: str("payments*")}},
	{"SHOW SUBJECTS LIKE 'pay%' WHERE type = 'AVRO' AND latest_version > 1 ORDER BY subject LIMIT 5", &ShowSubjects{
		Like: str("pay%"), Query: Query{
			Where:   bin(OpAnd, bin(OpEq, col("type"), bytesLit("AVRO")), bin(OpGt, col("latest_version"), &IntLit{V: 1})),
			OrderBy: []OrderItem{{X: col("subject")}}, Limit: i64(5)}}},
	{"SHOW SUBJECTS WHERE compatibility IS NULL AND latest_id = 3", &ShowSubjects{Query: Query{
		Where: bin(OpAnd, &IsNull{X: col("compatibility")}, bin(OpEq, col("latest_id"), &IntLit{V: 3}))}}},

	{"DESCRIBE SUBJECT 'payments-value'", &DescribeSubject{Subject: "payments-value"}},
	{"DESCRIBE SUBJECT payments-value", &DescribeSubject{Subject: "payments-value"}},
	{"DESC SUBJECT com.acme.Payment VERSION 3", &DescribeSubject{Subject: "com.acme.Payment", Version: 3}},
	{`describe subject "orders-key" version 2147483647`, &DescribeSubject{Subject: "orders-key", Version: 2147483647}},
	{"DESCRIBE SUBJECT version VERSION 1", &DescribeSubject{Subject: "version", Version: 1}},
	{"DESCRIBE SUBJECT 'a b' WHERE id > 10 ORDER BY version DESC LIMIT 1", &DescribeSubject{Subject: "a b", Query: Query{
		Where: bin(OpGt, col("id"), &IntLit{V: 10}), OrderBy: []OrderItem{{X: col("version"), Desc: true}}, Limit: i64(1)}}},
	{"DESCRIBE SUBJECT s VERSION 2 WHERE references IS NOT NULL", &DescribeSubject{Subject: "s", Version: 2, Query: Query{
		Where: &IsNull{X: col("references"), Not: true}}}},

	{"SHOW SCHEMAS FOR TOPIC payments", &ShowSchemas{Topic: "payments"}},
	{"show schemas for topic `2024-events` where side = 'value'", &ShowSchemas{Topic: "2024-events", Query: Query{
		Where: bin(OpEq, col("side"), bytesLit("value"))}}},
	{"SHOW SCHEMAS FOR TOPIC t ORDER BY latest_id DESC", &ShowSchemas{Topic: "t", Query: Query{
		OrderBy: []OrderItem{{X: col("latest_id"), Desc: true}}}}},

	{`PRODUCE INTO payments KEY '"k1"' VALUE '{"id": 1, "amount": 9.5}' VALUE SCHEMA 'payments-value'`, &Produce{
		Topic: "payments", Key: lit(`"k1"`), Value: lit(`{"id": 1, "amount": 9.5}`),
		ValueSchema: &SchemaRef{Subject: "payments-value"}}},
	{`PRODUCE payments VALUE SCHEMA 'payments-value' VERSION 2 VALUE '{}'`, &Produce{
		Topic: "payments", Value: lit("{}"), ValueSchema: &SchemaRef{Subject: "payments-value", Version: 2}}},
	{`PRODUCE payments VALUE '{}' VALUE SCHEMA ID 42`, &Produce{
		Topic: "payments", Value: lit("{}"), ValueSchema: &SchemaRef{ID: 42, HasID: true}}},
	{`PRODUCE payments VALUE '{}' value schema id 42 partition 1`, &Produce{
		Topic: "payments", Value: lit("{}"), Partition: i32(1), ValueSchema: &SchemaRef{ID: 42, HasID: true}}},
	{`PRODUCE payments VALUE '{}' VALUE SCHEMA payments-value ID 7`, &Produce{
		Topic: "payments", Value: lit("{}"), ValueSchema: &SchemaRef{Subject: "payments-value", ID: 7, HasID: true}}},
	{`PRODUCE payments VALUE '{}' VALUE SCHEMA "id"`, &Produce{
		Topic: "payments", Value: lit("{}"), ValueSchema: &SchemaRef{Subject: "id"}}},
	{`PRODUCE payments KEY SCHEMA 'payments-key' KEY '"k"' HEADER h 'v' PAYLOAD x'00' PAYLOAD SCHEMA com.acme.Payment`, &Produce{
		Topic: "payments", Key: lit(`"k"`), Value: &Literal{Bytes: []byte{0}},
		Headers:     []Header{{"h", Literal{Bytes: []byte("v")}}},
		KeySchema:   &SchemaRef{Subject: "payments-key"},
		ValueSchema: &SchemaRef{Subject: "com.acme.Payment"}}},
	{`PRODUCE shipments VALUE '{}' VALUE SCHEMA 'shipments-value' VERSION 3 MESSAGE com.acme.Shipment.Leg`, &Produce{
		Topic: "shipments", Value: lit("{}"), ValueSchema: &SchemaRef{Subject: "shipments-value", Version: 3, Message: "com.acme.Shipment.Leg"}}},
	{`PRODUCE shipments VALUE '{}' VALUE SCHEMA ID 4 message 'Leg'`, &Produce{
		Topic: "shipments", Value: lit("{}"), ValueSchema: &SchemaRef{ID: 4, HasID: true, Message: "Leg"}}},
	{`PRODUCE payments KEY '1' KEY SCHEMA ID 1 VALUE NULL`, &Produce{
		Topic: "payments", Key: lit("1"), Value: nullLit, KeySchema: &SchemaRef{ID: 1, HasID: true}}},

	{"EXPLAIN SHOW SUBJECTS", &Explain{Stmt: &ShowSubjects{}}},
}

func TestParseSchema(t *testing.T) { checkParses(t, schemaParseCases, true) }

func TestFormatSchemaCanonical(t *testing.T) {
	checkFormats(t, []formatCase{
		{"show subjects like 'p*'", "SHOW SUBJECTS LIKE 'p*'"},
		{"desc subject payments-value version 2", "DESCRIBE SUBJECT 'payments-value' VERSION 2"},
		{"describe subject \"it's\"", `DESCRIBE SUBJECT 'it\'s'`},
		{"show schemas for topic from", `SHOW SCHEMAS FOR TOPIC "from"`},
		{"produce p value schema s value '{}' key schema id 3 key '1'", "PRODUCE INTO p KEY '1' VALUE '{}' KEY SCHEMA ID 3 VALUE SCHEMA 's'"},
		{"produce p payload '{}' payload schema 's' id 9", "PRODUCE INTO p VALUE '{}' VALUE SCHEMA 's' ID 9"},
		{"produce p value '{}' value schema s message 'com.acme.Order' version 2", "PRODUCE INTO p VALUE '{}' VALUE SCHEMA 's' VERSION 2 MESSAGE com.acme.Order"},
		{"produce p value '{}' value schema s message 'from'", `PRODUCE INTO p VALUE '{}' VALUE SCHEMA 's' MESSAGE "from"`},
	})
}

// TestParseSchemaErrors pins where each mistake is reported, what it says
// and its hint (a substring of each).
func TestParseSchemaErrors(t *testing.T) {
	cases := []hintCase{
		{"PRODUCE t VALUE '{}' VALUE SCHEMA", "1:34: unexpected end of statement after SCHEMA", "'orders-value'"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA ''", "1:35: a subject name cannot be empty", ""},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA VERSION 3", "1:43: unexpected 3", "VERSION was read as the subject's name"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' VERSION", "1:46: unexpected end of statement after VERSION", ""},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' VERSION latest", "1:47: unexpected latest", "without VERSION the latest version is used"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' VERSION", "1:46: unexpected end of statement after VERSION", "VERSION takes a version number"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA ID 42 'payments-value'", "1:41: unexpected 'payments-value' after a complete PRODUCE statement",
			"the subject comes right after SCHEMA: VALUE SCHEMA 'payments-value' ID 42"},
		{"PRODUCE t KEY '1' KEY SCHEMA ID 42 payments-key", "1:36: unexpected payments-key after a complete PRODUCE statement",
			"the subject comes right after SCHEMA: KEY SCHEMA payments-key ID 42"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' VERSION 0", "1:47: VERSION 0 is out of range: a version is 1 to 2147483647", ""},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA ID 0", "1:38: schema id 0 is out of range: a schema id is 1 to 2147483647", ""},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' ID 2147483648", "1:42: schema id 2147483648 is out of range", ""},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' VERSION 1 ID 2", "1:49: SCHEMA takes VERSION or ID, not both", "the other is at 1:39"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA ID 2 VERSION 1", "1:40: SCHEMA takes VERSION or ID, not both", "the other is at 1:35"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' VERSION 1 VERSION 2", "1:49: VERSION given twice", "the first VERSION is at 1:39"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA ID 1 ID 2", "1:40: ID given twice", "the first ID is at 1:35"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' MESSAGE a MESSAGE b", "1:49: MESSAGE given twice", "the first MESSAGE is at 1:39"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' MESSAGE ''", "1:47: a message name cannot be empty", ""},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 'a' VALUE SCHEMA 'b'", "1:39: VALUE SCHEMA given twice", "the first VALUE SCHEMA is at 1:22"},
		{"PRODUCE t VALUE '{}' VALUE SCHEMA 'a' PAYLOAD SCHEMA 'b'", "1:39: VALUE SCHEMA given twice", "PAYLOAD SCHEMA is another spelling of VALUE SCHEMA"},
		{"PRODUCE t VALUE '{}' KEY SCHEMA 't-key'", "1:22: KEY SCHEMA without a KEY: there is no key to encode", `KEY '"k1"' KEY SCHEMA 't-key'`},
		{"PRODUCE t KEY 'k' VALUE SCHEMA ID 4", "1:19: VALUE SCHEMA without a VALUE", `VALUE '{"id": 1}' VALUE SCHEMA ID 4`},
		{"PRODUCE t VALUE SCHEMA 's'", "1:11: VALUE SCHEMA without a VALUE", ""},
		{"PRODUCE t KEY NULL KEY SCHEMA 's' VALUE '{}'", "1:20: KEY NULL is not encoded, so it takes no KEY SCHEMA", "drop KEY SCHEMA"},
		{"PRODUCE t KEY 'k' VALUE NULL VALUE SCHEMA 's'", "1:30: VALUE NULL is not encoded, so it takes no VALUE SCHEMA", "tombstone"},
		{"PRODUCE t VALUE '{}' SCHEMA 's'", "1:22: unexpected SCHEMA after a complete PRODUCE statement", ""},

		{"DESCRIBE SUBJECT", "1:17: unexpected end of statement after SUBJECT", "'orders-value'"},
		{"DESCRIBE SUBJECT ''", "1:18: a subject name cannot be empty", ""},
		{"DESCRIBE SUBJECT VERSION 2", "1:26: unexpected 2", "DESCRIBE SUBJECT 'orders-value' VERSION 2"},
		{"DESCRIBE SUBJECT s VERSION", "1:27: unexpected end of statement after VERSION", ""},
		{"DESCRIBE SUBJECT s VERSION -1", "1:28: VERSION -1 is out of range", ""},
		{"DESCRIBE SUBJECT s LIMIT 1 VERSION 2", "1:28: unexpected VERSION after a complete DESCRIBE SUBJECT statement", ""},
		{"DESCRIBE SUBJECT s WHERE lag > 0", "1:26: unknown column lag", "the columns of DESCRIBE SUBJECT are version, id, type, schema, references"},
		{"DESCRIBE TOPIC t VERSION 2", "1:18: unexpected VERSION after a complete DESCRIBE TOPIC statement", ""},
		{"DESCRIBE SUBJECT s ORDER BY version x", "1:37: unexpected x after a complete DESCRIBE SUBJECT statement", ""},
		{"DESCRIBE SUBJECTS s", "1:10: unexpected SUBJECTS", "did you mean SUBJECT?"},

		{"SHOW SCHEMAS", "1:13: unexpected end of statement after SCHEMAS", "SHOW SCHEMAS FOR TOPIC name shows the subjects"},
		{"SHOW SCHEMAS payments", "1:14: unexpected payments", "SHOW SCHEMAS FOR TOPIC payments"},
		{"SHOW SCHEMAS FOR payments", "1:18: unexpected payments", "SHOW SCHEMAS FOR TOPIC payments"},
		{"EXPLAIN SHOW SCHEMAS FOR 'my topic'", "1:26: unexpected 'my topic'", "SHOW SCHEMAS FOR TOPIC 'my topic'"},
		{"SHOW SCHEMAS FOR TOPIC", "1:23: unexpected end of statement after TOPIC", ""},
		{"SHOW SCHEMAS FOR TOPIC t LIKE 'x'", "1:26: unexpected LIKE after a complete SHOW SCHEMAS statement", ""},
		{"SHOW SCHEMAS FRO TOPIC t", "1:14: unexpected FRO", "did you mean FOR?"},
		{"CONSUME version LIMT 5", "1:17: unexpected LIMT", "did you mean LIMIT?"},
		{"DESCRIBE TOPIC version x", "1:24: unexpected x after a complete DESCRIBE TOPIC statement", ""},
		{"SHOW SCHEMA FOR TOPIC t", "1:6: unexpected SCHEMA", "did you mean SCHEMAS?"},
		{"SHOW SUBJECT", "1:6: unexpected SUBJECT", "did you mean SUBJECTS?"},
		{"SHOW SUBJECTS WHERE subjekt = 'x'", "1:21: unknown column subjekt", "the columns of SHOW SUBJECTS are subject, type, latest_version, latest_id, compatibility"},
		{"SHOW SUBJECTS LIKE payments", "1:20: unexpected payments", "strings are quoted: 'payments'"},
	}
	checkHints(t, cases)
}

// After MESSAGE the parser expects a message name, and says so.
func TestMessageExpectsAMessageName(t *testing.T) {
	for _, src := range []string{"PRODUCE t VALUE '{}' VALUE SCHEMA 's' MESSAGE", "PRODUCE t VALUE '{}' VALUE SCHEMA 's' MESSAGE 9"} {
		_, err := Parse(src)
		var e *Error
		if !errors.As(err, &e) || !reflect.DeepEqual(e.Expected, []string{"a message name"}) {
			t.Errorf("Parse(%q): want a syntax error expecting a message name, got %#v", src, err)
		}
	}
}

func TestSchemaMetaColumns(t *testing.T) {
	for src, want := range map[string]string{
		"SHOW SUBJECTS":                         "subject type latest_version latest_id compatibility",
		"DESCRIBE SUBJECT s":                    "version id type schema references",
		"SHOW SCHEMAS FOR TOPIC t":              "side subject latest_version latest_id type",
		"PRODUCE t VALUE SCHEMA ID 1 VALUE '1'": "",
	} {
		st, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(MetaColumns(st), " "); got != want {
			t.Errorf("MetaColumns(%s) = %q, want %q", src, got, want)
		}
	}
}
