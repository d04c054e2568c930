package lang

import "testing"

// TestOrderByPosition: a number in ORDER BY is a column's position, as in
// SQL (it was the constant, which orders nothing): the SELECT item's
// expression, or one of the six record columns for CONSUME and SELECT *.
func TestOrderByPosition(t *testing.T) {
	cases := []struct {
		src, want string
		alias     int
	}{
		{"SELECT key, value.total FROM orders ORDER BY 2 DESC", "value.total", 2},
		{"SELECT key, count(*) AS n FROM orders GROUP BY key ORDER BY 2", "count(*)", 2},
		{"CONSUME orders ORDER BY 3", "timestamp", 0},
		{"SELECT * FROM orders ORDER BY 6", "headers", 0},
		{"SELECT key FROM orders ORDER BY 2.0", "2.0", 0}, // a decimal is an expression
		{"SELECT key FROM orders ORDER BY 1 + 1", "1 + 1", 0},
		{"SELECT key, offset FROM orders ORDER BY -(-2)", "2", 0}, // a constant, not a position
		{"SELECT key, offset FROM orders ORDER BY (2)", "2", 0},
	}
	for _, tc := range cases {
		st, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		o := st.(*Consume).OrderBy[0]
		if got := FormatExpr(o.X); got != tc.want || o.Alias != tc.alias {
			t.Errorf("%s: ORDER BY %s (alias %d), want %s (alias %d)", tc.src, got, o.Alias, tc.want, tc.alias)
		}
	}
	for _, src := range []string{"SELECT key FROM orders ORDER BY 2", "CONSUME orders ORDER BY 7", "SELECT key FROM orders ORDER BY 0"} {
		if _, err := Parse(src); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
}
