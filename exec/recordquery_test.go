package exec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// orderRec is what the tests compute their expected answers from: every
// record written, in the order kql returns records.
type orderRec struct {
	p      int32
	off    int64
	ts     int64
	key    string
	amount int64
	status string
	region string // header
}

func (r orderRec) less(o orderRec) int {
	return cmp.Or(cmp.Compare(r.ts, o.ts), cmp.Compare(r.p, o.p), cmp.Compare(r.off, o.off))
}

// queryTopic writes JSON orders to a 6-partition topic led by all three
// brokers: 60 per partition, keys c-0000.., an amount, a status, a region
// header on most, timestamps one ms apart from an hour ago.
func queryTopic(t *testing.T, b kafkatest.Backend) (string, []orderRec, time.Time) {
	t.Helper()
	ctx := ctxT(t)
	topic, cl, adm := createSpreadTopic(t, b)
	require.Eventually(t, func() bool {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil || td[topic].Err != nil || len(td[topic].Partitions) != 6 {
			return false
		}
		leaders := map[int32]bool{}
		for _, p := range td[topic].Partitions {
			if p.Leader < 0 {
				return false
			}
			leaders[p.Leader] = true
		}
		return len(leaders) == 3
	}, 20*time.Second, 100*time.Millisecond, "leaders must cover all 3 brokers")
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	statuses := []string{"paid", "failed", "refunded"}
	var recs []*kgo.Record
	var want []orderRec
	offs := map[int32]int64{}
	for i := 0; i < 360; i++ {
		p := int32(i % 6)
		o := orderRec{p: p, off: offs[p], ts: base.Add(time.Duration(i) * time.Millisecond).UnixMilli(),
			key: fmt.Sprintf("c-%04d", i), amount: int64(i * 7 % 250), status: statuses[i%3], region: []string{"eu", "us", ""}[i%3]}
		offs[p]++
		rec := &kgo.Record{Topic: topic, Partition: p, Key: []byte(o.key), Timestamp: time.UnixMilli(o.ts),
			Value: []byte(fmt.Sprintf(`{"id":%d,"amount":%d,"status":%q,"items":[{"sku":"s-%d"}]}`, i, o.amount, o.status, i%5))}
		if o.region != "" {
			rec.Headers = []kgo.RecordHeader{{Key: "region", Value: []byte(o.region)}}
		}
		recs = append(recs, rec)
		want = append(want, o)
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	slices.SortFunc(want, orderRec.less)
	return topic, want, base
}

func query(t *testing.T, s *Session, src string) ([]result.Row, []result.Column, result.Result) {
	t.Helper()
	st, err := lang.Parse(src)
	require.NoError(t, err, src)
	res, err := s.Execute(ctxT(t), st)
	require.NoError(t, err, src)
	var rows []result.Row
	for {
		r, ok := res.Next()
		if !ok {
			break
		}
		rows = append(rows, r)
	}
	require.NoError(t, res.Err(), src)
	return rows, res.Columns(), res
}

func keysOf(rows []result.Row, col int) []string {
	var out []string
	for _, r := range rows {
		out = append(out, string(r[col].([]byte)))
	}
	return out
}

func filterKeys(all []orderRec, keep func(orderRec) bool) []string {
	var out []string
	for _, o := range all {
		if keep(o) {
			out = append(out, o.key)
		}
	}
	return out
}

func TestRecordQueriesOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, all, base := queryTopic(t, b)

		t.Run("WHERE on key, JSON paths, headers and time, across partitions", func(t *testing.T) {
			cases := []struct {
				where string
				keep  func(orderRec) bool
			}{
				{"key = 'c-0042'", func(o orderRec) bool { return o.key == "c-0042" }},
				{"value.status = 'failed' AND value.amount > 100", func(o orderRec) bool { return o.status == "failed" && o.amount > 100 }},
				{"value.items[0].sku = 's-3'", func(o orderRec) bool { return strings.HasSuffix(o.key, "3") || strings.HasSuffix(o.key, "8") }},
				{"header('region') = 'eu'", func(o orderRec) bool { return o.region == "eu" }},
				{"header('region') IS NULL", func(o orderRec) bool { return o.region == "" }},
				{"key LIKE 'c-01%' OR key ~ '^c-03[0-4]'", func(o orderRec) bool {
					return strings.HasPrefix(o.key, "c-01") || (strings.HasPrefix(o.key, "c-03") && o.key[4] <= '4')
				}},
				{fmt.Sprintf("timestamp >= %d AND timestamp < %d", base.UnixMilli()+100, base.UnixMilli()+130), func(o orderRec) bool {
					return o.ts >= base.UnixMilli()+100 && o.ts < base.UnixMilli()+130
				}},
				{"value.amount BETWEEN 10 AND 20 AND partition IN (1, 4)", func(o orderRec) bool { return o.amount >= 10 && o.amount <= 20 && (o.p == 1 || o.p == 4) }},
			}
			for _, c := range cases {
				rows, _, _ := query(t, s, fmt.Sprintf("CONSUME %s WHERE %s LIMIT ALL", lang.QuoteName(topic), c.where))
				require.Equal(t, filterKeys(all, c.keep), keysOf(rows, 3), c.where)
			}
		})

		t.Run("LIMIT counts matches; SKIP skips matches", func(t *testing.T) {
			want := filterKeys(all, func(o orderRec) bool { return o.status == "paid" })
			rows, _, _ := query(t, s, fmt.Sprintf("CONSUME %s WHERE value.status = 'paid' SKIP 5 LIMIT 7", lang.QuoteName(topic)))
			require.Equal(t, want[5:12], keysOf(rows, 3))
		})

		t.Run("FROM NEWEST with WHERE is the last n matches; \\next pages back", func(t *testing.T) {
			want := filterKeys(all, func(o orderRec) bool { return o.amount < 30 })
			st := parse(t, fmt.Sprintf("CONSUME %s FROM NEWEST WHERE value.amount < 30 LIMIT 8", lang.QuoteName(topic))).(*lang.Consume)
			var got [][]string
			for i := 0; i < 40; i++ {
				res, err := s.Execute(ctxT(t), st)
				require.NoError(t, err)
				var page []string
				for {
					r, ok := res.Next()
					if !ok {
						break
					}
					page = append(page, string(r[3].([]byte)))
				}
				require.NoError(t, res.Err())
				got = append(got, page)
				next, ok := pagerOf(res).NextPage()
				if !ok {
					break
				}
				st = next
			}
			require.Equal(t, want[len(want)-8:], got[0])
			var flat []string
			for i := len(got) - 1; i >= 0; i-- {
				flat = append(flat, got[i]...)
			}
			require.Equal(t, want, flat, "pages back to the first match, no overlap, no gap")
		})

		t.Run("projection: column names, JSON paths, arithmetic", func(t *testing.T) {
			rows, cols, _ := query(t, s, fmt.Sprintf("SELECT key, value.amount * 2 AS double, upper(value.status), header('region') FROM %s WHERE key = 'c-0004'", lang.QuoteName(topic)))
			var names []string
			for _, c := range cols {
				names = append(names, c.Name)
			}
			require.Equal(t, []string{"key", "double", "upper(value.status)", "header('region')"}, names)
			require.Len(t, rows, 1)
			require.Equal(t, "c-0004", string(rows[0][0].([]byte)))
			require.Equal(t, []string{"56", "FAILED", "us"}, []string{text(rows[0][1]), text(rows[0][2]), text(rows[0][3])})
		})

		t.Run("aggregates and GROUP BY equal the same computed over every record", func(t *testing.T) {
			type agg struct {
				n, sum, min, max int64
				keys             map[string]bool
			}
			want := map[string]*agg{}
			for _, o := range all {
				a := want[o.status]
				if a == nil {
					a = &agg{min: 1 << 62, keys: map[string]bool{}}
					want[o.status] = a
				}
				a.n++
				a.sum += o.amount
				a.min = min(a.min, o.amount)
				a.max = max(a.max, o.amount)
				a.keys[o.region] = true
			}
			rows, _, _ := query(t, s, fmt.Sprintf("SELECT value.status AS status, count(*), sum(value.amount), min(value.amount), max(value.amount), count(DISTINCT header('region')) FROM %s GROUP BY value.status ORDER BY status", lang.QuoteName(topic)))
			require.Len(t, rows, 3)
			for _, r := range rows {
				a := want[text(r[0])]
				require.NotNil(t, a, "group %v", r[0])
				distinct := int64(len(a.keys))
				if a.keys[""] {
					distinct-- // count(DISTINCT e) leaves out NULL
				}
				require.Equal(t, []string{fmt.Sprint(a.n), fmt.Sprint(a.sum), fmt.Sprint(a.min), fmt.Sprint(a.max), fmt.Sprint(distinct)},
					[]string{text(r[1]), text(r[2]), text(r[3]), text(r[4]), text(r[5])}, "group %s", text(r[0]))
			}
			rows, _, _ = query(t, s, fmt.Sprintf("SELECT count(*) FROM %s WHERE value.amount > 200", lang.QuoteName(topic)))
			require.Equal(t, fmt.Sprint(len(filterKeys(all, func(o orderRec) bool { return o.amount > 200 }))), text(rows[0][0]))
		})

		t.Run("ORDER BY keeps the top LIMIT", func(t *testing.T) {
			sorted := slices.Clone(all)
			slices.SortStableFunc(sorted, func(a, b orderRec) int { return cmp.Or(-cmp.Compare(a.amount, b.amount), a.less(b)) })
			var want []string
			for _, o := range sorted[:5] {
				want = append(want, o.key)
			}
			rows, _, _ := query(t, s, fmt.Sprintf("SELECT key, value.amount FROM %s ORDER BY value.amount DESC, timestamp LIMIT 5", lang.QuoteName(topic)))
			require.Equal(t, want, keysOf(rows, 0))
			rows, _, _ = query(t, s, fmt.Sprintf("CONSUME %s ORDER BY value.amount DESC, timestamp LIMIT 5", lang.QuoteName(topic)))
			require.Equal(t, want, keysOf(rows, 3), "CONSUME ... ORDER BY returns the six record columns")
		})

		t.Run("pushdown: partition and time bounds read less, and EXPLAIN says so", func(t *testing.T) {
			tr.reset()
			rows, _, _ := query(t, s, fmt.Sprintf("CONSUME %s WHERE partition = 2 LIMIT ALL", lang.QuoteName(topic)))
			require.Len(t, rows, 60)
			for _, it := range tr.items("Fetch") {
				require.True(t, strings.HasPrefix(it, topic+"/2@"), "a Fetch for %s", it)
			}
			tr.reset()
			from := all[len(all)-12].ts
			rows, _, _ = query(t, s, fmt.Sprintf("CONSUME %s WHERE timestamp >= %d LIMIT ALL", lang.QuoteName(topic), from))
			require.Len(t, rows, 12)
			// The last 12 records are the last 2 of each partition (60
			// each): no Fetch asks for anything below offset 58.
			for _, it := range tr.items("Fetch") {
				var p int
				var off int64
				_, err := fmt.Sscanf(it[len(topic)+1:], "%d@%d", &p, &off)
				require.NoError(t, err, it)
				require.GreaterOrEqual(t, off, int64(58), "a Fetch below the timestamp's start offset: %s", it)
			}
			require.Equal(t, 3, len(tr.count("ListOffsets")), "ListOffsets by time goes to each leader")
			require.Equal(t, 3*3, sum(tr.count("ListOffsets")), "earliest, latest and by time: one request per leader each")

			ex, _, _ := query(t, s, fmt.Sprintf("EXPLAIN CONSUME %s WHERE timestamp >= %d AND key = 'c-0001'", lang.QuoteName(topic), from))
			var text []string
			for _, r := range ex {
				text = append(text, fmt.Sprint(r...))
			}
			joined := strings.Join(text, "\n")
			require.Contains(t, joined, "Pushdown")
			require.Contains(t, joined, "ListOffsets by time")
			require.Contains(t, joined, fmt.Sprintf("PARTITION FOR KEY 'c-0001' would read only partition %d", kafka.PartitionForKey(topic, []byte("c-0001"), 6)))
		})

		t.Run("values that cannot compare are NULL, with one warning", func(t *testing.T) {
			rows, _, res := query(t, s, fmt.Sprintf("CONSUME %s WHERE value.status > 5 LIMIT ALL", lang.QuoteName(topic)))
			require.Empty(t, rows)
			w := res.Stats().Warnings()
			require.Len(t, w, 1)
			require.Contains(t, w[0], "value.status > 5")
		})

		t.Run("column names follow AS", func(t *testing.T) {
			st := parse(t, fmt.Sprintf("SELECT key AS k, value.amount AS a FROM %s LIMIT 1", lang.QuoteName(topic)))
			res, err := s.Execute(ctxT(t), st)
			require.NoError(t, err)
			row, ok := res.Next()
			require.True(t, ok)
			require.Equal(t, []string{"k", "a"}, []string{res.Columns()[0].Name, res.Columns()[1].Name})
			require.Len(t, row, 2)
			res.Close()
		})

		t.Run("PARTITION FOR KEY reads the partition PRODUCE writes the key to", func(t *testing.T) {
			_, _ = mustRun(t, s, parse(t, fmt.Sprintf("PRODUCE INTO %s KEY 'k-for-key' VALUE 'v'", lang.QuoteName(topic))))
			tr.reset()
			rows, _, _ := query(t, s, fmt.Sprintf("CONSUME %s PARTITION FOR KEY 'k-for-key' WHERE key = 'k-for-key' LIMIT ALL", lang.QuoteName(topic)))
			require.Len(t, rows, 1)
			want := kafka.PartitionForKey(topic, []byte("k-for-key"), 6)
			require.EqualValues(t, want, rows[0][0])
			fetched := tr.items("Fetch")
			for _, it := range fetched {
				require.True(t, strings.HasPrefix(it, fmt.Sprintf("%s/%d@", topic, want)), "only the key's partition is read: %s", it)
			}
		})
	})
}

// items lists the partitions or groups of every request of api, in order.
func (tr *tracer) items(api string) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, e := range tr.events {
		if e.API == api {
			out = append(out, e.Items...)
		}
	}
	return out
}

// text is a value as the text formats show it.
func text(v any) string {
	switch b := v.(type) {
	case []byte:
		return string(b)
	case result.JSON:
		return string(b)
	}
	return fmt.Sprint(v)
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

// TestSkipAppliesToOrderByAndAggregates: SKIP leaves out the first rows
// ORDER BY or an aggregation returns, as SQL's OFFSET does (the
// differential test found it silently dropped there).
func TestSkipAppliesToOrderByAndAggregates(t *testing.T) {
	b := kafkatest.NewFake(t)
	s, _ := session(t, b)
	topic, _, _ := queryTopic(t, b)
	cases := []struct {
		src  string
		want []string
	}{
		{"SELECT key FROM %s ORDER BY key LIMIT 3 SKIP 2", []string{"c-0002", "c-0003", "c-0004"}},
		{"SELECT key FROM %s ORDER BY key DESC LIMIT 2 OFFSET 1", []string{"c-0358", "c-0357"}},
		{"SELECT key, count(*) FROM %s GROUP BY key ORDER BY 1 DESC LIMIT 2 SKIP 1", []string{"c-0358", "c-0357"}},
		{"SELECT value.status, count(*) FROM %s GROUP BY value.status SKIP 1", []string{"failed", "refunded"}},
		{"SELECT value.status, count(*) FROM %s GROUP BY value.status SKIP 3", nil},
	}
	for _, tc := range cases {
		src := fmt.Sprintf(tc.src, lang.QuoteName(topic))
		rows, _, _ := query(t, s, src)
		var got []string
		for _, r := range rows {
			got = append(got, string(r[0].([]byte)))
		}
		require.Equal(t, tc.want, got, src)
	}
	rows, _, _ := query(t, s, "SELECT count(*) FROM "+lang.QuoteName(topic)+" SKIP 1")
	require.Empty(t, rows, "SKIP 1 of the one row of an aggregate without GROUP BY")

	// EXPLAIN says SKIP where it applies, and only when it is given.
	explains := []struct{ src, want string }{
		{"SELECT key FROM %s ORDER BY key LIMIT 3 SKIP 2", "keeps the first SKIP + LIMIT rows by ORDER BY, then leaves out the first SKIP"},
		{"SELECT key FROM %s ORDER BY key LIMIT 3", "keeps the first LIMIT rows by ORDER BY"},
		{"SELECT value.status, count(*) FROM %s GROUP BY value.status OFFSET 1", "then SKIP and LIMIT skip and limit the groups"},
		{"SELECT value.status, count(*) FROM %s GROUP BY value.status", "then LIMIT limits the groups"},
	}
	for _, tc := range explains {
		src := "EXPLAIN " + fmt.Sprintf(tc.src, lang.QuoteName(topic))
		ex, _, _ := query(t, s, src)
		var lines []string
		for _, r := range ex {
			lines = append(lines, fmt.Sprint(r...))
		}
		joined := strings.Join(lines, "\n")
		require.Contains(t, joined, tc.want, src)
		if !strings.Contains(tc.src, "SKIP") && !strings.Contains(tc.src, "OFFSET") {
			require.NotContains(t, joined, "SKIP", src)
		}
	}
}
