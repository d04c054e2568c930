package exec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/ingest"
	"github.com/kql-dev/kql/kafka"
)

// spillCases are records whose every field a spill must give back byte for
// byte: NULL and empty keys, values and header values, binary bytes,
// repeated header keys, timestamps before the epoch, at it and none (the
// time of writing), and a value bigger than a spill block.
func spillCases() []kafka.OutRecord {
	big := bytes.Repeat([]byte{0x00, 0xff, 'x'}, spillBlock/2) // 1.5 blocks
	var out []kafka.OutRecord
	for i := range 300 {
		r := kafka.OutRecord{Topic: "t", Partition: int32(i % 7), Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i)),
			Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i))}
		switch i % 10 {
		case 1:
			r.Key, r.Value = nil, nil // a tombstone without a key
		case 2:
			r.Key, r.Value = []byte{}, []byte{} // empty, not NULL
		case 3:
			r.Key, r.Value = []byte{0xff, 0x00, byte(i)}, []byte{0x80, 0x00, 0x81}
		case 4:
			r.Headers = []kafka.Header{{Key: "h", Value: []byte("1")}, {Key: "h", Value: nil}, {Key: "h", Value: []byte{}}, {Key: "", Value: []byte{0}}}
		case 5:
			r.Timestamp = time.UnixMilli(-1_234_567) // before the epoch
		case 6:
			r.Timestamp = time.UnixMilli(0) // the epoch, not "none"
		case 7:
			r.Timestamp = time.Time{} // stamped when written
		case 8:
			if i == 8 || i == 158 {
				r.Value = big
			}
		}
		out = append(out, r)
	}
	return out
}

// spillPos is where record i of spillCases is in its input: some span
// lines, every other one has a FORMAT json span (each starting after the
// last one's end), which may start its line.
func spillPos(i int) importPos {
	at := importPos{line: 3*i + 1, endLine: 3*i + 1 + i%3}
	if i%2 == 0 {
		at.span = ingest.Span{Offset: int64(1000 * i), End: int64(1000*i + 10*i + 2), Col: int32(i % 5), EndCol: int32(i % 7), LineStart: i%4 == 0}
	}
	return at
}

func TestImportSpillGivesBackEveryFieldExactly(t *testing.T) {
	for _, budget := range []int{8 << 20, 4 << 10} { // in memory; in its file
		t.Run(fmt.Sprint("budget ", budget), func(t *testing.T) {
			old := spillMemBudget
			spillMemBudget = budget
			t.Cleanup(func() { spillMemBudget = old })
			t.Setenv("TMPDIR", t.TempDir())
			want := spillCases()
			s := newImportSpill()
			defer s.Close()
			for i := range want {
				s.add(&want[i], spillPos(i))
			}
			require.NoError(t, s.finish())
			require.Equal(t, budget < 1<<20, s.f != nil, "spilled to a file")
			entries, err := os.ReadDir(os.Getenv("TMPDIR"))
			require.NoError(t, err)
			require.Empty(t, entries, "the spill file is unlinked")

			// Records handed out stay intact until the writer says the
			// producer is done with them (every 17th record here).
			type held struct {
				rec  kafka.OutRecord
				want int
			}
			var since []held
			i := 0
			var answered int64
			before := time.Now()
			err = s.each(context.Background(), "dst", func() int64 { return answered }, func(r *kafka.OutRecord, at importPos) error {
				require.Equal(t, spillPos(i), at)
				since = append(since, held{kafka.OutRecord{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value,
					Headers: append([]kafka.Header(nil), r.Headers...), Timestamp: r.Timestamp}, i})
				i++
				if i%17 == 0 {
					for _, h := range since {
						w := want[h.want]
						got := h.rec
						require.Equal(t, "dst", got.Topic)
						require.Equal(t, w.Partition, got.Partition, "record %d", h.want)
						require.Equal(t, w.Key == nil, got.Key == nil, "record %d key NULL", h.want)
						require.True(t, bytes.Equal(w.Key, got.Key), "record %d key", h.want)
						require.Equal(t, w.Value == nil, got.Value == nil, "record %d value NULL", h.want)
						require.True(t, bytes.Equal(w.Value, got.Value), "record %d value", h.want)
						require.Equal(t, w.Headers, got.Headers, "record %d headers", h.want)
						if w.Timestamp.IsZero() {
							require.False(t, got.Timestamp.Before(before.Truncate(time.Millisecond)), "record %d stamped now", h.want)
						} else {
							require.Equal(t, w.Timestamp.UnixMilli(), got.Timestamp.UnixMilli(), "record %d timestamp", h.want)
						}
					}
					since = since[:0]
					answered = int64(i)
				}
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, len(want), i)
		})
	}
}

// The spill's memory does not grow with the transaction: a block read
// from the spill file is read into again once the producer has answered
// every record of it (here it answers all but the last 1,000 records
// handed out, and never commits), so 100,000 records in about 50 blocks
// are read through a handful.
func TestSpillRereadsAnsweredBlocks(t *testing.T) {
	old := spillMemBudget
	spillMemBudget = 0
	t.Cleanup(func() { spillMemBudget = old })
	t.Setenv("TMPDIR", t.TempDir())
	s := newImportSpill()
	defer s.Close()
	const n = 100000
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("value %d, with some text to make it about a hundred bytes long, as the bench's records are", i)
		s.add(&kafka.OutRecord{Partition: int32(i % 3), Key: []byte(fmt.Sprint(i)), Value: []byte(v)}, importPos{line: i + 1, endLine: i + 1})
	}
	require.NoError(t, s.finish())
	require.NotNil(t, s.f, "spilled to a file")
	var handed int64
	err := s.each(context.Background(), "dst", func() int64 { return max(0, handed-1000) }, func(r *kafka.OutRecord, at importPos) error {
		handed++
		require.Equal(t, int(handed), at.line)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, int64(n), handed)
	require.LessOrEqual(t, s.made, 4, "blocks allocated to read %d records", n)
}
