package exec

import (
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
)

// The reference: the records in an embedded SQLite (modernc.org/sqlite,
// pure Go, test-only), and the translation of kql's expressions into SQL.
// SQLite's own rules are SQL's; where kql's differ, the translation says so
// once, here, in the function that builds that construct. The encoding of
// kql's values in SQLite keeps kql's kinds apart:
//
//	NULL       NULL
//	integer    INTEGER   (partition, offset, timestamp as epoch ms, JSON integers)
//	decimal    REAL
//	text       BLOB      (keys, values, headers, JSON strings, literals: compared bytewise)
//	boolean    TEXT 't' or 'f' (kql's booleans are not numbers: TRUE = 1 is NULL)
//	object     BLOB      its compacted JSON text (kql rule: objects and arrays are their compacted text)
//	headers    BLOB      "\x01" and the list, only ever projected
//
// Table r holds the records a read_committed reader sees (aborted ones are
// left out), h their headers in order.

var registerSQLFuncs sync.Once

// openReference loads d into a new in-memory database.
func openReference(t *testing.T, d *diffData) *sql.DB {
	t.Helper()
	registerSQLFuncs.Do(func() {
		// kql rule: lower and upper map every Unicode letter and keep
		// bytes that are not UTF-8 as they are (SQLite's map ASCII only).
		sqlite.MustRegisterDeterministicScalarFunction("kql_lower", 1, caseFunc(unicode.ToLower))
		sqlite.MustRegisterDeterministicScalarFunction("kql_upper", 1, caseFunc(unicode.ToUpper))
		// kql's ~ is RE2 (Go's regexp), unanchored; SQLite has no REGEXP.
		var mu sync.Mutex
		cache := map[string]*regexp.Regexp{}
		sqlite.MustRegisterDeterministicScalarFunction("kql_re", 2, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			pat, _ := args[0].(string)
			subj, ok := args[1].([]byte)
			if !ok {
				return nil, nil
			}
			mu.Lock()
			re, ok := cache[pat]
			if !ok {
				re = regexp.MustCompile(pat)
				cache[pat] = re
			}
			mu.Unlock()
			if re.Match(subj) {
				return "t", nil
			}
			return "f", nil
		})
		// kql rule: an integer result past the 64-bit range is an error
		// (SQLite turns it into a REAL).
		sqlite.MustRegisterDeterministicScalarFunction("kql_overflow", 0, func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
			return nil, errors.New("integer overflow")
		})
	})
	db, err := sql.Open("sqlite", ":memory:")
	require.NoError(t, err)
	db.SetMaxOpenConns(1) // one connection: the in-memory database and the pragma live in it
	t.Cleanup(func() { db.Close() })
	for _, stmt := range []string{
		// kql rule: LIKE is case-sensitive (ILIKE is not).
		"PRAGMA case_sensitive_like = ON",
		"CREATE TABLE r (p INTEGER, off INTEGER, ts INTEGER, k BLOB, v BLOB, kj TEXT, vj TEXT)",
		// The scan order, so that LIMIT stops a read where kql's does.
		"CREATE INDEX r_order ON r (ts, p, off)",
		"CREATE TABLE h (p INTEGER, off INTEGER, i INTEGER, hk TEXT, hv BLOB)",
		"CREATE INDEX h_record ON h (p, off, i)",
	} {
		_, err := db.Exec(stmt)
		require.NoError(t, err, stmt)
	}
	for _, rec := range d.recs {
		if rec.aborted {
			continue
		}
		_, err := db.Exec("INSERT INTO r (p, off, ts, k, v) VALUES (?, ?, ?, ?, ?)", rec.p, rec.off, rec.ts, rec.key, rec.value)
		require.NoError(t, err)
		for i, hd := range rec.headers {
			var v any
			if hd.Value != nil {
				v = hd.Value
			}
			_, err := db.Exec("INSERT INTO h VALUES (?, ?, ?, ?, ?)", rec.p, rec.off, i, hd.Key, v)
			require.NoError(t, err)
		}
	}
	// kql rule: a JSON path reads a key or value that is a JSON object or
	// array; anything else (text, a JSON scalar, bytes) has no members.
	for _, col := range []string{"k", "v"} {
		_, err := db.Exec(fmt.Sprintf("UPDATE r SET %[1]sj = CASE WHEN json_valid(CAST(%[1]s AS TEXT)) AND json_type(CAST(%[1]s AS TEXT)) IN ('object', 'array') THEN CAST(%[1]s AS TEXT) END", col))
		require.NoError(t, err)
	}
	for _, c := range diffColumns() {
		for _, stmt := range []string{"ALTER TABLE r ADD COLUMN " + c.name, "UPDATE r SET " + c.name + " = " + c.expr} {
			_, err := db.Exec(stmt)
			require.NoError(t, err, stmt)
		}
	}
	return db
}

func caseFunc(m func(rune) rune) func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) {
	return func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		b, ok := args[0].([]byte)
		if !ok {
			return nil, nil
		}
		out := make([]byte, 0, len(b))
		for i := 0; i < len(b); {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, b[i])
			} else {
				out = utf8.AppendRune(out, m(r))
			}
			i += size
		}
		return out, nil
	}
}

// The translation, one function per construct.

func sqlBlob(b []byte) string { return "X'" + hex.EncodeToString(b) + "'" }

func sqlText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// sqlBool turns a SQL condition (1, 0 or NULL) into a kql boolean.
func sqlBool(cond string) string {
	return fmt.Sprintf("(CASE WHEN %s THEN 't' WHEN NOT (%s) THEN 'f' END)", cond, cond)
}

// sqlTruth reads a kql boolean as 1, 0 or NULL; kql rule: anything that
// is not a boolean counts as NULL.
func sqlTruth(x string) string {
	return fmt.Sprintf("(CASE %s WHEN 't' THEN 1 WHEN 'f' THEN 0 END)", x)
}

func sqlNumeric(x string) string { return fmt.Sprintf("typeof(%s) IN ('integer', 'real')", x) }

// sqlCompare is a op b. kql rule: numbers compare with numbers, text with
// text, booleans with booleans; any other pair is NULL (text '42' = 42 is
// NULL, not TRUE or FALSE as SQLite's type order would say).
func sqlCompare(a, op, b string) string {
	if op == "!=" {
		op = "<>"
	}
	return fmt.Sprintf("(CASE WHEN (%s AND %s) OR (typeof(%s) = typeof(%s) AND typeof(%s) <> 'null') THEN (CASE WHEN %s %s %s THEN 't' ELSE 'f' END) END)",
		sqlNumeric(a), sqlNumeric(b), a, b, a, a, op, b)
}

// sqlAnd and sqlOr are SQL's three-valued logic, evaluated left first as
// kql does (FALSE AND x does not evaluate x).
func sqlAnd(a, b string) string {
	return fmt.Sprintf("(CASE WHEN %s = 0 THEN 'f' WHEN %s = 0 THEN 'f' WHEN %s = 1 AND %s = 1 THEN 't' END)", sqlTruth(a), sqlTruth(b), sqlTruth(a), sqlTruth(b))
}

func sqlOr(a, b string) string {
	return fmt.Sprintf("(CASE WHEN %s = 1 THEN 't' WHEN %s = 1 THEN 't' WHEN %s = 0 AND %s = 0 THEN 'f' END)", sqlTruth(a), sqlTruth(b), sqlTruth(a), sqlTruth(b))
}

func sqlNot(a string) string {
	return fmt.Sprintf("(CASE %s WHEN 1 THEN 'f' WHEN 0 THEN 't' END)", sqlTruth(a))
}

// sqlArith is a op b. kql rules: only numbers combine (text or a boolean
// makes NULL); integers stay integers and past the 64-bit range are an
// error, not a REAL; % of decimals is the float remainder (SQLite's %
// truncates them to integers); division by zero is NULL.
func sqlArith(a, op, b string) string {
	ints := fmt.Sprintf("typeof(%s) = 'integer' AND typeof(%s) = 'integer'", a, b)
	intOp := fmt.Sprintf("(%s %s %s)", a, op, b)
	floatOp := fmt.Sprintf("(%s * 1.0 %s %s)", a, op, b)
	if op == "%" {
		floatOp = fmt.Sprintf("mod(%s, %s)", a, b)
	}
	return fmt.Sprintf("(CASE WHEN NOT (%s AND %s) THEN NULL WHEN %s THEN (CASE WHEN typeof(%s) = 'real' THEN kql_overflow() ELSE %s END) ELSE %s END)",
		sqlNumeric(a), sqlNumeric(b), ints, intOp, intOp, floatOp)
}

// sqlTimeArith is a op b, where at (bt) says that a (b) is a timestamp
// whenever it is an integer. kql rule: two timestamps only subtract (to
// milliseconds); timestamp + timestamp, and *, / and %, are NULL with the
// warning.
func sqlTimeArith(a string, at bool, op, b string, bt bool) string {
	if !at || !bt || op == "-" {
		return sqlArith(a, op, b)
	}
	return fmt.Sprintf("(CASE WHEN typeof(%s) = 'integer' AND typeof(%s) = 'integer' THEN NULL ELSE %s END)", a, b, sqlArith(a, op, b))
}

// sqlTextOnly applies f to x when x is text; kql rule: LIKE, ~, length,
// lower and upper on a number or boolean are NULL.
func sqlTextOnly(x, f string) string {
	return fmt.Sprintf("(CASE WHEN typeof(%s) = 'blob' THEN %s END)", x, f)
}

// sqlLike is x [NOT] LIKE pattern. kql rules: case-sensitive, \ makes the
// next character plain; ILIKE folds case (the generator's ILIKE patterns
// are ASCII, where folding is lowering).
func sqlLike(x, pattern string, fold, not bool) string {
	// SQLite's LIKE does not match a BLOB subject: it is read as text.
	subj, pat := "CAST("+x+" AS TEXT)", sqlText(pattern)
	if fold {
		subj, pat = "CAST(kql_lower("+x+") AS TEXT)", "CAST(kql_lower(CAST("+pat+" AS BLOB)) AS TEXT)"
	}
	m := fmt.Sprintf("(%s LIKE %s ESCAPE '\\')", subj, pat)
	if not {
		m = "NOT " + m
	}
	return sqlTextOnly(x, sqlBool(m))
}

func sqlRegex(x, pattern string, not bool) string {
	m := fmt.Sprintf("kql_re(%s, %s)", sqlText(pattern), x)
	if not {
		m = sqlNot(m)
	}
	return sqlTextOnly(x, m)
}

// sqlIn is x [NOT] IN (items): TRUE on an equal item, else NULL if x or an
// item was NULL or did not compare, else FALSE (SQL's rule, with kql's
// comparisons).
func sqlIn(x string, items []string, not bool) string {
	var eq, unknown []string
	for _, it := range items {
		c := sqlCompare(x, "=", it)
		eq = append(eq, c+" = 't'")
		unknown = append(unknown, c+" IS NULL")
	}
	hit, miss := "'t'", "'f'"
	if not {
		hit, miss = miss, hit
	}
	return fmt.Sprintf("(CASE WHEN %s IS NULL THEN NULL WHEN %s THEN %s WHEN %s THEN NULL ELSE %s END)", x, strings.Join(eq, " OR "), hit, strings.Join(unknown, " OR "), miss)
}

func sqlBetween(x, lo, hi string, not bool) string {
	v := sqlAnd(sqlCompare(x, ">=", lo), sqlCompare(x, "<=", hi))
	if not {
		v = sqlNot(v)
	}
	return v
}

func sqlIsNull(x string, not bool) string {
	if not {
		return fmt.Sprintf("(CASE WHEN %s IS NULL THEN 'f' ELSE 't' END)", x)
	}
	return fmt.Sprintf("(CASE WHEN %s IS NULL THEN 't' ELSE 'f' END)", x)
}

// sqlPath reads a JSON path of the key (kj) or value (vj). kql rules: a
// JSON string is text, true/false are booleans, an object or array is its
// compacted text (SQLite's json_extract minifies too), null and absent
// are NULL; an integer past the 64-bit range is a decimal.
func sqlPath(col, path string) string {
	x := fmt.Sprintf("json_extract(%s, %s)", col, sqlText(path))
	return fmt.Sprintf("(CASE json_type(%s, %s) WHEN 'true' THEN 't' WHEN 'false' THEN 'f' WHEN 'integer' THEN %s WHEN 'real' THEN %s WHEN 'text' THEN CAST(%s AS BLOB) WHEN 'object' THEN CAST(%s AS BLOB) WHEN 'array' THEN CAST(%s AS BLOB) END)",
		col, sqlText(path), x, x, x, x, x)
}

// sqlHeader is header('name'). kql rule: the last header with that key;
// NULL when there is none or its value is NULL.
func sqlHeader(name string) string {
	return fmt.Sprintf("(SELECT h.hv FROM h WHERE h.p = q.p AND h.off = q.off AND h.hk = %s ORDER BY h.i DESC LIMIT 1)", sqlText(name))
}

// sqlHeaders is the headers column, encoded for comparison (diffCell).
func sqlHeaders() string {
	return "(SELECT CAST(char(1) || coalesce(group_concat(hex(hk) || ':' || CASE WHEN hv IS NULL THEN 'N' ELSE 'v' || hex(hv) END, ','), '') AS BLOB) FROM (SELECT hk, hv FROM h WHERE h.p = q.p AND h.off = q.off ORDER BY h.i))"
}

func sqlHeaderCount() string {
	return "(SELECT count(*) FROM h WHERE h.p = q.p AND h.off = q.off)"
}

// sqlKindClass is the kind of x as kql compares kinds: numbers are one.
func sqlKindClass(x string) string {
	return fmt.Sprintf("(CASE typeof(%s) WHEN 'integer' THEN 'n' WHEN 'real' THEN 'n' WHEN 'null' THEN NULL ELSE typeof(%s) END)", x, x)
}

// sqlMinMax is min(x) or max(x). kql rule: a group whose values are of
// kinds that do not compare has no least or greatest: NULL (SQLite would
// pick by its type order).
func sqlMinMax(fn, x string) string {
	return fmt.Sprintf("(CASE WHEN count(DISTINCT %s) > 1 THEN NULL ELSE %s(%s) END)", sqlKindClass(x), fn, x)
}

// sqlSum is sum(x) or avg(x). kql rule: values that are not numbers are
// left out (SQLite counts text as 0); a sum of integers past the range is
// an error (SQLite's is too).
func sqlSum(fn, x string) string {
	return fmt.Sprintf("%s(CASE WHEN %s THEN %s END)", fn, sqlNumeric(x), x)
}

// sqlOrderKey is one ORDER BY key. kql rule: FALSE < TRUE < numbers <
// text, NULL last (first with DESC); SQLite puts NULL first and numbers
// before text.
func sqlOrderKey(x string, desc bool) string {
	dir := ""
	if desc {
		dir = " DESC"
	}
	return fmt.Sprintf("(CASE WHEN %s IS NULL THEN 1 ELSE 0 END)%s, (CASE typeof(%s) WHEN 'text' THEN 0 WHEN 'integer' THEN 1 WHEN 'real' THEN 1 ELSE 2 END)%s, (CASE WHEN 1 THEN %s END)%s", x, dir, x, dir, x, dir)
}
