package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// pages runs st and every \next after it, returning each page's keys, and
// fails after max pages.
func keyPages(t *testing.T, s *Session, src string, max int) [][]string {
	t.Helper()
	st := parse(t, src)
	var got [][]string
	for i := 0; ; i++ {
		require.Less(t, i, max, "\\next goes on past the last match: %v", got)
		res, err := s.Execute(ctxT(t), st)
		require.NoError(t, err)
		var page []string
		for {
			r, ok := res.Next()
			if !ok {
				break
			}
			page = append(page, text(r[0]))
		}
		require.NoError(t, res.Err())
		got = append(got, page)
		next, ok := pagerOf(res).NextPage()
		if !ok {
			return got
		}
		st = next
	}
}

// A FROM NEWEST browse with WHERE whose matches all sit in one partition:
// once the first match is shown, \next says there is nothing older,
// instead of offering empty pages forever because the other partitions'
// windows (which hold no match) were never marked as read.
func TestNewestWhereNextEnds(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _, _ := queryTopic(t, b)
		// c-0000, c-0006, ... are partition 0's first records.
		got := keyPages(t, s, fmt.Sprintf("SELECT key FROM %s FROM NEWEST WHERE key IN ('c-0000', 'c-0006', 'c-0012', 'c-0018', 'c-0024') LIMIT 2",
			lang.QuoteName(topic)), 10)
		require.Equal(t, [][]string{{"c-0018", "c-0024"}, {"c-0006", "c-0012"}, {"c-0000"}}, got)
		got = keyPages(t, s, fmt.Sprintf("SELECT key FROM %s FROM NEWEST WHERE key IN ('c-0000', 'c-0006', 'c-0012', 'c-0018') LIMIT 2 SKIP 1",
			lang.QuoteName(topic)), 10)
		require.Equal(t, [][]string{{"c-0006", "c-0012"}, {"c-0000"}}, got)
	})
}

// An offset bound at the int64 limit is no bound: offset <= max int64
// keeps every record (n+1 overflowed and read nothing).
func TestOffsetBoundAtLimit(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, all, _ := queryTopic(t, b)
		for _, where := range []string{"offset <= 9223372036854775807", "offset BETWEEN 0 AND 9223372036854775807", "timestamp <= 9223372036854775807"} {
			rows, _, _ := query(t, s, fmt.Sprintf("CONSUME %s WHERE %s LIMIT ALL", lang.QuoteName(topic), where))
			require.Len(t, rows, len(all), where)
		}
	})
}

// FOLLOW with WHERE partition = n reads partition n only, also after it
// looks for new partitions: the partitions the pushdown left out are not
// new, and reading each from its start (then dropping every record by
// WHERE) read the whole topic again.
func TestFollowKeepsPushedPartitions(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _, _ := queryTopic(t, b)
		cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		tr.reset()
		f := follow(t, s, fmt.Sprintf("CONSUME %s WHERE partition = 1 LIMIT 2 FOLLOW", lang.QuoteName(topic)))
		f.take(t, 2, 10*time.Second)
		time.Sleep(followNewPartitions + time.Second)
		want := produceKeys(t, cl, topic, []int32{0, 1, 2}, "new")
		require.Equal(t, want[1:2], f.take(t, 1, 5*time.Second))
		for _, it := range tr.items("Fetch") {
			require.True(t, strings.HasPrefix(it, topic+"/1@"), "FOLLOW WHERE partition = 1 fetched %s", it)
		}
	})
}

// A lower time bound is exact even when timestamps go back and forth: the
// read starts at the earliest offset whose timestamp is at or after it,
// and every record before that offset is older. Compared with the answer
// computed over every record.
func TestTimeBoundsNonMonotonic(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, cl, _ := createSpreadTopic(t, b)
		base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
		steps := []int{100, 300, 200, 50, 400, 150, 250}
		var recs []*kgo.Record
		for i, d := range steps {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 2), Key: []byte(fmt.Sprint(d)),
				Timestamp: base.Add(time.Duration(d) * time.Millisecond)})
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
		for _, c := range []struct {
			op   string
			at   int
			keep func(int) bool
		}{
			{">=", 150, func(d int) bool { return d >= 150 }},
			{">", 200, func(d int) bool { return d > 200 }},
		} {
			where := fmt.Sprintf("timestamp %s %d", c.op, base.Add(time.Duration(c.at)*time.Millisecond).UnixMilli())
			var want []string
			for _, d := range steps {
				if c.keep(d) {
					want = append(want, fmt.Sprint(d))
				}
			}
			rows, _, _ := query(t, s, fmt.Sprintf("SELECT key FROM %s WHERE %s LIMIT ALL", lang.QuoteName(topic), where))
			var got []string
			for _, r := range rows {
				got = append(got, text(r[0]))
			}
			require.ElementsMatch(t, want, got, where)
		}
	})
}

// A SELECT list that names the six record columns in their order has the
// record columns, so the jsonl, csv and tsv writers read it through
// NextRecord: with FOLLOW that path skipped the backlog (the projection
// above the scan hands out no records) and showed only new records.
func TestFollowSixColumnsKeepsBacklog(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, all, _ := queryTopic(t, b)
		// Bounded (a FOLLOW that showed no backlog would wait for ever),
		// with room for a loaded real cluster.
		ctx, cancel := context.WithTimeout(ctxT(t), 15*time.Second)
		defer cancel()
		res, err := s.Execute(ctx, parse(t, fmt.Sprintf("SELECT partition, offset, timestamp, key, value, headers FROM %s FROM NEWEST LIMIT 3 FOLLOW", lang.QuoteName(topic))))
		require.NoError(t, err)
		defer res.Close()
		var got []string
		if rs, ok := res.(result.RecordStream); ok && slices.Equal(rs.Columns(), result.RecordColumns) {
			for len(got) < 3 {
				rec, ok := rs.NextRecord()
				if !ok {
					break
				}
				got = append(got, string(rec.Key))
			}
		} else {
			for len(got) < 3 {
				row, ok := res.Next()
				if !ok {
					break
				}
				got = append(got, text(row[3]))
			}
		}
		require.NoError(t, res.Err())
		require.Equal(t, []string{all[len(all)-3].key, all[len(all)-2].key, all[len(all)-1].key}, got)
	})
}

// EXPLAIN of FROM NEWEST with WHERE says what runs: a backward scan of
// keys (a Fetch of its own, which may read the whole range when nothing
// matches) before the page's Fetch; it showed one Fetch and no scan.
func TestExplainNewestWhereScan(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _, _ := queryTopic(t, b)
		for src, scan := range map[string]bool{
			"EXPLAIN CONSUME %s FROM NEWEST WHERE value.amount > 1000 LIMIT 3": true,
			"EXPLAIN CONSUME %s WHERE value.amount > 1000 LIMIT 3 FOLLOW":      true,
			"EXPLAIN CONSUME %s FROM NEWEST LIMIT 3":                           false,
			"EXPLAIN CONSUME %s WHERE value.amount > 1000 LIMIT 3":             false,
		} {
			rows, _, _ := query(t, s, fmt.Sprintf(src, lang.QuoteName(topic)))
			fetchSteps := map[any]bool{}
			hasScan := false
			for _, r := range rows {
				if r[1] == "Fetch" {
					fetchSteps[r[0]] = true
				}
				if r[1] == "Scan" {
					hasScan = true
					require.Contains(t, text(r[4]), "backwards")
				}
			}
			require.Equal(t, scan, hasScan, src)
			if scan {
				require.Len(t, fetchSteps, 2, src)
			} else {
				require.Len(t, fetchSteps, 1, src)
			}
		}
	})
}

// A topic deleted while FOLLOW reads it ends FOLLOW with an error that
// says so, at the next look for partitions; it was retried without end
// and named only at Ctrl-C, as a warning about a Fetch error.
func TestFollowTopicDeleted(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, cl, adm := createSpreadTopic(t, b)
		produceKeys(t, cl, topic, []int32{0, 1}, "old")
		f := follow(t, s, fmt.Sprintf("CONSUME %s FOLLOW", lang.QuoteName(topic)))
		f.take(t, 2, 10*time.Second)
		_, err := adm.DeleteTopics(ctxT(t), topic)
		require.NoError(t, err)
		select {
		case _, ok := <-f.rows:
			require.False(t, ok, "no rows after the topic is deleted")
		case <-time.After(followNewPartitions + 10*time.Second):
			t.Fatal("FOLLOW goes on after its topic was deleted")
		}
		<-f.done
		require.ErrorContains(t, f.res.Err(), "was deleted")
	})
}

// A scan under a SELECT list reports how many records it read, as the
// scan under CONSUME does: the progress line of a long
// SELECT key FROM t WHERE ... said "0 rows so far" instead of how far the
// scan had read.
func TestProjectionReportsScanned(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, all, _ := queryTopic(t, b)
		_, _, res := query(t, s, fmt.Sprintf("SELECT key FROM %s WHERE key = 'none' LIMIT ALL", lang.QuoteName(topic)))
		read, ok := res.Stats().Scanned()
		require.True(t, ok, "a SELECT list's result reports what its scan read")
		require.EqualValues(t, len(all), read)
	})
}

// EXPLAIN's note on WHERE key = ... says it reads every partition only
// when it does: with PARTITION or WHERE partition = n it read fewer.
func TestExplainKeyNoteHonest(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _, _ := queryTopic(t, b)
		for src, every := range map[string]bool{
			"EXPLAIN CONSUME %s WHERE key = 'a'":                   true,
			"EXPLAIN CONSUME %s PARTITION 0 WHERE key = 'a'":       false,
			"EXPLAIN CONSUME %s WHERE key = 'a' AND partition = 2": false,
		} {
			rows, _, _ := query(t, s, fmt.Sprintf(src, lang.QuoteName(topic)))
			var note string
			for _, r := range rows {
				if r[1] == "Note" {
					note = text(r[4])
				}
			}
			require.Contains(t, note, "PARTITION FOR KEY 'a' would read only partition", src)
			require.Equal(t, every, strings.Contains(note, "reads every partition"), "%s: %s", src, note)
		}
	})
}
