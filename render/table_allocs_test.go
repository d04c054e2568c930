package render

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"

	"github.com/kql-dev/kql/result"
)

// The table keeps a page of cells to measure, but their texts share 64 KiB
// blocks (cellMaker.intern): a cell costs no allocation of its own, only
// its share of a block. With a string per cell it was six per record.
func TestTableCellsDoNotAllocatePerCell(t *testing.T) {
	recs := make([]result.Record, 5000)
	for i := range recs {
		recs[i] = result.Record{Partition: int32(i % 32), Offset: int64(i), Timestamp: 1767322245000 + int64(i),
			Key: []byte("key-" + strconv.Itoa(i)), Value: []byte(`{"id":42,"p":3,"name":"abcdefghijklmnopqrstuvwxyz0123456789"}`),
			Headers: []result.Header{{Key: "trace", Value: []byte("abc")}}}
	}
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := Render(io.Discard, &recordSlice{recs: recs}, Options{Format: Table, Footer: true}); err != nil {
			t.Fatal(err)
		}
	})
	// About 170 bytes of cell text per record: a block per ~385 records,
	// plus the page's cells and the output buffer.
	if per := allocs / float64(len(recs)); per > 0.05 {
		t.Errorf("%.0f allocations for %d records (%.3f per record), want a share of a 64 KiB block per record", allocs, len(recs), per)
	}
}

// A table's cell texts take a page's worth of blocks, filled again page
// after page: its memory does not grow with the rows it writes (a
// million-record CONSUME ... --format table would otherwise keep every
// text it showed). Expanded does the same a record at a time.
func TestTableMemoryDoesNotGrowWithTheRows(t *testing.T) {
	value := []byte(`{"id":42,"p":3,"name":"abcdefghijklmnopqrstuvwxyz0123456789","more":"0123456789abcdef"}`)
	records := func(n int) result.Result {
		recs := make([]result.Record, n)
		for i := range recs {
			recs[i] = result.Record{Partition: int32(i % 32), Offset: int64(i), Timestamp: 1767322245000 + int64(i),
				Key: []byte("key-" + strconv.Itoa(i)), Value: value}
		}
		return &recordSlice{recs: recs}
	}
	rows := func(n int) result.Result {
		cols := []result.Column{{Name: "name", Type: result.String}, {Name: "n", Type: result.Int}, {Name: "value", Type: result.Bytes}}
		rs := make([]result.Row, n)
		for i := range rs {
			rs[i] = result.Row{"row-" + strconv.Itoa(i), int64(i), value}
		}
		return result.NewSlice(cols, rs)
	}
	for _, tc := range []struct {
		name   string
		make   func(int) result.Result
		format Format
	}{
		{"records table", records, Table},
		{"rows table", rows, Table},
		{"rows expanded", rows, Expanded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allocated := func(n int) uint64 {
				res := tc.make(n)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				if _, err := Render(io.Discard, res, Options{Format: tc.format, Footer: true, BatchSize: 500}); err != nil {
					t.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				return after.TotalAlloc - before.TotalAlloc
			}
			// 4 pages against 80: about 4 MiB more if the pages' texts
			// were kept (or each page took new blocks); a page's column
			// widths are a few bytes.
			few, many := allocated(2_000), allocated(40_000)
			require.LessOrEqual(t, int(many), int(few)+64<<10, fmt.Sprintf("bytes allocated for 2,000 rows: %d, for 40,000: %d", few, many))
		})
	}
}
