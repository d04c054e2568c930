package exec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

// INSERT ... EXECUTE's progress line has a total to measure its ETA
// against, captured at the start: the records its check counted (INSERT
// INTO TOPIC expr), or else the source offsets the range spans, which the
// read passes row by row whether WHERE keeps a row or not.
func TestInsertProgressHasATotal(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "dst", 3)
	recs := f.produce(t, "src", 3, 10)
	for _, r := range recs {
		r.Headers = []kgo.RecordHeader{{Key: "to", Value: []byte("dst")}}
	}
	f.spread(t, "src2", 3)
	for _, r := range recs {
		r.Topic = "src2"
	}
	require.NoError(t, f.kcl.ProduceSync(ctxT(t), recs...).FirstErr())

	progress := func(stmt string) result.MoveSnapshot {
		p := &result.MoveProgress{}
		ctx := result.WithMoveProgress(ctxT(t), p)
		_, err := f.sess.Execute(ctx, parse(t, stmt))
		require.NoError(t, err)
		return p.Snapshot()
	}
	s := progress("INSERT INTO dst SELECT * FROM src EXECUTE")
	require.Equal(t, result.MoveSnapshot{Writing: true, Records: 30, Bytes: s.Bytes, Input: 30, TotalInput: 30,
		Ended: true, Committed: 30, CommittedBytes: s.Bytes}, s,
		"30 records of a range of 30 offsets: all of it passed, and committed")

	// WHERE keeps the first record of each partition: the read still
	// passes each partition's range up to its last kept row.
	s = progress("INSERT INTO dst SELECT * FROM src WHERE value LIKE 'v-%-0' EXECUTE")
	require.Equal(t, int64(3), s.Records)
	require.Equal(t, int64(30), s.TotalInput)
	require.Equal(t, int64(3), s.Input, "the offsets passed up to the last row kept in each partition")

	// LIMIT bounds the records as well as the range: 3 records written
	// of a 30-offset range is all of it, not a tenth.
	s = progress("INSERT INTO dst SELECT * FROM src LIMIT 3 EXECUTE")
	require.Equal(t, int64(3), s.Records)
	require.Equal(t, int64(3), s.TotalRecords, "the LIMIT is a total too")
	require.Equal(t, int64(30), s.TotalInput)

	s = progress("INSERT INTO TOPIC header('to') SELECT * FROM src2 WHERE value LIKE 'v-%-1' EXECUTE")
	require.Equal(t, int64(3), s.Records)
	require.Equal(t, int64(3), s.TotalRecords, "the check counted 3: the ETA is against them")
}
