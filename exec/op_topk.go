package exec

import (
	"container/heap"
	"slices"

	"github.com/kql-dev/kql/exec/eval"
	"github.com/kql-dev/kql/result"
)

// topKFeed is the plan's TopK over a child feed: it reads every row of the
// child and keeps the first keep rows by ORDER BY in a heap, so memory is
// bounded by keep, not by the rows read; rows whose keys tie keep the
// child's order. A row is built (the child's row) only when the heap takes
// it.
type topKFeed struct {
	rowFeed
	ord  *eval.Order
	keep int64 // math.MaxInt64: sort every row
	// partialOK: a child that ends with a partial result (some items
	// failed) still yields the rows kept; else a child's error yields none,
	// for the rows kept are not the first by ORDER BY.
	partialOK bool
	out       []sortedRow
	i         int
	done      bool
}

type sortedRow struct {
	keys []eval.Value
	row  result.Row
	seq  int64 // the child's order: equal keys keep it
}

// topHeap is a max-heap by ORDER BY (the worst row on top), so a better
// row replaces the worst once keep rows are held.
type topHeap struct {
	rows []sortedRow
	ord  *eval.Order
}

func (h *topHeap) cmp(a, b sortedRow) int {
	if c := h.ord.Compare(a.keys, b.keys); c != 0 {
		return c
	}
	return int(a.seq - b.seq)
}
func (h *topHeap) Len() int           { return len(h.rows) }
func (h *topHeap) Less(i, j int) bool { return h.cmp(h.rows[i], h.rows[j]) > 0 }
func (h *topHeap) Swap(i, j int)      { h.rows[i], h.rows[j] = h.rows[j], h.rows[i] }
func (h *topHeap) Push(x any)         { h.rows = append(h.rows, x.(sortedRow)) }
func (h *topHeap) Pop() any {
	x := h.rows[len(h.rows)-1]
	h.rows = h.rows[:len(h.rows)-1]
	return x
}

func (t *topKFeed) advance() bool {
	if !t.done {
		t.done = true
		t.sort()
	}
	if t.i >= len(t.out) {
		return false
	}
	t.i++
	return true
}

func (t *topKFeed) row() result.Row { return t.out[t.i-1].row }

// sort reads the child and keeps its first rows by ORDER BY.
func (t *topKFeed) sort() {
	h := &topHeap{ord: t.ord}
	var seq int64
	var keys []eval.Value
	for t.rowFeed.advance() {
		keys = t.ord.Keys(keys[:0])
		if t.rowFeed.failed() {
			break
		}
		cand := sortedRow{keys: keys, seq: seq}
		seq++
		if int64(h.Len()) >= t.keep && (h.Len() == 0 || h.cmp(cand, h.rows[0]) >= 0) {
			continue // not better than the worst row kept (LIMIT 0 keeps none)
		}
		cand.keys = slices.Clone(keys)
		if cand.row = t.rowFeed.row(); t.rowFeed.failed() {
			break
		}
		heap.Push(h, cand)
		if int64(h.Len()) > t.keep {
			heap.Pop(h)
		}
	}
	if err := t.rowFeed.err(); err != nil && !(t.partialOK && result.IsPartial(err)) {
		return
	}
	if t.rowFeed.failed() {
		return
	}
	t.out = h.rows
	slices.SortFunc(t.out, h.cmp)
}
