package eval

import (
	"fmt"
	"testing"

	"github.com/kql-dev/kql/result"
)

// records are ~100-byte JSON values, as in the benchmark.
func benchRecords(n int) []result.Record {
	recs := make([]result.Record, n)
	for i := range recs {
		recs[i] = result.Record{
			Partition: int32(i % 32), Offset: int64(i), Timestamp: 1767323045000 + int64(i),
			Key:     []byte(fmt.Sprintf("c-%04d", i%1000)),
			Value:   []byte(fmt.Sprintf(`{"order_id":"o-%06d","customer":"c-%04d","p":%d,"amount":%d.25,"note":"plain text here"}`, i, i%1000, i%3+4, i)),
			Headers: []result.Header{{Key: "source", Value: []byte("web")}},
		}
	}
	return recs
}

var predicates = []string{
	"value LIKE '%zzzz%'",
	"value.p = 3",
	"key = 'c-0001' AND value.amount > 100 OR header('source') = 'x'",
	"value.customer ~ '^c-9' AND timestamp > 1767323045000",
	"value ILIKE '%ZZZZ%'",
}

// TestWhereAllocatesNothingPerRecord: the hot path of a scan (compile once,
// then match every record) allocates nothing per record.
func TestWhereAllocatesNothingPerRecord(t *testing.T) {
	recs := benchRecords(256)
	for _, src := range predicates {
		c := NewRecordCompiler(Options{})
		x, err := c.Compile(where(t, src))
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		allocs := testing.AllocsPerRun(2000, func() {
			x.MatchRecord(&recs[i%len(recs)])
			i++
		})
		if allocs != 0 {
			t.Errorf("WHERE %s: %.2f allocations per record, want 0", src, allocs)
		}
	}
}

// BenchmarkWhere measures WHERE evaluation per record; records/s is
// reported. The records match nothing, as in a search.
func BenchmarkWhere(b *testing.B) {
	recs := benchRecords(4096)
	for _, src := range predicates {
		b.Run(src, func(b *testing.B) {
			c := NewRecordCompiler(Options{})
			x, err := c.Compile(where(b, src))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(100)
			matched := 0
			for i := 0; b.Loop(); i++ {
				if x.MatchRecord(&recs[i%len(recs)]) {
					matched++
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			_ = matched
		})
	}
}
