package exec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/lang"
)

// A SELECT list of plain record columns copies records on the record path
// (insert_passthrough.go), and copies exactly the columns it names: here
// key, value and the partition, so the copies have no headers, the
// source's partition, and the time of writing, while SELECT * keeps
// headers and timestamps. Both agree with what the SELECT shows.
func TestInsertOfRecordColumnsCopiesWhatItNames(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 6)
	f.spread(t, "named", 6)
	f.spread(t, "all", 3)
	recs := dlqRecords("src", []string{"a"})
	require.NoError(t, f.kcl.ProduceSync(ctxT(t), recs...).FirstErr())
	require.NotNil(t, passThrough(parse(t, "INSERT INTO named SELECT key, value, partition FROM src").(*lang.Insert)))
	require.Nil(t, passThrough(parse(t, "INSERT INTO named SELECT key, upper(value) AS value FROM src").(*lang.Insert)), "an expression takes the row path")

	before := time.Now().Add(-time.Second)
	mustRun(t, f.sess, parse(t, "INSERT INTO named SELECT key, value, partition FROM src WHERE value LIKE 'ok-%' EXECUTE"))
	got := committedEventually(t, f.sess, "named", 24)
	src := map[string]*kgoRecordView{}
	for _, r := range recs {
		src[string(r.Key)] = &kgoRecordView{partition: int64(r.Partition), value: string(r.Value)}
	}
	for _, r := range got {
		k := string(r[3].([]byte))
		want := src[k]
		require.NotNil(t, want, k)
		require.Equal(t, want.partition, r[0], "%s keeps the partition its column names", k)
		require.Equal(t, want.value, string(r[4].([]byte)))
		require.Regexp(t, `^ok-`, want.value, "WHERE applies")
		require.Empty(t, r[5], "%s: headers were not selected", k)
		require.True(t, r[2].(time.Time).After(before), "%s: stamped when written, the timestamp was not selected", k)
	}

	mustRun(t, f.sess, parse(t, "INSERT INTO all SELECT * FROM src EXECUTE"))
	all := committedEventually(t, f.sess, "all", 36)
	byKey := map[string]bool{}
	for _, r := range all {
		k := string(r[3].([]byte))
		byKey[k] = true
		require.Len(t, r[5], 2, "%s: SELECT * copies the headers", k)
		require.True(t, r[2].(time.Time).Before(before), "%s: SELECT * keeps the timestamp", k)
	}
	require.Len(t, byKey, 36)
}

type kgoRecordView struct {
	partition int64
	value     string
}
