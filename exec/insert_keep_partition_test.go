package exec

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// keepPartitionTopics is a source of 3 partitions, 4 records each (key
// k-<partition>-<i>, value v-<partition>-<i>, timestamps interleaving the
// partitions), and a destination of 2 partitions: partition 2 of the
// source is one the destination lacks.
func keepPartitionTopics(t *testing.T, b kafkatest.Backend) (src, dst string) {
	t.Helper()
	src, dst = kafkatest.TopicName(t), kafkatest.TopicName(t)+"-dst"
	spreadDest(t, b, src, 3)
	spreadDest(t, b, dst, 2)
	cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for i := range 4 {
		for p := range int32(3) {
			recs = append(recs, &kgo.Record{Topic: src, Partition: p, Key: []byte(fmt.Sprintf("k-%d-%d", p, i)), Value: []byte(fmt.Sprintf("v-%d-%d", p, i)),
				Timestamp: base.Add(time.Duration(3*i+int(p)) * time.Millisecond)})
		}
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	return src, dst
}

// KEEP PARTITION (and a plain partition column, which says the same)
// checks the partitions the SELECT reads after WHERE's pushdown, not every
// partition of the source; where the read takes a partition the
// destination lacks but WHERE
// or LIMIT may leave all its records out, each record is checked, before
// anything is written; without either, such a partition is refused before
// anything is read.
func TestInsertKeepPartitionChecksThePartitionsRead(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		src, _ := keepPartitionTopics(t, b)
		for _, c := range []struct {
			name, sel string
			keys      []string // copied, each to its source partition
			err       string   // else refused with this
			noRead    bool     // refused before reading
		}{
			{name: "PARTITION names only partitions the destination has", sel: "KEEP PARTITION SELECT * FROM %q PARTITION (0, 1) WHERE value LIKE '%%-3'",
				keys: []string{"k-0-3", "k-1-3"}},
			{name: "WHERE partition IN, pushed down", sel: "KEEP PARTITION SELECT * FROM %q WHERE partition IN (0, 1) AND value LIKE '%%-3'",
				keys: []string{"k-0-3", "k-1-3"}},
			{name: "WHERE whose matches are all in partitions the destination has", sel: "KEEP PARTITION SELECT * FROM %q WHERE key = 'k-0-2'",
				keys: []string{"k-0-2"}},
			{name: "a plain partition column, WHERE partition IN", sel: "SELECT key, value, partition FROM %q WHERE partition IN (0, 1) AND value LIKE '%%-3'",
				keys: []string{"k-0-3", "k-1-3"}},
			{name: "a plain partition column, WHERE whose matches fit", sel: "SELECT key, value, partition FROM %q WHERE key = 'k-1-1'",
				keys: []string{"k-1-1"}},
			{name: "WHERE that matches a record of the partition the destination lacks", sel: "KEEP PARTITION SELECT * FROM %q WHERE value LIKE '%%-2'",
				err: `KEEP PARTITION: the record at 2:2 comes from partition 2, which topic "%[1]s" lacks (its partitions are 0-1); nothing was written (narrow the SELECT's WHERE with AND partition < 2, or copy by key without KEEP PARTITION)`},
			{name: "no WHERE: refused before reading", sel: "KEEP PARTITION SELECT * FROM %q", noRead: true,
				err: `KEEP PARTITION: the SELECT reads partition 2 of %[2]s, which %[1]s lacks (its partitions are 0-1); nothing was read or written (read only partitions 0-1 with PARTITION (0, 1) or WHERE partition IN (0, 1), add partitions with ALTER TOPIC %[1]s PARTITIONS 3, or copy by key without KEEP PARTITION)`},
			{name: "a LIMIT that the records of partitions the destination has fill", sel: "KEEP PARTITION SELECT * FROM %q LIMIT 2",
				keys: []string{"k-0-0", "k-1-0"}},
			{name: "a plain partition column without WHERE: refused before reading", sel: "SELECT key, value, partition FROM %q", noRead: true,
				err: `the partition column: the SELECT reads partition 2 of %[2]s, which %[1]s lacks (its partitions are 0-1); nothing was read or written (read only partitions 0-1 with PARTITION (0, 1) or WHERE partition IN (0, 1), add partitions with ALTER TOPIC %[1]s PARTITIONS 3, or copy by key without the partition column)`},
		} {
			t.Run(c.name, func(t *testing.T) {
				dst := kafkatest.TopicName(t)
				spreadDest(t, b, dst, 2)
				for _, exec := range []string{"", " EXECUTE"} {
					tr.reset()
					rows, _, err := run(t, s, parse(t, fmt.Sprintf("INSERT INTO %q "+c.sel+exec, dst, src)))
					if c.err != "" {
						require.Error(t, err)
						require.Contains(t, err.Error(), fmt.Sprintf(c.err, dst, src))
						if c.noRead {
							require.Empty(t, tr.count("Fetch"), "refused before reading")
						}
						continue
					}
					require.NoError(t, err)
					require.Equal(t, int64(len(c.keys)), sumRecords(rows), "%s: %v", exec, rows)
				}
				if c.err != "" {
					require.Equal(t, int64(0), sumEnds(t, s, dst), "nothing reached the destination's log, not even an aborted transaction")
					return
				}
				got := committedEventually(t, s, dst, len(c.keys))
				var keys []string
				for _, r := range got {
					k := string(r[3].([]byte))
					keys = append(keys, k)
					var p, i int
					_, err := fmt.Sscanf(k, "k-%d-%d", &p, &i)
					require.NoError(t, err)
					require.Equal(t, int64(p), r[0], "%s kept its source partition", k)
				}
				require.ElementsMatch(t, c.keys, keys)
			})
		}
	})
}

// A computed partition column is checked for every record before anything
// is written: here the third record of partition 0 goes to partition 2,
// which the destination lacks, after a first transaction of 2 records
// could have been committed.
func TestInsertComputedPartitionCheckedBeforeWriting(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		src, dst := keepPartitionTopics(t, b)
		insertTxnsOf(t, 2)
		_, _, err := run(t, s, parse(t, fmt.Sprintf("INSERT INTO %q SELECT key, value, offset AS partition FROM %q WHERE partition = 0 EXECUTE", dst, src)))
		require.Error(t, err)
		require.Contains(t, err.Error(), fmt.Sprintf(`the record at 0:2 goes to partition 2, which topic %q lacks (its partitions are 0-1); nothing was written`, dst))
		require.NotContains(t, err.Error(), "committed")
		require.Equal(t, int64(0), sumEnds(t, s, dst), "nothing reached the destination's log")

		rows, _ := mustRun(t, s, parse(t, fmt.Sprintf("INSERT INTO %q SELECT key, value, offset AS partition FROM %q WHERE partition = 0 AND offset < 2 EXECUTE", dst, src)))
		require.Equal(t, int64(2), sumRecords(rows))
		for _, r := range committedEventually(t, s, dst, 2) {
			require.Equal(t, fmt.Sprintf("k-0-%d", r[0]), string(r[3].([]byte)), "offset %d of partition 0 went to partition %d", r[0], r[0])
		}
	})
}

// EXPLAIN says when EXECUTE checks every record's partition first (and so
// reads the source twice), and refuses what the INSERT would refuse.
func TestExplainInsertKeepPartitionCheck(t *testing.T) {
	f := kafkatest.NewFake(t)
	s, _ := session(t, f)
	src, dst := keepPartitionTopics(t, f)
	notes := func(stmt string) []string {
		t.Helper()
		rows, _ := mustRun(t, s, parse(t, fmt.Sprintf(stmt, dst, src)))
		var out []string
		for _, r := range rows {
			if r[1] == "Note" {
				out = append(out, r[4].(string))
			}
		}
		return out
	}
	const twice = "EXECUTE reads the source twice: every record's partition checked, then written"
	require.Contains(t, notes("EXPLAIN INSERT INTO %q KEEP PARTITION SELECT * FROM %q WHERE key = 'k-0-2' EXECUTE"), twice)
	require.NotContains(t, notes("EXPLAIN INSERT INTO %q KEEP PARTITION SELECT * FROM %q WHERE partition IN (0, 1) EXECUTE"), twice)
	require.NotContains(t, notes("EXPLAIN INSERT INTO %q SELECT * FROM %q WHERE key = 'k-0-2' EXECUTE"), twice)
	_, _, err := run(t, s, parse(t, fmt.Sprintf("EXPLAIN INSERT INTO %q KEEP PARTITION SELECT * FROM %q EXECUTE", dst, src)))
	require.ErrorContains(t, err, "KEEP PARTITION: the SELECT reads partition 2 of")
}
