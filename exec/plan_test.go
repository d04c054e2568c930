package exec

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// Planning a record statement, with no cluster: the partitions chosen,
// what WHERE pushes down, the defaults of FROM, LIMIT and FOLLOW, and
// PARTITION FOR KEY. Each case is what a user would see read.

var planNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// planTopic is a topic "t" with n partitions, 0..n-1.
func planTopic(n int) *kafka.Topic {
	t := &kafka.Topic{Name: "t"}
	for i := range n {
		t.Partitions = append(t.Partitions, kafka.Partition{ID: int32(i), Leader: int32(i % 3)})
	}
	return t
}

func planOf(t *testing.T, src string, key []byte) (*consumePlan, error) {
	t.Helper()
	st, ok := parse(t, src).(*lang.Consume)
	require.True(t, ok, "%s is no record statement", src)
	return planConsume(st, planInput{topic: planTopic(6), now: planNow, keyBytes: key})
}

func partIDs(tps []kafka.TopicPartition) []int32 {
	out := []int32{}
	for _, tp := range tps {
		out = append(out, tp.Partition)
	}
	return out
}

func TestPlanPartitions(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []int32
		err  string
	}{
		{src: "CONSUME t", want: []int32{0, 1, 2, 3, 4, 5}},
		{src: "CONSUME t PARTITION 2", want: []int32{2}},
		{src: "CONSUME t PARTITIONS (1, 4)", want: []int32{1, 4}},
		{src: "CONSUME t PARTITION 9", err: `topic "t" has no partition 9 (in PARTITION); its partitions are 0-5`},
		{src: "CONSUME t FROM TAIL (1:5, 3:7)", want: []int32{1, 3}},
		{src: "CONSUME t FROM ANCHOR (0:1, 5:2)", want: []int32{0, 5}},
		{src: "CONSUME t FROM ANCHOR (7:1)", err: "no partition 7 (in FROM ANCHOR)"},
		{src: "CONSUME t PARTITION 2 FROM TAIL (1:5)", err: "PARTITION 2 is not in the FROM TAIL list"},
		{src: "CONSUME t WHERE partition = 3", want: []int32{3}},
		{src: "CONSUME t WHERE 3 = partition", want: []int32{3}},
		{src: "CONSUME t WHERE partition IN (1, 2, 5)", want: []int32{1, 2, 5}},
		{src: "CONSUME t WHERE partition IN (1, 2) AND partition = 2", want: []int32{2}},
		{src: "CONSUME t WHERE partition = 1 AND partition = 2", want: []int32{}},
		{src: "CONSUME t PARTITION (1, 2) WHERE partition = 2", want: []int32{2}},
		// Not pushed: the scan reads every partition and the filter decides.
		{src: "CONSUME t WHERE partition = 1 OR partition = 2", want: []int32{0, 1, 2, 3, 4, 5}},
		{src: "CONSUME t WHERE partition NOT IN (1)", want: []int32{0, 1, 2, 3, 4, 5}},
		{src: "CONSUME t WHERE partition > 3", want: []int32{0, 1, 2, 3, 4, 5}},
		{src: "CONSUME t WHERE partition IN (1, offset)", want: []int32{0, 1, 2, 3, 4, 5}},
	} {
		t.Run(c.src, func(t *testing.T) {
			pl, err := planOf(t, c.src, nil)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, partIDs(pl.parts))
		})
	}
}

func TestPlanPartitionForKey(t *testing.T) {
	key := []byte("c-0042")
	want := kafka.PartitionForKey("t", key, 6)
	pl, err := planOf(t, "CONSUME t PARTITION FOR KEY 'c-0042'", key)
	require.NoError(t, err)
	require.Equal(t, []int32{want}, partIDs(pl.parts))
	require.Equal(t, want, *pl.keyPartition)
	require.Equal(t, []int32{want}, pl.stmt.Partitions, "the next page and FOLLOW keep the key's partition")
	require.Contains(t, pl.ops[0].detail, "PARTITION FOR KEY")

	// The key's bytes as its producers wrote them decide, not the text.
	enc := []byte{0, 0, 0, 0, 1, 'x'}
	pl, err = planOf(t, "CONSUME t PARTITION FOR KEY 'c-0042'", enc)
	require.NoError(t, err)
	require.Equal(t, kafka.PartitionForKey("t", enc, 6), *pl.keyPartition)

	_, err = planConsume(parse(t, "CONSUME t PARTITION FOR KEY 'a'").(*lang.Consume), planInput{topic: &kafka.Topic{Name: "t"}, now: planNow, keyBytes: []byte("a")})
	require.ErrorContains(t, err, `topic "t" has no partitions`)
}

func TestPlanPushdown(t *testing.T) {
	ms := func(d time.Duration) *int64 { v := planNow.Add(-d).UnixMilli(); return &v }
	abs := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		src              string
		minOff, maxOff   int64
		fromMs, toMs     *int64
		steps            []boundKind
		notes            int
		keyScan, pushedP bool
	}{
		{src: "CONSUME t", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}},
		{src: "CONSUME t WHERE offset >= 10", minOff: 10, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE offset > 10", minOff: 11, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE offset < 10", minOff: math.MinInt64, maxOff: 10, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE offset <= 10", minOff: math.MinInt64, maxOff: 11, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE offset = 7", minOff: 7, maxOff: 8, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE 10 <= offset", minOff: 10, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE offset BETWEEN 10 AND 20", minOff: 10, maxOff: 21, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE offset <= 9223372036854775807", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}, notes: 1},
		{src: "CONSUME t WHERE offset >= 5 AND offset >= 8 AND offset < 20", minOff: 8, maxOff: 20, steps: []boundKind{boundEnds}, notes: 3},
		{src: "CONSUME t WHERE offset != 5", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}},
		{src: "CONSUME t WHERE offset >= 5 OR key = 'a'", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}},
		{src: "CONSUME t WHERE timestamp >= 1000", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: abs(1000), steps: []boundKind{boundEnds, boundPushFrom}, notes: 1},
		{src: "CONSUME t WHERE timestamp > 1000", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: abs(1001), steps: []boundKind{boundEnds, boundPushFrom}, notes: 1},
		{src: "CONSUME t WHERE timestamp < 1000", minOff: math.MinInt64, maxOff: math.MaxInt64, toMs: abs(1000), steps: []boundKind{boundEnds, boundPushTo}, notes: 1},
		{src: "CONSUME t WHERE timestamp = 1000", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: abs(1000), toMs: abs(1001), steps: []boundKind{boundEnds, boundPushFrom, boundPushTo}, notes: 1},
		{src: "CONSUME t WHERE timestamp >= 15m AGO", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: ms(15 * time.Minute), steps: []boundKind{boundEnds, boundPushFrom}, notes: 1},
		{src: "CONSUME t WHERE timestamp >= TIMESTAMP '2026-01-02T03:04:05Z'", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: abs(planNow.UnixMilli()), steps: []boundKind{boundEnds, boundPushFrom}, notes: 1},
		{src: "CONSUME t WHERE timestamp BETWEEN 1000 AND 2000", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: abs(1000), toMs: abs(2001), steps: []boundKind{boundEnds, boundPushFrom, boundPushTo}, notes: 1},
		{src: "CONSUME t WHERE timestamp >= 1000 AND timestamp >= 3000", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: abs(3000), steps: []boundKind{boundEnds, boundPushFrom}, notes: 2},
		{src: "CONSUME t WHERE timestamp >= 1000 FROM 1h AGO", minOff: math.MinInt64, maxOff: math.MaxInt64, fromMs: abs(1000), steps: []boundKind{boundEnds, boundPushFrom, boundFromTime}, notes: 1},
		{src: "CONSUME t FROM TIMESTAMP 5000", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds, boundFromTime}},
		{src: "CONSUME t WHERE partition = 1", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}, notes: 1, pushedP: true},
		// A tail read with WHERE scans keys back from the end first.
		{src: "CONSUME t FROM NEWEST WHERE key = 'a'", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}, keyScan: true},
		{src: "CONSUME t WHERE key = 'a' FOLLOW", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}, keyScan: true},
		{src: "CONSUME t FROM NEWEST", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}},
		{src: "CONSUME t WHERE key = 'a'", minOff: math.MinInt64, maxOff: math.MaxInt64, steps: []boundKind{boundEnds}},
	} {
		t.Run(c.src, func(t *testing.T) {
			pl, err := planOf(t, c.src, nil)
			require.NoError(t, err)
			require.Equal(t, c.minOff, pl.pd.minOffset, "lowest offset read")
			require.Equal(t, c.maxOff, pl.pd.maxOffset, "offset the read ends below")
			require.Equal(t, c.fromMs, pl.pd.fromMs, "lower time bound")
			require.Equal(t, c.toMs, pl.pd.toMs, "upper time bound")
			var kinds []boundKind
			for _, s := range pl.boundSteps {
				kinds = append(kinds, s.kind)
			}
			require.Equal(t, c.steps, kinds, "ListOffsets steps")
			require.Len(t, pl.pd.notes, c.notes, "what EXPLAIN says was pushed: %v", pl.pd.notes)
			require.Equal(t, c.keyScan, pl.keyScan, "backward key scan")
			require.Equal(t, c.pushedP, pl.pd.partitions != nil, "partitions pushed")
		})
	}
}

func TestPlanDefaults(t *testing.T) {
	const all = math.MaxInt64
	for _, c := range []struct {
		src                          string
		from                         lang.StartKind
		tail                         bool
		limit, skip, outLimit, outSk int64
		ops                          []string
	}{
		{"CONSUME t", lang.FromOldest, false, 100, 0, 100, 0, []string{"Scan", "Decode", "Skip/Limit"}},
		{"CONSUME t LIMIT 5 SKIP 2", lang.FromOldest, false, 5, 2, 5, 2, []string{"Scan", "Decode", "Skip/Limit"}},
		{"CONSUME t LIMIT ALL", lang.FromOldest, false, all, 0, all, 0, []string{"Scan", "Decode", "Skip/Limit"}},
		{"CONSUME t FROM NEWEST", lang.FromNewest, true, 100, 0, 100, 0, []string{"Scan", "Decode", "Skip/Limit"}},
		{"CONSUME t FROM OFFSET 3", lang.FromOffset, false, 100, 0, 100, 0, []string{"Scan", "Decode", "Skip/Limit"}},
		{"CONSUME t FOLLOW", lang.FromNewest, true, DefaultFollowBacklog, 0, DefaultFollowBacklog, 0, []string{"Scan", "Decode", "Skip/Limit", "Follow"}},
		{"CONSUME t LIMIT 3 FOLLOW", lang.FromNewest, true, 3, 0, 3, 0, []string{"Scan", "Decode", "Skip/Limit", "Follow"}},
		{"CONSUME t FROM NEWEST LIMIT 10 FOLLOW", lang.FromNewest, true, 10, 0, 10, 0, []string{"Scan", "Decode", "Skip/Limit", "Follow"}},
		{"CONSUME t FROM OLDEST FOLLOW", lang.FromOldest, false, all, 0, all, 0, []string{"Scan", "Decode", "Skip/Limit", "Follow"}},
		{"CONSUME t WHERE key = 'a'", lang.FromOldest, false, 100, 0, 100, 0, []string{"Scan", "Decode", "Filter", "Skip/Limit"}},
		{"SELECT key FROM t", lang.FromOldest, false, 100, 0, 100, 0, []string{"Scan", "Decode", "Project", "Skip/Limit"}},
		{"SELECT count(*) FROM t", lang.FromOldest, false, all, 0, 100, 0, []string{"Scan", "Decode", "Aggregate", "Skip/Limit"}},
		{"SELECT key, count(*) FROM t GROUP BY key LIMIT 3 SKIP 1", lang.FromOldest, false, all, 0, 3, 1, []string{"Scan", "Decode", "Aggregate", "Skip/Limit"}},
		{"CONSUME t WHERE partition = 1 ORDER BY offset DESC LIMIT 5", lang.FromOldest, false, all, 0, 5, 0, []string{"Scan", "Decode", "Filter", "TopK", "Skip/Limit"}},
	} {
		t.Run(c.src, func(t *testing.T) {
			pl, err := planOf(t, c.src, nil)
			require.NoError(t, err)
			require.Equal(t, c.from, pl.from.Kind, "start")
			require.Equal(t, c.tail, pl.tail, "reads back from the end")
			require.Equal(t, c.limit, pl.limit, "matches the scan counts")
			require.Equal(t, c.skip, pl.skip, "matches the scan skips")
			require.Equal(t, c.outLimit, pl.outLimit, "rows returned")
			require.Equal(t, c.outSk, pl.outSkip, "rows skipped")
			var ops []string
			for _, op := range pl.ops {
				ops = append(ops, op.name)
			}
			require.Equal(t, c.ops, ops)
		})
	}

	pl, err := planOf(t, "CONSUME t", nil)
	require.NoError(t, err)
	require.Contains(t, pl.limitWhy, "browsing default")

	for _, src := range []string{"SELECT count(*) FROM t FROM NEWEST", "CONSUME t FROM TAIL (0:5) ORDER BY offset"} {
		_, err := planOf(t, src, nil)
		require.ErrorIs(t, err, errWholeRangeFromEnd, src)
	}
}

// A tail read without WHERE still scans keys (to cut its page by
// position) when the range may hold more than LIMIT records: EXPLAIN
// lists that Fetch, conditional on what the bounds find.
func TestPlanTailKeyScanWithoutWhere(t *testing.T) {
	for src, want := range map[string]bool{
		"CONSUME t FROM NEWEST LIMIT 5":              true,
		"CONSUME t FROM TAIL (0:5, 1:3) LIMIT 2":     true,
		"CONSUME t FROM NEWEST LIMIT ALL SKIP 2":     true,
		"CONSUME t FROM NEWEST LIMIT ALL":            false, // the page holds every record
		"CONSUME t FROM NEWEST WHERE key = 'a'":      false, // keyScan, unconditional
		"CONSUME t FROM OLDEST LIMIT 5":              false,
		"SELECT count(*) FROM t FROM OLDEST LIMIT 5": false,
	} {
		pl, err := planOf(t, src, nil)
		require.NoError(t, err)
		require.Equal(t, want, pl.keyScanIfMore, src)
	}
}
