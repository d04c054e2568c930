package exec

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// KEEP TIMESTAMP keeps each source record's timestamp even when the SELECT
// list has no timestamp column (as KEEP PARTITION keeps the source
// partition without a partition column), on the record path (plain
// columns) and on the row path (an expression) alike; TIMESTAMP NOW stamps
// the time of writing over SELECT *'s timestamp; without either option a
// SELECT list without a timestamp column gets the time of writing.
func TestInsertTimestampOptions(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		src, cl, _ := createSpreadTopic(t, b)
		recs := dlqRecords(src, []string{"x"}) // an hour old
		require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
		sourceTime := map[string]time.Time{}
		for _, r := range recs {
			sourceTime[string(r.Key)] = r.Timestamp
		}
		for _, c := range []struct {
			name, stmt string
			kept       bool // the source's timestamps, else the time of writing
		}{
			{"KEEP TIMESTAMP without a timestamp column, record path", "INSERT INTO %q KEEP TIMESTAMP SELECT key, value FROM %q LIMIT 4 EXECUTE", true},
			{"KEEP TIMESTAMP without a timestamp column, row path", "INSERT INTO %q KEEP TIMESTAMP SELECT key, upper(value) AS value FROM %q LIMIT 4 EXECUTE", true},
			{"KEEP TIMESTAMP with the timestamp column", "INSERT INTO %q KEEP TIMESTAMP SELECT key, value, timestamp FROM %q LIMIT 4 EXECUTE", true},
			{"KEEP TIMESTAMP and KEEP PARTITION over a filtered read", "INSERT INTO %q KEEP PARTITION KEEP TIMESTAMP SELECT key, value FROM %q WHERE value LIKE 'bad-%%' LIMIT 4 EXECUTE", true},
			{"the default: SELECT * has a timestamp column", "INSERT INTO %q SELECT * FROM %q LIMIT 4 EXECUTE", true},
			{"the default without a timestamp column: the time of writing", "INSERT INTO %q SELECT key, value FROM %q LIMIT 4 EXECUTE", false},
			{"TIMESTAMP NOW over SELECT *", "INSERT INTO %q TIMESTAMP NOW SELECT * FROM %q LIMIT 4 EXECUTE", false},
			{"TIMESTAMP NOW, row path", "INSERT INTO %q TIMESTAMP NOW SELECT key, upper(value) AS value FROM %q LIMIT 4 EXECUTE", false},
		} {
			t.Run(c.name, func(t *testing.T) {
				dst := kafkatest.TopicName(t)
				spreadDest(t, b, dst, 6)
				start := time.Now().Add(-time.Minute) // a broker's clock may be a little behind
				mustRun(t, s, parse(t, fmt.Sprintf(c.stmt, dst, src)))
				got := committedEventually(t, s, dst, 4)
				require.Len(t, got, 4)
				for _, r := range got {
					ts := r[2].(time.Time)
					want, ok := sourceTime[string(r[3].([]byte))]
					require.True(t, ok, "key %q is a source key", r[3])
					if c.kept {
						require.True(t, want.Equal(ts), "key %s: the source's timestamp %s, not %s", r[3], want, ts)
					} else {
						require.True(t, ts.After(start), "key %s: the time of writing, not %s", r[3], ts)
					}
				}
			})
		}
	})
}
