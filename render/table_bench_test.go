package render

import (
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/kql-dev/kql/result"
)

// benchRecords are shaped like kql-bench's seeded topic: a short key, a
// 100 B JSON value, no headers, 32 partitions.
func benchRecords(n int) []result.Record {
	recs := make([]result.Record, n)
	for i := range recs {
		v := `{"id":` + strconv.Itoa(i) + `,"p":` + strconv.Itoa(i%10) + `,"name":"user-` + strconv.Itoa(i) + "-"
		v += strings.Repeat("x", 98-len(v)) + `"}`
		recs[i] = result.Record{Partition: int32(i % 32), Offset: int64(i / 32), Timestamp: 1767322245000 + int64(i),
			Key: []byte("k" + strconv.Itoa(i)), Value: []byte(v)}
	}
	return recs
}

// The record path of CONSUME ... --format table (what kql-bench's "kql
// table" times), without the read.
func BenchmarkRenderTableRecords(b *testing.B) {
	recs := benchRecords(100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(io.Discard, &recordSlice{recs: recs}, Options{Format: Table, Footer: true, BatchSize: 1000}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/row")
}
