package kafka

import (
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchedRecords recycles the []kgo.Record arrays fetched records are
// decoded into: kgo allocates one per batch otherwise, and those arrays
// were half of a CONSUME's allocation (160 of 300 MB per million records,
// with the GC and write barriers that come with it). A reader that has
// copied a record's fields out calls its Recycle; once every record of a
// batch has been recycled, kgo puts the array back here. A record that is
// never recycled (a LIMIT that stops mid-batch, a path that keeps records)
// only keeps its batch's array out of the pool, for the GC to take.
var fetchedRecords = []kgo.Pool{&recordPool{}}

type recordPool struct{ p sync.Pool }

// GetRecords returns a slice with capacity at least n.
func (rp *recordPool) GetRecords(n int) []kgo.Record {
	if v, ok := rp.p.Get().(*[]kgo.Record); ok && cap(*v) >= n {
		return (*v)[:0]
	}
	return make([]kgo.Record, 0, n)
}

func (rp *recordPool) PutRecords(rs []kgo.Record) { rp.p.Put(&rs) }
