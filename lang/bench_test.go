package lang

import (
	"fmt"
	"strings"
	"testing"
)

// benchScript is a 1,000-statement script mixing every statement.
func benchScript() string {
	templates := []string{
		"SHOW TOPICS LIKE 'orders-%d*';",
		"DESCRIBE TOPIC orders.v%d;",
		"CONSUME orders FROM OFFSET %d PARTITION (0, 1, 2) LIMIT 50;",
		"SELECT * FROM \"events-%d\" FROM 15m AGO LIMIT 10 SKIP 5;",
		"CONSUME orders FROM TAIL (0:%d, 1:200, 2:300) LIMIT 100;",
		"PRODUCE INTO orders KEY 'k-%d' VALUE '{\"total\": 42, \"path\": \"C:\\\\tmp\"}' HEADER trace-id 'abc';",
		"-- a comment\nCREATE TOPIC t%d PARTITIONS 6 REPLICATION 3 WITH (cleanup.policy = 'compact');",
		"DROP TOPIC IF EXISTS t%d;",
		"EXPLAIN CONSUME orders FROM TIMESTAMP '2026-01-02T03:04:05Z' LIMIT %d;",
		"SHOW GROUPS; /* %d */",
	}
	var sb strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&sb, templates[i%len(templates)], i+1)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func BenchmarkParseScript1000(b *testing.B) {
	script := benchScript()
	b.SetBytes(int64(len(script)))
	b.ReportAllocs()
	for b.Loop() {
		srcs, err := Split(script)
		if err != nil {
			b.Fatal(err)
		}
		if len(srcs) != 1000 {
			b.Fatalf("split into %d statements", len(srcs))
		}
		for _, s := range srcs {
			if _, err := ParseSource(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkParseError measures the error path, which asks the grammar what
// it expected at the failing token.
func BenchmarkParseError(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("CONSUME orders FROM YESTERDAY LIMIT 5"); err == nil {
			b.Fatal("want an error")
		}
	}
}
