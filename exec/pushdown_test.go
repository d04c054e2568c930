package exec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
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
