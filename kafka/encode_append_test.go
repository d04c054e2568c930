package kafka

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

// AppendEncoded hands out the records NextEncoded does, in the same order,
// however the runs are cut (by count or by size), and an encoding read
// hands its record slabs back to its pool once it has encoded them, zeroed.
func TestAppendEncodedHandsOutWhatNextEncodedDoes(t *testing.T) {
	f := newTracedFake(t)
	const nparts, n = 6, 3000
	parts := f.topic(t, "t", nparts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kcl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer kcl.Close()
	base := time.UnixMilli(1_700_000_000_000)
	for from := 0; from < n; from += 100 { // many batches per partition
		var recs []*kgo.Record
		for i := from; i < from+100; i++ {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(i % nparts), Timestamp: base.Add(time.Duration(i/4) * time.Millisecond),
				Key: []byte(strconv.Itoa(i)), Value: []byte(fmt.Sprintf("value %d", i))})
		}
		require.NoError(t, kcl.ProduceSync(ctx, recs...).FirstErr())
	}
	m, err := f.cl.Metadata(ctx, []string{"t"})
	require.NoError(t, err)
	var ranges []Range
	for _, tp := range parts {
		ranges = append(ranges, Range{TP: tp, Start: 0, End: n / nparts})
	}
	newEncoder := func() RecordEncoder {
		return func(buf []byte, rec *result.Record) []byte {
			return fmt.Appendf(buf, "%d/%d@%d %s=%s\n", rec.Partition, rec.Offset, rec.Timestamp, rec.Key, rec.Value)
		}
	}
	const budget = 16 << 10 // many small chunks, and Fetches that wait for the merge

	// What the read must write: the records in (timestamp, partition,
	// offset) order; record i is partition i%6's offset i/6.
	type row struct{ ts, part, off, i int }
	var rows []row
	for i := range n {
		rows = append(rows, row{i / 4, i % nparts, i / nparts, i})
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.part, b.part), cmp.Compare(a.off, b.off))
	})
	var want []byte
	for _, r := range rows {
		want = fmt.Appendf(want, "%d/%d@%d %d=value %d\n", r.part, r.off, base.UnixMilli()+int64(r.ts), r.i, r.i)
	}

	// Many Fetches decode into the lanes' pooled record slabs: a slab
	// reused too early would show in the bytes.
	mg := f.cl.NewEncodedMerge(ctx, m, ranges, budget, newEncoder)
	var next []byte
	for {
		b, ok, err := mg.NextEncoded()
		require.NoError(t, err)
		if !ok {
			break
		}
		next = append(next, b...)
	}
	mg.Close()
	require.Equal(t, string(want), string(next))

	for _, run := range []struct{ max, size int }{{1, 1 << 20}, {7, 1 << 20}, {1 << 20, 100}, {1 << 20, 64 << 10}} {
		t.Run(fmt.Sprintf("max %d size %d", run.max, run.size), func(t *testing.T) {
			mg := f.cl.NewEncodedMerge(ctx, m, ranges, budget, newEncoder)
			defer mg.Close()
			var got []byte
			total := 0
			for {
				before := len(got)
				var k int
				var more bool
				got, k, more, err = mg.AppendEncoded(got, run.max, before+run.size)
				require.NoError(t, err)
				require.LessOrEqual(t, k, run.max)
				require.Equal(t, k, countLines(got[before:]), "n counts the records appended")
				total += k
				if !more {
					break
				}
			}
			require.Equal(t, n, total)
			require.Equal(t, string(want), string(got))
		})
	}
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// A lane's record slab pool hands out a slab large enough or a new one
// (dropping its smallest when none is, so that it does not fill up with
// slabs smaller than the batches), takes back every slab it handed out
// once the lane is done with the records, zeroed, up to its bound, and
// lets them all go when a record is still referenced.
func TestRecordSlabPool(t *testing.T) {
	p := newRecPool(64 * recordBytes) // room for 64 records' slabs
	a := p.GetRecords(10)
	require.GreaterOrEqual(t, cap(a), 10)
	a = a[:cap(a)]
	a[3] = kgo.Record{Value: []byte("left over"), Offset: 3}
	p.PutRecords(a) // kgo's put: taken back with the others
	p.reclaim(true)
	require.Zero(t, a[3], "taken back zeroed")
	require.Len(t, p.free, 1)

	b := p.GetRecords(5)
	require.Equal(t, &a[0], &b[:1][0], "a slab large enough is reused")
	require.Len(t, b, 0)
	p.reclaim(true)

	big := p.GetRecords(40) // none fits: a new one, and the small one goes
	require.GreaterOrEqual(t, cap(big), 40)
	require.Empty(t, p.free)
	require.Zero(t, p.pooled)
	p.GetRecords(60) // over the bound once the 40 are back: left to the GC
	p.reclaim(true)
	require.Len(t, p.free, 1)
	require.LessOrEqual(t, p.pooled, p.max)

	p.GetRecords(10)
	p.reclaim(false) // a record still referenced: nothing taken back
	require.Len(t, p.free, 0)
	require.Empty(t, p.out)
}
