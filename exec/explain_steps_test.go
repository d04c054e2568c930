package exec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/result"
)

// The ListOffsets steps of a record statement's EXPLAIN are the ones its
// run sends, in the order sent: each step asks each leader for the same
// time (earliest, the last stable offset, a time of WHERE or FROM) for
// the same partitions. The matrix test compares sets of (api, broker,
// partition), in which two steps over the same partitions look the same;
// this one tells them apart by the time each asks for.

// offsetsAsk is one ListOffsets request: the broker, the time asked for
// (-2 earliest, -1 latest), the partitions, sorted.
type offsetsAsk struct {
	broker int32
	ms     int64
	parts  string
}

// explainOffsetsSteps reads EXPLAIN's ListOffsets rows into steps, in
// order: each step the asks it lists, by the time its label names.
func explainOffsetsSteps(t *testing.T, plan []result.Row) [][]offsetsAsk {
	var steps [][]offsetsAsk
	last := int64(-1)
	for _, r := range plan {
		if r[1] != "ListOffsets" {
			continue
		}
		step := r[0].(int64)
		label, parts, ok := strings.Cut(r[4].(string), ": ")
		require.True(t, ok, "row %v", r)
		var ms int64
		switch {
		case label == "earliest offset":
			ms = -2
		case label == "last stable offset":
			ms = -1
		case strings.HasPrefix(label, "first offset at or after "):
			at, _, _ := strings.Cut(strings.TrimPrefix(label, "first offset at or after "), " ")
			ts, err := time.Parse(time.RFC3339Nano, at)
			require.NoError(t, err, "row %v", r)
			ms = ts.UnixMilli()
		default:
			t.Fatalf("ListOffsets row of an unknown step: %v", r)
		}
		if step != last {
			steps = append(steps, nil)
			last = step
		}
		ps := strings.Split(parts, ", ")
		slices.Sort(ps)
		steps[len(steps)-1] = append(steps[len(steps)-1], offsetsAsk{int32(r[2].(int64)), ms, strings.Join(ps, ", ")})
	}
	return steps
}

func TestExplainListOffsetsStepsInTheOrderSent(t *testing.T) {
	f := newFake(t)
	f.spread(t, "orders", 6)
	f.produce(t, "orders", 6, 4)
	now := time.Now().Truncate(time.Millisecond)
	f.sess.Now = func() time.Time { return now }

	var mu sync.Mutex
	var sent []offsetsAsk
	f.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		byMs := map[int64][]string{}
		for _, tt := range req.Topics {
			for _, p := range tt.Partitions {
				byMs[p.Timestamp] = append(byMs[p.Timestamp], fmt.Sprintf("%s/%d", tt.Topic, p.Partition))
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for ms, ps := range byMs {
			slices.Sort(ps)
			sent = append(sent, offsetsAsk{f.CurrentNode(), ms, strings.Join(ps, ", ")})
		}
		return nil, nil, false
	})

	for _, src := range []string{
		"CONSUME orders LIMIT ALL",
		"CONSUME orders FROM OFFSET 2 LIMIT ALL",
		"CONSUME orders FROM TIMESTAMP '2020-01-02T03:04:05Z' LIMIT ALL",
		"CONSUME orders FROM 2h AGO LIMIT ALL",
		"CONSUME orders FROM 2h AGO WHERE timestamp >= 1000 AND timestamp < 4102444800000 LIMIT ALL",
		"CONSUME orders FROM TIMESTAMP '2020-01-02T03:04:05Z' WHERE timestamp < 4102444800000 AND partition IN (1, 4) LIMIT ALL",
		"CONSUME orders WHERE offset >= 1 AND offset < 3 LIMIT ALL",
		"CONSUME orders FROM NEWEST WHERE timestamp >= 1000 LIMIT 2",
		"CONSUME orders FROM TAIL (0:3, 4:2) LIMIT 2",
		"CONSUME orders FROM ANCHOR (1:1, 5:0) LIMIT ALL",
		"CONSUME orders PARTITION FOR KEY 'k-2-1' WHERE timestamp >= 1000 LIMIT ALL",
		"SELECT count(*) FROM orders FROM 1h AGO WHERE timestamp < 4102444800000",
	} {
		t.Run(src, func(t *testing.T) {
			plan, _ := mustRun(t, f.sess, parse(t, "EXPLAIN "+src))
			want := explainOffsetsSteps(t, plan)
			mu.Lock()
			sent = nil
			mu.Unlock()
			mustRun(t, f.sess, parse(t, src))
			mu.Lock()
			got := slices.Clone(sent)
			mu.Unlock()

			// The steps as sent: a step is over when a request asks for a
			// time no request of it asked for, except that the first step
			// asks for both ends at once.
			var steps [][]offsetsAsk
			inStep := map[int64]bool{}
			for _, a := range got {
				if len(steps) == 0 || (!inStep[a.ms] && !(len(steps) == 1 && (a.ms == -1 || a.ms == -2) && (inStep[-1] || inStep[-2]))) {
					steps = append(steps, nil)
					inStep = map[int64]bool{}
				}
				inStep[a.ms] = true
				steps[len(steps)-1] = append(steps[len(steps)-1], a)
			}
			norm := func(ss [][]offsetsAsk) [][]offsetsAsk {
				for _, s := range ss {
					slices.SortFunc(s, func(a, b offsetsAsk) int {
						return cmp.Or(cmp.Compare(a.ms, b.ms), cmp.Compare(a.broker, b.broker))
					})
				}
				return ss
			}
			assert.Equal(t, norm(want), norm(steps), "ListOffsets steps: EXPLAIN (want) vs sent (got)\n%s", dumpPlan(plan))
		})
	}
}
