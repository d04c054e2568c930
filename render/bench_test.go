package render

import (
	"io"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/kql-dev/kql/result"
)

// A CONSUME-shaped row: what a large result is made of.
var benchCols = []result.Column{
	{Name: "partition", Type: result.Int},
	{Name: "offset", Type: result.Int},
	{Name: "timestamp", Type: result.Time},
	{Name: "key", Type: result.Bytes},
	{Name: "value", Type: result.Bytes},
	{Name: "headers", Type: result.Headers},
}

func benchRow() result.Row {
	return result.Row{
		int64(3), int64(1234567), time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC),
		[]byte("customer-00042"),
		[]byte(`{"order_id":"o-981723","amount":129.95,"currency":"EUR","items":3}`),
		[]result.Header{{Key: "source", Value: []byte("web")}, {Key: "trace", Value: []byte("a1b2c3d4")}},
	}
}

// genResult hands out the same row n times without allocating, so a
// benchmark measures only what rendering costs.
type genResult struct {
	cols  []result.Column
	row   result.Row
	n, i  int
	stats result.Stats
}

func (g *genResult) Columns() []result.Column { return g.cols }
func (g *genResult) Stats() *result.Stats     { return &g.stats }
func (g *genResult) Err() error               { return nil }
func (g *genResult) Close()                   {}
func (g *genResult) Next() (result.Row, bool) {
	if g.i >= g.n {
		return nil, false
	}
	g.i++
	return g.row, true
}

// benchRender renders rows rows per op and reports per-row costs. Bytes and
// allocations per row that stay flat as rows grow mean memory does not grow
// with the row count.
func benchRender(b *testing.B, f Format, rows int, width int) {
	b.ReportAllocs()
	row := benchRow()
	for b.Loop() {
		res := &genResult{cols: benchCols, row: row, n: rows}
		n, err := Render(io.Discard, res, Options{Format: f, Width: width, Footer: true})
		if err != nil || n != int64(rows) {
			b.Fatalf("rendered %d rows, err %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}

func BenchmarkRenderTable100k(b *testing.B)    { benchRender(b, Table, 100_000, 0) }
func BenchmarkRenderTable100kCut(b *testing.B) { benchRender(b, Table, 100_000, 100) }
func BenchmarkRenderExpanded100k(b *testing.B) { benchRender(b, Expanded, 100_000, 0) }
func BenchmarkRenderJSON1M(b *testing.B)       { benchRender(b, JSON, 1_000_000, 0) }
func BenchmarkRenderJSONL10k(b *testing.B)     { benchRender(b, JSONL, 10_000, 0) }
func BenchmarkRenderJSONL1M(b *testing.B)      { benchRender(b, JSONL, 1_000_000, 0) }
func BenchmarkRenderCSV10k(b *testing.B)       { benchRender(b, CSV, 10_000, 0) }
func BenchmarkRenderCSV1M(b *testing.B)        { benchRender(b, CSV, 1_000_000, 0) }
func BenchmarkRenderTSV1M(b *testing.B)        { benchRender(b, TSV, 1_000_000, 0) }

// BenchmarkTablewriterBatches renders the same rows as
// BenchmarkRenderTable100k with tablewriter v1, one table per batch of
// DefaultBatchSize rows: the alternative the table writer was measured
// against (see the comment in table.go).
func BenchmarkTablewriterBatches100k(b *testing.B) {
	b.ReportAllocs()
	row := benchRow()
	const rows = 100_000
	header := make([]string, len(benchCols))
	for i, c := range benchCols {
		header[i] = c.Name
	}
	cells := make([]string, len(benchCols))
	for b.Loop() {
		for done := 0; done < rows; done += DefaultBatchSize {
			t := tablewriter.NewTable(io.Discard, tablewriter.WithHeaderAutoFormat(tw.Off))
			t.Header(header)
			for range DefaultBatchSize {
				for i, v := range row {
					cells[i] = Value(v, benchCols[i].Type)
				}
				if err := t.Append(cells); err != nil {
					b.Fatal(err)
				}
			}
			if err := t.Render(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}
