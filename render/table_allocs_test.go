package render

import (
	"io"
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
