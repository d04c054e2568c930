package eval

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// where parses "CONSUME t WHERE src" and returns the predicate.
func where(t testing.TB, src string) lang.Expr {
	t.Helper()
	st, err := lang.Parse("CONSUME t WHERE " + src)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return st.(*lang.Consume).Where
}

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// evalOn compiles src and evaluates it on r.
func evalOn(t testing.TB, src string, r *result.Record) (Value, *Compiler) {
	t.Helper()
	c := NewRecordCompiler(Options{Now: now})
	x, err := c.Compile(where(t, src))
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	c.SetRecord(r)
	return x.Eval(), c
}

func show(v Value) string {
	switch v.K {
	case Null:
		return "NULL"
	case Bool:
		if v.I != 0 {
			return "TRUE"
		}
		return "FALSE"
	case Int:
		return fmt.Sprint(v.I)
	case Float:
		return fmt.Sprint(v.F)
	case Time:
		return "time:" + fmt.Sprint(v.I)
	case Bytes:
		return "'" + string(v.B) + "'"
	}
	return v.K.String()
}

var rec = &result.Record{
	Partition: 3, Offset: 1042, Timestamp: now.Add(-time.Hour).UnixMilli(),
	Key:   []byte("c-0042"),
	Value: []byte(`{"customer":{"id":"c-0042","vip":true},"total":120.5,"qty":3,"items":[{"sku":"a-1"},{"sku":"b-2"}],"odd-name":"x","esc":"a\"b","none":null,"big":12345678901234567890}`),
	Headers: []result.Header{{Key: "source", Value: []byte("web")}, {Key: "retry", Value: nil},
		{Key: "source", Value: []byte("kql")}},
}

// TestThreeValuedLogic is SQL's truth tables for AND, OR, NOT, comparisons
// with NULL, IN, BETWEEN and IS NULL. WHERE keeps a row only when TRUE.
func TestThreeValuedLogic(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"TRUE AND TRUE", "TRUE"}, {"TRUE AND FALSE", "FALSE"}, {"TRUE AND NULL", "NULL"},
		{"FALSE AND TRUE", "FALSE"}, {"FALSE AND FALSE", "FALSE"}, {"FALSE AND NULL", "FALSE"},
		{"NULL AND TRUE", "NULL"}, {"NULL AND FALSE", "FALSE"}, {"NULL AND NULL", "NULL"},
		{"TRUE OR TRUE", "TRUE"}, {"TRUE OR FALSE", "TRUE"}, {"TRUE OR NULL", "TRUE"},
		{"FALSE OR TRUE", "TRUE"}, {"FALSE OR FALSE", "FALSE"}, {"FALSE OR NULL", "NULL"},
		{"NULL OR TRUE", "TRUE"}, {"NULL OR FALSE", "NULL"}, {"NULL OR NULL", "NULL"},
		{"NOT TRUE", "FALSE"}, {"NOT FALSE", "TRUE"}, {"NOT NULL", "NULL"},
		{"NULL = NULL", "NULL"}, {"1 = NULL", "NULL"}, {"NULL != 1", "NULL"}, {"NULL < 1", "NULL"},
		{"NOT (NULL = 1)", "NULL"},
		{"1 IN (1, NULL)", "TRUE"}, {"2 IN (1, NULL)", "NULL"}, {"2 IN (1, 3)", "FALSE"},
		{"2 NOT IN (1, NULL)", "NULL"}, {"2 NOT IN (1, 3)", "TRUE"}, {"NULL IN (1)", "NULL"},
		{"2 BETWEEN 1 AND 3", "TRUE"}, {"2 BETWEEN NULL AND 3", "NULL"}, {"5 BETWEEN NULL AND 3", "FALSE"},
		{"2 NOT BETWEEN 1 AND NULL", "NULL"}, {"0 NOT BETWEEN 1 AND NULL", "TRUE"},
		{"NULL IS NULL", "TRUE"}, {"NULL IS NOT NULL", "FALSE"}, {"1 IS NULL", "FALSE"},
		{"value.none IS NULL", "TRUE"}, {"value.absent IS NULL", "TRUE"}, {"key IS NOT NULL", "TRUE"},
		{"NULL LIKE 'a'", "NULL"}, {"NULL ~ 'a'", "NULL"},
		{"coalesce(NULL, value.absent, 1) = 1", "TRUE"},
	}
	for _, tc := range cases {
		got, _ := evalOn(t, tc.expr, rec)
		if show(got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, show(got), tc.want)
		}
		c := NewRecordCompiler(Options{Now: now})
		x, _ := c.Compile(where(t, tc.expr))
		if keep := x.MatchRecord(rec); keep != (tc.want == "TRUE") {
			t.Errorf("WHERE %s keeps the row: %v", tc.expr, keep)
		}
	}
}

func TestComparisons(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"partition = 3", "TRUE"}, {"offset > 1000", "TRUE"}, {"offset <= 1041", "FALSE"}, {"offset <> 1042", "FALSE"},
		{"key = 'c-0042'", "TRUE"}, {"key = x'632d30303432'", "TRUE"}, {"key < 'c-1'", "TRUE"}, {"key >= 'd'", "FALSE"},
		{"value.total > 100", "TRUE"}, {"value.total = 120.5", "TRUE"}, {"value.qty = 3", "TRUE"}, {"value.qty = 3.0", "TRUE"},
		{"value.qty < 2.5", "FALSE"}, {"value.big > 1", "TRUE"},
		{"value.customer.id = key", "TRUE"}, {"value.customer.vip = TRUE", "TRUE"}, {"value.customer.vip", "TRUE"},
		{"value.items[1].sku = 'b-2'", "TRUE"}, {"value['odd-name'] = 'x'", "TRUE"}, {"value.esc = 'a\"b'", "TRUE"},
		{"value.items[5].sku = 'x'", "NULL"},
		{"timestamp < 30m AGO", "TRUE"}, {"timestamp > 2h AGO", "TRUE"},
		{"timestamp > TIMESTAMP '2026-01-02T01:00:00Z'", "TRUE"}, {"timestamp > '2026-01-02T02:30:00Z'", "FALSE"},
		{"timestamp BETWEEN TIMESTAMP '2026-01-02T01:00:00Z' AND 15m AGO", "TRUE"},
		{"timestamp > 1767319445000", "FALSE"}, {"timestamp = 1767319445000", "TRUE"},
		{"'b' > 'a'", "TRUE"}, {"'é' > 'z'", "TRUE"}, {"TRUE > FALSE", "TRUE"},
		{"key = 42", "NULL"}, {"value.qty = '3'", "NULL"}, {"TRUE = 1", "NULL"},
		{"partition IN (1, 2, 3)", "TRUE"}, {"key IN ('a', 'c-0042')", "TRUE"}, {"offset BETWEEN 1042 AND 1042", "TRUE"},
	}
	for _, tc := range cases {
		got, _ := evalOn(t, tc.expr, rec)
		if show(got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, show(got), tc.want)
		}
	}
}

func TestArithmetic(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"offset + 1 = 1043", "TRUE"}, {"offset - 2 * 3 = 1036", "TRUE"}, {"(offset - 2) * 3 = 3120", "TRUE"},
		{"7 / 2 = 3", "TRUE"}, {"7 % 4 = 3", "TRUE"}, {"7.0 / 2 = 3.5", "TRUE"}, {"-offset = -1042", "TRUE"},
		{"value.total * 2 = 241", "TRUE"}, {"value.qty + 0.5 = 3.5", "TRUE"},
		{"1 / 0 IS NULL", "TRUE"}, {"1 % 0 IS NULL", "TRUE"}, {"1.5 / 0 IS NULL", "TRUE"},
		{"timestamp + 3600000 = 1767323045000", "TRUE"}, {"1767323045000 - timestamp = 3600000", "TRUE"},
		{"key + 1 IS NULL", "TRUE"}, {"NULL + 1 IS NULL", "TRUE"},
	}
	for _, tc := range cases {
		got, _ := evalOn(t, tc.expr, rec)
		if show(got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, show(got), tc.want)
		}
	}
}

func TestLikeAndRegex(t *testing.T) {
	cases := []struct {
		pattern, subject string
		fold, want       bool
	}{
		{"abc", "abc", false, true}, {"abc", "abcd", false, false}, {"ab%", "abcd", false, true}, {"%cd", "abcd", false, true},
		{"%bc%", "abcd", false, true}, {"%zz%", "abcd", false, false}, {"%", "", false, true}, {"", "", false, true}, {"", "a", false, false},
		{"a_c", "abc", false, true}, {"a_c", "ac", false, false}, {"a_c", "aéc", false, true}, {"_", "é", false, true},
		{"a%b%c", "aXXbYYc", false, true}, {"a%b%c", "aXXcYYb", false, false}, {"%a%a%", "banana", false, true},
		{`100\%`, "100%", false, true}, {`100\%`, "1000", false, false}, {`a\_b`, "a_b", false, true}, {`a\_b`, "axb", false, false},
		{`a\\b`, `a\b`, false, true},
		{"ABC%", "abcdef", true, true}, {"%É%", "café", true, true}, {"abc", "ABD", true, false}, {"a_C", "AxC", true, true},
		{"%\xff%", "a\xffb", false, true}, {"a_b", "a\xffb", false, true},
	}
	for _, tc := range cases {
		m := newLikeMatcher(tc.pattern, tc.fold)
		if got := m.match([]byte(tc.subject)); got != tc.want {
			t.Errorf("%q LIKE(fold=%v) %q = %v, want %v", tc.subject, tc.fold, tc.pattern, got, tc.want)
		}
	}
	exprs := []struct{ expr, want string }{
		{"key LIKE 'c-%'", "TRUE"}, {"key NOT LIKE 'c-%'", "FALSE"}, {"key ILIKE 'C-00%'", "TRUE"}, {"key NOT ILIKE 'C%'", "FALSE"},
		{"key ~ '^c-[0-9]+$'", "TRUE"}, {"key !~ '^c-'", "FALSE"}, {"value ~ '\"vip\":true'", "TRUE"},
		{"offset LIKE '1%'", "NULL"}, {"value.customer.id LIKE 'c-%'", "TRUE"},
	}
	for _, tc := range exprs {
		got, _ := evalOn(t, tc.expr, rec)
		if show(got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, show(got), tc.want)
		}
	}
}

func TestFunctions(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"length(key) = 6", "TRUE"}, {"length(headers) = 3", "TRUE"}, {"length(value.absent) IS NULL", "TRUE"},
		{"lower('ÀBC') = 'àbc'", "TRUE"}, {"upper(key) = 'C-0042'", "TRUE"}, {"upper(x'ff61') = x'ff41'", "TRUE"},
		{"coalesce(value.absent, key) = 'c-0042'", "TRUE"}, {"coalesce(NULL, NULL) IS NULL", "TRUE"},
		{"header('source') = 'kql'", "TRUE"}, {"header(retry) IS NULL", "TRUE"}, {"header('none') IS NULL", "TRUE"},
		{"length(offset) IS NULL", "TRUE"},
	}
	for _, tc := range cases {
		got, _ := evalOn(t, tc.expr, rec)
		if show(got) != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, show(got), tc.want)
		}
	}
}

func TestJSONEdgeCases(t *testing.T) {
	cases := []struct {
		value []byte
		expr  string
		want  string
	}{
		{[]byte("not json"), "value.a IS NULL", "TRUE"},
		{[]byte(`"a string"`), "value.a IS NULL", "TRUE"},
		{nil, "value.a IS NULL", "TRUE"},
		{nil, "value IS NULL", "TRUE"},
		{[]byte{}, "value = ''", "TRUE"},
		{[]byte(`  [1, 2, {"x": "y"}]`), "value[2].x = 'y'", "TRUE"},
		{[]byte(`{"a.b": 1, "@c": 2, "d*": 3}`), "value['a.b'] = 1 AND value['@c'] = 2 AND value['d*'] = 3", "TRUE"},
		{[]byte(`{"a": {"b": [10, 20]}}`), "value.a = '{\"b\":[10,20]}'", "TRUE"}, // an object is its compacted text
		{[]byte(`{"a": {"b": [10, 20]}}`), "value.a = '{\"b\": [10, 20]}'", "FALSE"},
		{[]byte(`{"a": -5}`), "value.a < 0", "TRUE"},
		{[]byte(`{"a": 1e3}`), "value.a = 1000", "TRUE"},
		{[]byte(`{"a": {"b": 1}`), "value.a.b = 1", "TRUE"}, // gjson reads what it needs: truncated JSON after the path still answers
	}
	for _, tc := range cases {
		r := &result.Record{Value: tc.value}
		got, _ := evalOn(t, tc.expr, r)
		if show(got) != tc.want {
			t.Errorf("value %q: %s = %s, want %s", tc.value, tc.expr, show(got), tc.want)
		}
	}
	// The key has paths too.
	got, _ := evalOn(t, "key.id = 7", &result.Record{Key: []byte(`{"id": 7}`)})
	if !got.IsTrue() {
		t.Errorf("key.id = 7: %s", show(got))
	}
}

// TestOneWarning: values that cannot be compared are NULL, and the statement
// gets one warning naming the expression and the first partition:offset.
func TestOneWarning(t *testing.T) {
	c := NewRecordCompiler(Options{Now: now})
	x, err := c.Compile(where(t, "value.qty = 'three' OR key = 42"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		r := *rec
		r.Partition, r.Offset = int32(i), int64(100+i)
		if x.MatchRecord(&r) {
			t.Fatal("an incomparable comparison kept the row")
		}
	}
	w := c.Warnings.String()
	want := "value.qty = 'three': an integer and a text cannot be compared or combined, so the result is NULL (first at partition 0 offset 100); 10 times in all"
	if w != want {
		t.Errorf("warning\n got %q\nwant %q", w, want)
	}
	// No warning when nothing went wrong.
	c2 := NewRecordCompiler(Options{})
	y, _ := c2.Compile(where(t, "key = 'x'"))
	y.MatchRecord(rec)
	if c2.Warnings.String() != "" {
		t.Errorf("unexpected warning %q", c2.Warnings.String())
	}
}

func TestRows(t *testing.T) {
	cols := []result.Column{{Name: "topic", Type: result.String}, {Name: "partition", Type: result.Int},
		{Name: "internal", Type: result.Bool}, {Name: "replicas", Type: result.Ints}, {Name: "in_sync_replicas", Type: result.Ints},
		{Name: "messages", Type: result.Int}, {Name: "when", Type: result.Time}}
	row := result.Row{"orders", int64(6), false, []int32{1, 2, 3}, []int32{1, 2}, nil, now}
	cases := []struct{ expr, want string }{
		{"topic = 'orders'", "TRUE"}, {"topic LIKE 'ord%'", "TRUE"}, {"partition > 3 AND NOT internal", "TRUE"},
		{"in_sync_replicas < replicas", "TRUE"}, {"replicas = 3", "TRUE"}, {"messages > 0", "NULL"}, {"messages IS NULL", "TRUE"},
	}
	for _, tc := range cases {
		c := NewRowCompiler(cols, Options{})
		st, err := lang.Parse("SHOW PARTITIONS WHERE " + tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		x, err := c.Compile(st.(*lang.ShowPartitions).Where)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		c.SetRow(row)
		if got := show(x.Eval()); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
		}
	}
	c := NewRowCompiler(cols, Options{})
	x, err := c.Compile(parseLoose(t, "when = TIMESTAMP '2026-01-02T03:04:05Z'"))
	if err != nil {
		t.Fatal(err)
	}
	c.SetRow(row)
	if !x.True() {
		t.Errorf("a time column compares with a time literal")
	}
	if _, err := c.Compile(&lang.Column{Name: "nope"}); err == nil || !strings.Contains(err.Error(), "the columns are topic, partition") {
		t.Errorf("unknown column: %v", err)
	}
}

// parseLoose builds an expression over arbitrary column names by parsing
// it with record column names substituted back.
func parseLoose(t *testing.T, src string) lang.Expr {
	t.Helper()
	names := map[string]string{"when": "timestamp"}
	text := src
	for from, to := range names {
		text = strings.ReplaceAll(text, from, to)
	}
	e := where(t, text)
	back := map[string]string{}
	for from, to := range names {
		back[to] = from
	}
	lang.Walk(e, func(x lang.Expr) bool {
		if c, ok := x.(*lang.Column); ok {
			if n, ok := back[c.Name]; ok {
				c.Name = n
			}
		}
		return true
	})
	return e
}

func selectStmt(t testing.TB, src string) *lang.Consume {
	t.Helper()
	st, err := lang.Parse(src)
	if err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return st.(*lang.Consume)
}

func TestAggregation(t *testing.T) {
	st := selectStmt(t, "SELECT key, count(*) AS n, count(value.x), count(DISTINCT value.x), min(value.x), max(value.x), sum(value.x), avg(value.x), max(offset) - min(offset) AS span FROM t GROUP BY key ORDER BY n DESC, key")
	c := NewRecordCompiler(Options{})
	a, err := NewAggregation(c, GroupingOf(st))
	if err != nil {
		t.Fatal(err)
	}
	recs := []struct {
		key, value string
	}{{"a", `{"x":1}`}, {"b", `{"x":5}`}, {"a", `{"x":3}`}, {"a", `{}`}, {"b", `{"x":5}`}, {"c", `{"x":2.5}`}, {"a", `{"x":3}`}}
	for i, r := range recs {
		c.SetRecord(&result.Record{Offset: int64(i), Key: []byte(r.key), Value: []byte(r.value)})
		if err := a.Add(); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, col := range a.Columns() {
		names = append(names, col.Name)
	}
	if got := strings.Join(names, "|"); got != "key|n|count(value.x)|count(DISTINCT value.x)|min(value.x)|max(value.x)|sum(value.x)|avg(value.x)|span" {
		t.Errorf("columns %s", got)
	}
	rows, err := a.Rows(0)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rows)
	want := "[[[97] 4 3 2 [49] [51] 7 2.3333333333333335 6] [[98] 2 2 1 [53] [53] 10 5 3] [[99] 1 1 1 [50 46 53] [50 46 53] 2.5 2.5 0]]"
	if got != want {
		t.Errorf("rows\n got %s\nwant %s", got, want)
	}
	if rows, _ := a.Rows(2); len(rows) != 2 {
		t.Errorf("LIMIT 2 gave %d rows", len(rows))
	}

	// Without GROUP BY: one row, also over no records.
	c2 := NewRecordCompiler(Options{})
	a2, _ := NewAggregation(c2, GroupingOf(selectStmt(t, "SELECT count(*), sum(offset), min(key) FROM t")))
	if rows, _ := a2.Rows(0); fmt.Sprint(rows) != "[[0 <nil> <nil>]]" {
		t.Errorf("empty aggregate: %v", rows)
	}
}

func TestTooManyGroups(t *testing.T) {
	c := NewRecordCompiler(Options{})
	a, err := NewAggregation(c, GroupingOf(selectStmt(t, "SELECT offset, count(*) FROM t GROUP BY offset")))
	if err != nil {
		t.Fatal(err)
	}
	var tooMany *TooManyGroupsError
	for i := range MaxGroups + 1 {
		c.SetRecord(&result.Record{Offset: int64(i)})
		if err = a.Add(); err != nil {
			break
		}
	}
	if !errors.As(err, &tooMany) || tooMany.Limit != 100000 || !strings.Contains(err.Error(), "more than 100000 groups") {
		t.Fatalf("got %v", err)
	}
	if a.Groups() != MaxGroups {
		t.Errorf("%d groups kept", a.Groups())
	}
}

func TestProjectionAndOrder(t *testing.T) {
	st := selectStmt(t, "SELECT partition, offset AS o, value.customer.id, header('source'), timestamp, headers, value.total + 1 FROM t ORDER BY o DESC LIMIT 5")
	c := NewRecordCompiler(Options{})
	p, err := NewProjection(c, st.Projection)
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewOrder(c, st.OrderBy, st.Projection)
	if err != nil {
		t.Fatal(err)
	}
	c.SetRecord(rec)
	row := p.Row()
	keys := o.Keys(nil)
	var cols []string
	for _, col := range p.Columns() {
		cols = append(cols, fmt.Sprintf("%s:%d", col.Name, col.Type))
	}
	if got := strings.Join(cols, " "); got != "partition:1 o:1 value.customer.id:4 header('source'):4 timestamp:5 headers:7 value.total + 1:8" {
		t.Errorf("columns %s", got)
	}
	if fmt.Sprintf("%v %v %s %s", row[0], row[1], row[2], row[3]) != "3 1042 c-0042 kql" {
		t.Errorf("row %v", row)
	}
	if len(keys) != 1 || keys[0].I != 1042 {
		t.Errorf("keys %v", keys)
	}
	other := *rec
	other.Offset = 7
	c.SetRecord(&other)
	if o.Compare(keys, o.Keys(nil)) >= 0 {
		t.Error("DESC: offset 1042 should sort before 7")
	}
}

// TestSchemaIDs: key_schema_id and value_schema_id are the ids of the
// wire-format headers the schema registry found, NULL where the bytes
// carried none; they are integers in WHERE, SELECT lists and GROUP BY.
func TestSchemaIDs(t *testing.T) {
	withIDs := *rec
	withIDs.KeySchema = result.WireSchema{ID: 7, HasID: true}
	withIDs.ValueSchema = result.WireSchema{ID: 3, HasID: true, Decoded: true}
	cases := []struct {
		r          *result.Record
		expr, want string
	}{
		{rec, "key_schema_id IS NULL", "TRUE"}, {rec, "value_schema_id IS NULL", "TRUE"},
		{rec, "value_schema_id = 3", "NULL"},
		{&withIDs, "key_schema_id = 7", "TRUE"}, {&withIDs, "value_schema_id = 3", "TRUE"},
		{&withIDs, "value_schema_id IN (1, 2)", "FALSE"}, {&withIDs, "key_schema_id + value_schema_id = 10", "TRUE"},
		{&withIDs, "value_schema_id IS NOT NULL AND value.total > 100", "TRUE"},
	}
	for _, tc := range cases {
		got, _ := evalOn(t, tc.expr, tc.r)
		if show(got) != tc.want {
			t.Errorf("%s = %s, want %s (schemas %+v %+v)", tc.expr, show(got), tc.want, tc.r.KeySchema, tc.r.ValueSchema)
		}
	}
	// A zero id is an id: HasID, not ID, says whether there is one.
	zero := *rec
	zero.ValueSchema = result.WireSchema{HasID: true}
	if got, _ := evalOn(t, "value_schema_id = 0", &zero); show(got) != "TRUE" {
		t.Errorf("value_schema_id = 0 on id 0: %s", show(got))
	}

	st := selectStmt(t, "SELECT value_schema_id, key_schema_id AS k, value FROM t WHERE value_schema_id = 3")
	c := NewRecordCompiler(Options{})
	p, err := NewProjection(c, st.Projection)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Compile(st.Where)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, col := range p.Columns() {
		cols = append(cols, fmt.Sprintf("%s:%v", col.Name, col.Type == result.Int))
	}
	if got := strings.Join(cols, " "); got != "value_schema_id:true k:true value:false" {
		t.Errorf("columns %s", got)
	}
	if w.MatchRecord(rec) {
		t.Error("WHERE value_schema_id = 3 kept a record without a schema id")
	}
	if !w.MatchRecord(&withIDs) {
		t.Fatal("WHERE value_schema_id = 3 dropped a record with schema id 3")
	}
	row := p.Row()
	if row[0] != int64(3) || row[1] != int64(7) {
		t.Errorf("row %#v", row)
	}
	c.SetRecord(rec)
	if row := p.Row(); row[0] != nil || row[1] != nil {
		t.Errorf("no schema ids: row %#v, want NULLs", row)
	}
}

// A path's number projects as JSON (the number it was); a computation on
// it is a number too, not text: -value.total was the string "-120.5" in
// json output beside value.total's 120.5, for its type came from the path.
func TestNegatedPathIsANumber(t *testing.T) {
	st := selectStmt(t, "SELECT value.total, -value.total, -value.qty, -(value.total + 1) FROM t")
	c := NewRecordCompiler(Options{})
	p, err := NewProjection(c, st.Projection)
	if err != nil {
		t.Fatal(err)
	}
	c.SetRecord(rec)
	row := p.Row()
	if j, ok := row[0].(result.JSON); !ok || string(j) != "120.5" {
		t.Errorf("value.total: %#v", row[0])
	}
	for i, want := range []result.Type{result.Number, result.Number, result.Number} {
		if got := p.Columns()[i+1].Type; got != want {
			t.Errorf("%s: type %d, want %d (row %#v)", p.Columns()[i+1].Name, got, want, row[i+1])
		}
	}
}
