package eval

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/result"
)

// project runs a SELECT list (no aggregates) over one record and returns
// the row and its columns.
func project(t *testing.T, list string, r *result.Record) (result.Row, []result.Column, error) {
	t.Helper()
	st := selectStmt(t, "SELECT "+list+" FROM t")
	c := NewRecordCompiler(Options{Now: now})
	p, err := NewProjection(c, st.Projection)
	if err != nil {
		return nil, nil, err
	}
	c.SetRecord(r)
	row := p.Row()
	return row, p.Columns(), c.Err()
}

// cell shows a row element as json output writes it: result.JSON and
// Number-column text bare, other text quoted.
func cell(v any, typ result.Type) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case result.JSON:
		return string(x)
	case int64, bool:
		return fmt.Sprint(x)
	case string:
		if typ == result.Number {
			return x
		}
		return fmt.Sprintf("%q", x)
	case []byte:
		return fmt.Sprintf("%q", x)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// TestFunctionResultTypeIsItsValuesType: coalesce of a number is a number
// in json output, whatever its first argument's type (issue 23, finding
// 1: it was text, taken from the first argument).
func TestFunctionResultTypeIsItsValuesType(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"coalesce(NULL, 5)", "5"},
		{"coalesce(header('nosuch'), 7)", "7"},
		{"coalesce(key_schema_id, 7)", "7"},
		{"coalesce(value.absent, 17)", "17"},
		{"coalesce(value.absent, 2.5)", "2.5"},
		{"coalesce(value.absent, TRUE)", "true"},
		{"coalesce(value.absent, value.qty)", "3"},
		{"coalesce(value.absent, value.total)", "120.5"},
		{"coalesce(value.absent, value.customer)", `{"id":"c-0042","vip":true}`},
		{"coalesce(value.absent, 'x')", `"x"`},
		{"coalesce(header('source'), 7)", `"kql"`},
		{"coalesce(NULL, 1, 2.5)", "1"},
		{"coalesce(value.qty, 5) + 1", "4"},
		{"coalesce(NULL, NULL)", "null"},
	}
	for _, tc := range cases {
		row, cols, err := project(t, tc.expr, rec)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got := cell(row[0], cols[0].Type); got != tc.want {
			t.Errorf("SELECT %s: %s (%T, column type %d), want %s", tc.expr, got, row[0], cols[0].Type, tc.want)
		}
	}
	// The same through an aggregate: max(coalesce(value.price, 17)).
	rows := aggregate(t, "SELECT max(coalesce(value.price, 17)) AS m, min(coalesce(NULL, value.n)) AS n FROM t", `{"n":4}`, `{"n":2}`)
	if got := cell(rows[0][0], result.Bytes) + " " + cell(rows[0][1], result.Bytes); got != "17 2" {
		t.Errorf("max(coalesce(value.price, 17)), min(coalesce(NULL, value.n)): %s, want 17 2", got)
	}
}

// aggregate runs an aggregating SELECT over records with these values
// (partition 0, offsets 0, 1, ...).
func aggregate(t *testing.T, src string, values ...string) []result.Row {
	t.Helper()
	rows, _, err := aggregateErr(t, src, values...)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return rows
}

func aggregateErr(t *testing.T, src string, values ...string) ([]result.Row, *Compiler, error) {
	t.Helper()
	c := NewRecordCompiler(Options{Now: now})
	a, err := NewAggregation(c, GroupingOf(selectStmt(t, src)))
	if err != nil {
		return nil, c, err
	}
	for i, v := range values {
		c.SetRecord(&result.Record{Offset: int64(i), Key: []byte(fmt.Sprint(i % 2)), Value: []byte(v)})
		if err := a.Add(); err != nil {
			return nil, c, err
		}
	}
	rows, err := a.Rows(0)
	return rows, c, err
}

// permutations calls f with every order of vs (vs has a few elements).
func permutations(vs []string, f func([]string)) {
	var rec func(k int)
	rec = func(k int) {
		if k == len(vs) {
			f(slices.Clone(vs))
			return
		}
		for i := k; i < len(vs); i++ {
			vs[k], vs[i] = vs[i], vs[k]
			rec(k + 1)
			vs[k], vs[i] = vs[i], vs[k]
		}
	}
	rec(0)
}

// TestMinMaxOfMixedKindsIsNullInEveryOrder: min and max over values that
// do not compare (a number and a text) are NULL with the warning, in every
// order of the records (issue 23, finding 2: they kept whichever kind came
// first and said NULL in the warning).
func TestMinMaxOfMixedKindsIsNullInEveryOrder(t *testing.T) {
	cases := []struct {
		values   []string
		min, max string
		warn     string // a part of the warning; "" for none
	}{
		{[]string{`{"m":9}`, `{"m":-3.25}`, `{"m":"x"}`, `{"m":""}`}, "<nil>", "<nil>", "cannot be compared or combined, so the result is NULL"},
		{[]string{`{"m":"x"}`, `{"m":true}`}, "<nil>", "<nil>", "boolean"},
		{[]string{`{"m":9}`, `{"m":-3.25}`, `{"m":2}`}, "-3.25", "9", ""},
		{[]string{`{"m":"b"}`, `{"m":"a"}`, `{}`, `{"m":null}`}, "a", "b", ""},
		{[]string{`{"m":[1, 2]}`, `{"m":[1,2]}`}, "[1,2]", "[1,2]", ""},
		{[]string{`{}`, `{"m":null}`}, "<nil>", "<nil>", ""},
	}
	for _, tc := range cases {
		permutations(tc.values, func(order []string) {
			rows, c, err := aggregateErr(t, "SELECT min(value.m), max(value.m) FROM t", order...)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%s %s", show2(rows[0][0]), show2(rows[0][1]))
			if got != tc.min+" "+tc.max {
				t.Errorf("records %v: min, max = %s, want %s %s", order, got, tc.min, tc.max)
			}
			w := c.Warnings.String()
			if tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
				t.Errorf("records %v: warning %q, want one with %q", order, w, tc.warn)
			}
		})
	}
}

func show2(v any) string {
	switch x := v.(type) {
	case result.JSON:
		return string(x)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// TestIntegerOverflowIsAnError: a 64-bit integer result past the range is
// an error naming the expression, the operands and the record, never a
// wrap (issue 23, finding 3: 9223372036854775807 + 1 was
// -9223372036854775808).
func TestIntegerOverflowIsAnError(t *testing.T) {
	big := &result.Record{Partition: 2, Offset: 17, Value: []byte(`{"big":1234567890123,"max":9223372036854775807,"min":-9223372036854775808}`)}
	cases := []struct{ expr, want string }{
		{"9223372036854775807 + 1", "9223372036854775807 + 1: bigint out of range: 9223372036854775807 + 1 is past the 64-bit integer range"},
		{"value.big * value.big", "value.big * value.big: bigint out of range: 1234567890123 * 1234567890123 is past"},
		{"value.min - 1", "value.min - 1: bigint out of range: -9223372036854775808 - 1 is past"},
		{"-value.min", "-value.min: bigint out of range: -(-9223372036854775808) is past"},
		{"value.min / -1", "value.min / -1: bigint out of range: -9223372036854775808 / -1 is past"},
		{"value.min * -1", "bigint out of range"},
		{"-1 * value.min", "bigint out of range"},
		{"value.max * 2", "bigint out of range"},
		{"offset + value.max", "offset + value.max: bigint out of range: 17 + 9223372036854775807"},
		{"(value.max + 1) IS NULL", "bigint out of range"},
	}
	for _, tc := range cases {
		_, _, err := project(t, tc.expr, big)
		var re *RangeError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "at partition 2 offset 17") {
			t.Errorf("SELECT %s: error %v, want one with %q at partition 2 offset 17", tc.expr, err, tc.want)
		}
	}
	// The edges that fit are answers, not errors.
	fits := []struct{ expr, want string }{
		{"value.max - 1 + 1", "9223372036854775807"}, {"value.min + 1 - 1", "-9223372036854775808"},
		{"value.min % -1", "0"}, {"-value.max", "-9223372036854775807"}, {"value.min / 1", "-9223372036854775808"},
		{"value.big * 1000000", "1234567890123000000"}, {"value.max * 1.0 * 2", "1.8446744073709552e+19"},
	}
	for _, tc := range fits {
		row, cols, err := project(t, tc.expr, big)
		if err != nil || cell(row[0], cols[0].Type) != tc.want {
			t.Errorf("SELECT %s: %v (%v), want %s", tc.expr, row, err, tc.want)
		}
	}
	// WHERE stops too: a NULL from an overflow is not an answer.
	c := NewRecordCompiler(Options{})
	x, err := c.Compile(where(t, "value.max + offset > 0"))
	if err != nil {
		t.Fatal(err)
	}
	x.MatchRecord(big)
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "value.max + offset: bigint out of range") {
		t.Errorf("WHERE value.max + offset > 0: %v", err)
	}
	// sum() of integers past the range is the same error, once the total
	// is known (TestSumOverflowDoesNotDependOnRecordOrder); avg goes on as
	// a decimal.
	_, _, err = aggregateErr(t, "SELECT sum(value.n) FROM t", `{"n":9223372036854775800}`, `{"n":7}`, `{"n":1}`)
	if err == nil || !strings.Contains(err.Error(), "sum(value.n): bigint out of range: the sum 9223372036854775808 is past the 64-bit integer range (-9223372036854775808 to 9223372036854775807) in a group's result; sum a decimal instead") {
		t.Errorf("sum past the range: %v", err)
	}
	rows := aggregate(t, "SELECT avg(value.n), sum(value.n * 1.0) FROM t", `{"n":9223372036854775800}`, `{"n":9223372036854775800}`)
	if got := fmt.Sprint(rows[0]); got != "[9223372036854775807 18446744073709551616]" && got != "[9.223372036854776e+18 1.8446744073709552e+19]" {
		t.Errorf("avg and a decimal sum past the integer range: %s", got)
	}
	// An aggregate's result computed after the last record names no record.
	_, _, err = aggregateErr(t, "SELECT max(value.n) + 1 FROM t", `{"n":9223372036854775807}`)
	if err == nil || !strings.Contains(err.Error(), "max(value.n) + 1: bigint out of range: 9223372036854775807 + 1 is past the 64-bit integer range (-9223372036854775808 to 9223372036854775807) in a group's result") {
		t.Errorf("max(value.n) + 1: %v", err)
	}
}

// TestObjectsAndArraysHaveOneCanonicalForm: objects and arrays that differ
// only in spacing compare equal, group as one and count DISTINCT as one,
// by the compacted text jsonl shows (issue 23, finding 4).
func TestObjectsAndArraysHaveOneCanonicalForm(t *testing.T) {
	values := []string{`{"a":{"x":1,"y":[1,2]}}`, "{\"a\": { \"x\" : 1,\n \"y\": [1, 2] } }", `{"a":{"x":1,"y":[1,2]},"pad":" "}`, `{"a":{"x":1,"y":[2,1]}}`, `{"a":"a string with  spaces"}`}
	rows := aggregate(t, "SELECT value.a, count(*) AS n FROM t GROUP BY value.a ORDER BY n DESC", values...)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s:%v", show2(r[0]), r[1]))
	}
	want := []string{`{"x":1,"y":[1,2]}:3`, `{"x":1,"y":[2,1]}:1`, `a string with  spaces:1`}
	if !slices.Equal(got, want) {
		t.Errorf("GROUP BY value.a\n got %v\nwant %v", got, want)
	}
	rows = aggregate(t, "SELECT count(DISTINCT value.a), min(value.a), max(value.a) FROM t", values[:4]...)
	if got := fmt.Sprintf("%v %s %s", rows[0][0], show2(rows[0][1]), show2(rows[0][2])); got != `2 {"x":1,"y":[1,2]} {"x":1,"y":[2,1]}` {
		t.Errorf("count(DISTINCT value.a), min, max: %s", got)
	}
	cases := []struct {
		value, expr, want string
	}{
		{values[1], `value.a = '{"x":1,"y":[1,2]}'`, "TRUE"},
		{values[1], `value.a.y = '[1,2]'`, "TRUE"},
		{values[1], `length(value.a) = 17`, "TRUE"},
		{values[1], `value.a LIKE '{"x":1,%'`, "TRUE"},
		{`{"s":"  spaced  "}`, `value.s = '  spaced  '`, "TRUE"}, // a string keeps its spaces
		{`{"o":{"s":"a b"}}`, `value.o = '{"s":"a b"}'`, "TRUE"},
	}
	for _, tc := range cases {
		got, _ := evalOn(t, tc.expr, &result.Record{Value: []byte(tc.value)})
		if show(got) != tc.want {
			t.Errorf("value %q: %s = %s, want %s", tc.value, tc.expr, show(got), tc.want)
		}
	}
}

// TestColumnNamesAreDistinct: a SELECT list whose items have one name is
// an error naming them, for a json row cannot hold a key twice (issue 23,
// finding 5: value.odd-name and value['odd-name'] wrote one key twice).
func TestColumnNamesAreDistinct(t *testing.T) {
	cases := []struct{ list, want string }{
		{"value.odd-name, value['odd-name']", "SELECT list: items 1 and 2 are both named \"value['odd-name']\""},
		{"key, key", `items 1 and 2 are both named "key"`},
		{"key, offset, offset AS key", `items 1 and 3 are both named "key"`},
		{"count(*), count(*)", "items 1 and 2 are both named \"count(*)\""},
		{"key AS k, value AS k", "items 1 and 2 are both named k"},
	}
	for _, tc := range cases {
		_, _, err := project(t, tc.list, rec)
		_, _, aerr := aggregateErr(t, "SELECT "+tc.list+", count(*) AS n FROM t GROUP BY key, value.odd-name, offset, value")
		for i, e := range []error{err, aerr} {
			if i == 0 && strings.Contains(tc.list, "count") {
				continue // a projection refuses an aggregate first; the aggregation names the items
			}
			if e == nil || !strings.Contains(e.Error(), tc.want) || !strings.Contains(e.Error(), "give one a name of its own with AS") {
				t.Errorf("SELECT %s: %v, want %q", tc.list, e, tc.want)
			}
		}
	}
	if _, _, err := project(t, "key, key AS key2, value.odd-name AS odd, value['odd-name']", rec); err != nil {
		t.Errorf("distinct names: %v", err)
	}
}

// TestTimestampArithmeticTypes: timestamp plus an integer is a timestamp,
// the difference of two a number of milliseconds, and timestamp minus a
// decimal a decimal (it was typed as a timestamp and written as text).
func TestTimestampArithmeticTypes(t *testing.T) {
	cases := []struct {
		expr string
		want result.Type
	}{
		{"timestamp + 1000", result.Time}, {"timestamp - timestamp", result.Int},
		{"timestamp - 0.5", result.Number}, {"1.5 + timestamp", result.Number}, {"timestamp + value.qty", result.Bytes},
	}
	for _, tc := range cases {
		row, cols, err := project(t, tc.expr, rec)
		if err != nil || cols[0].Type != tc.want {
			t.Errorf("SELECT %s: column type %d (%v, %v), want %d", tc.expr, cols[0].Type, row, err, tc.want)
		}
	}
	row, cols, _ := project(t, "timestamp - 0.5", rec)
	if got := cell(row[0], cols[0].Type); got != fmt.Sprint(float64(rec.Timestamp)-0.5) && got != "1.7673158449995e+12" {
		t.Errorf("timestamp - 0.5 = %s", got)
	}
	// A column typed by its values (a path's, a number's that may be an
	// integer or a decimal) writes a timestamp value as a timestamp, as a
	// timestamp column does, not as text that only looks like one.
	at := &result.Record{Timestamp: 1767323045000, Value: []byte(`{"n":1000,"f":0.5}`)}
	for _, expr := range []string{"timestamp + value.n", "timestamp + value.n * 1", "value.n * 1 + timestamp", "coalesce(timestamp, 0.5)"} {
		row, cols, err := project(t, expr, at)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := row[0].(time.Time); !ok || got.UnixMilli() < 1767323045000 {
			t.Errorf("SELECT %s: %T(%v) in a column of type %d, want a time.Time", expr, row[0], row[0], cols[0].Type)
		}
	}
	row, _, _ = project(t, "timestamp - value.f", at)
	if _, ok := row[0].(result.JSON); !ok {
		t.Errorf("timestamp - value.f (0.5): %T(%v), want a JSON number", row[0], row[0])
	}
}

// TestTwoTimestampsOnlySubtract: timestamp - timestamp is milliseconds;
// any other arithmetic of two timestamps is NULL with the warning (the
// differential test's max(timestamp) + max(timestamp)).
func TestTwoTimestampsOnlySubtract(t *testing.T) {
	for _, expr := range []string{"timestamp + timestamp", "timestamp * timestamp", "timestamp / timestamp", "timestamp % timestamp", "timestamp + 1 + timestamp"} {
		got, c := evalOn(t, expr, rec)
		if w := c.Warnings.String(); got.K != Null || !strings.Contains(w, expr) {
			t.Errorf("%s = %s with warning %q, want NULL with a warning naming it", expr, show(got), w)
		}
	}
	got, c := evalOn(t, "timestamp - (timestamp - 1000)", rec)
	if show(got) != "1000" || c.Warnings.String() != "" {
		t.Errorf("timestamp - (timestamp - 1000) = %s (warning %q), want 1000", show(got), c.Warnings.String())
	}
}

// TestSumOverflowDoesNotDependOnRecordOrder: sum() of integers is exact
// whatever order the records come in (a read of several partitions
// interleaves them): only a total past the 64-bit range is an error, not a
// running sum that passes it on the way (9223372036854775807, 1, -1 sums to
// 9223372036854775807, as 9223372036854775807, -1, 1 does).
func TestSumOverflowDoesNotDependOnRecordOrder(t *testing.T) {
	cases := []struct {
		values []string
		want   string // the sum, or a part of the error
	}{
		{[]string{`{"n":9223372036854775807}`, `{"n":1}`, `{"n":-1}`}, "9223372036854775807"},
		{[]string{`{"n":-9223372036854775808}`, `{"n":-1}`, `{"n":1}`, `{"n":5}`}, "-9223372036854775803"},
		{[]string{`{"n":9223372036854775807}`, `{"n":9223372036854775807}`, `{"n":-9223372036854775808}`, `{"n":2}`}, "9223372036854775808"},
		{[]string{`{"n":9223372036854775807}`, `{"n":1}`, `{"n":1.5}`}, "9.223372036854776e+18"},
		// The integers stay exact beside a decimal: no rounding of a huge
		// running sum that cancels out.
		{[]string{`{"n":9223372036854775807}`, `{"n":0.5}`, `{"n":-9223372036854775807}`, `{"n":1}`}, "1.5"},
		{[]string{`{"n":9223372036854775800}`, `{"n":7}`, `{"n":1}`}, "sum(value.n): bigint out of range: the sum 9223372036854775808 is past the 64-bit integer range (-9223372036854775808 to 9223372036854775807) in a group's result; sum a decimal instead"},
	}
	for _, tc := range cases {
		permutations(tc.values, func(order []string) {
			rows, _, err := aggregateErr(t, "SELECT sum(value.n) FROM t", order...)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = fmt.Sprint(rows[0][0])
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("sum of %v = %s, want %s", order, got, tc.want)
			}
		})
	}
}
