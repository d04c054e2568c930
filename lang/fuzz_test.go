package lang

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, every error is an *Error whose position
// lies inside the input, Split agrees on what one statement is, and
// whatever parses prints back (Format) as text that parses to the same AST.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.src)
	}
	for _, tc := range errorCases {
		f.Add(tc.src)
	}
	// The query grammar: expressions, projections, the record clauses
	// and the metadata clauses.
	for _, tc := range queryCases {
		f.Add(tc.src)
	}
	for _, tc := range schemaParseCases {
		f.Add(tc.src)
	}
	for _, s := range []string{
		"CONSUME t WHERE a - -1 * (b + 2) % 3 / 4 > -5.5 AND NOT x IS NULL OR y NOT IN (1, 'a', x'00') AND z NOT BETWEEN 1 AND 2",
		"CONSUME t WHERE key ~ '\\d+' AND value !~ '(a|b)*' AND key LIKE '%\\%_' AND key ILIKE 'A'",
		"SELECT value.a[0]['b c'].d AS x, count(DISTINCT key), sum(offset) FROM t GROUP BY value.a[0]['b c'].d ORDER BY x DESC LIMIT 3",
		"CONSUME t WHERE timestamp BETWEEN TIMESTAMP '2026-01-02T03:04:05Z' AND 15m AGO FROM NEWEST LIMIT 5 FOLLOW",
		"SHOW PARTITIONS OF t LIKE 'a%' WHERE leader IN (1, 2) ORDER BY partition DESC, topic LIMIT 2",
		"SELECT offset FROM newest", "SELECT 'x' FROM newest", "SELECT x", "SELECT - - -1 FROM t",
		"CONSUME t WHERE 'it''s' = \"a\"\"b\" PARTITION FOR KEY x''", "CONSUME t WHERE header(trace-id) = ''",
		"CONSUME t WHERE -9223372036854775808 < - -9223372036854775808", "CONSUME t WHERE 1e5 = 1.0",
	} {
		f.Add(s)
	}
	for _, s := range []string{
		"", ";", "--", "/*", "'", `'\`, "x'", "x''", "-", "+1", "1.5h", "µ", "\xff", "SHOW\x00TOPICS",
		"CONSUME t FROM TAIL (0:0, 2147483647:9223372036854775807)",
		"PRODUCE t VALUE '\\u{10FFFF}\\xff\\0'",
		"EXPLAIN EXPLAIN EXPLAIN",
		"CONSUME t FROM 2562047h47m16.854775807s AGO",
		"CONSUME t FROM 1ns AGO",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		st, err := Parse(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q): error %T is not *Error: %v", src, err, err)
			}
			if e.Line < 1 || e.Col < 1 || e.Line > strings.Count(src, "\n")+1 || e.Msg == "" {
				t.Fatalf("Parse(%q): bad error position or message %d:%d %q", src, e.Line, e.Col, e.Msg)
			}
			_ = e.Error()
			return
		}
		// The splitter agrees with the lexer: a statement that parses is
		// one statement to Split, and parses the same from there.
		srcs, err := Split(src)
		if err != nil || len(srcs) != 1 {
			t.Fatalf("Parse(%q) ok, but Split gives %d statements, %v", src, len(srcs), err)
		}
		if fromSplit, err := ParseSource(srcs[0]); err != nil || !reflect.DeepEqual(fromSplit, st) {
			t.Fatalf("Parse(%q) = %#v, but ParseSource(Split) = %#v, %v", src, st, fromSplit, err)
		}
		text := Format(st)
		again, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but Parse(Format) = Parse(%q): %v", src, text, err)
		}
		if !reflect.DeepEqual(st, again) {
			t.Fatalf("Parse(%q) = %#v\nParse(Format) = Parse(%q) = %#v", src, st, text, again)
		}
		if Format(again) != text {
			t.Fatalf("Format is not stable: %q then %q", text, Format(again))
		}
	})
}

// FuzzQuoteRoundTrip: for any bytes, Unquote(Quote(b)) == b, and the
// parser reads Quote(b) as one value and QuoteName(b) as one name.
func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"", `C:\temp\app.log`, `a" PARTITION 3 VALUE "b`, `a\" PARTITION 3 VALUE \"b`,
		"'", "\"", "`", "\\", "\n\r\t\x00", "\xff\xfe", "héllo", "\u2028", "\xef\xbf\xbd", "--", "/*", ";", "from"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		q := Quote(b)
		got, err := Unquote(q)
		if err != nil {
			t.Fatalf("Unquote(Quote(%q)) = Unquote(%s): %v", b, q, err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("Unquote(Quote(%q)) = %q (literal %s)", b, got, q)
		}
		src := "PRODUCE INTO t VALUE " + q + " HEADER " + QuoteName(string(b)) + " NULL"
		st, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%s): %v", src, err)
		}
		p := st.(*Produce)
		if !bytes.Equal(p.Value.Bytes, b) || len(p.Headers) != 1 || p.Headers[0].Key != string(b) || p.Partition != nil || p.Key != nil {
			t.Fatalf("Parse(%s) = %#v", src, p)
		}
	})
}
