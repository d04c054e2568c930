package exec

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

func TestExplainEveryStatementRunsNothing(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	stmts := map[string]lang.Statement{
		"show topics":    &lang.ShowTopics{},
		"show brokers":   &lang.ShowBrokers{},
		"show cluster":   &lang.ShowCluster{},
		"show groups":    &lang.ShowGroups{},
		"describe topic": &lang.DescribeTopic{Topic: "t"},
		"describe group": &lang.DescribeGroup{Group: "g"},
		"consume":        &lang.Consume{Topic: "t", From: &lang.Start{Kind: lang.FromAgo, Ago: time.Hour}},
		"produce":        &lang.Produce{Topic: "t", Key: &lang.Literal{Bytes: []byte("k")}, Value: &lang.Literal{Bytes: []byte("v")}},
		"create":         &lang.CreateTopic{Topic: "new", Partitions: i32(3)},
		"drop":           &lang.DropTopic{Topic: "t"},
	}
	for name, st := range stmts {
		t.Run(name, func(t *testing.T) {
			f.trace.reset()
			rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: st})
			require.NotEmpty(t, rows)
			for _, api := range []string{"ListOffsets", "Fetch", "Produce", "CreateTopics", "DeleteTopics", "ListGroups", "DescribeGroups", "OffsetFetch", "InitProducerID"} {
				require.Empty(t, f.trace.count(api), "EXPLAIN %s sent %s", name, api)
			}
			var apis []string
			for _, r := range rows {
				apis = append(apis, r[1].(string))
			}
			switch name {
			case "show groups":
				require.Equal(t, 3, strings.Count(strings.Join(apis, " "), "ListGroups"), "one per broker")
				require.Contains(t, apis, "Fetch", "the records at the lagging committed offsets (max_lag_ms)")
			case "describe group":
				require.Contains(t, apis, "Fetch", "the records at the lagging committed offsets (lag_ms)")
			case "show topics":
				// t's partitions are led by brokers 0, 1 and 2: the write
				// rates' three ListOffsets go to each, in one step.
				per := map[string]int{}
				for _, r := range rows {
					if r[1] == "ListOffsets" {
						per[fmt.Sprint(r[2])]++
						require.Equal(t, int64(2), r[0], "concurrently with the sizes")
					}
				}
				require.Equal(t, map[string]int{"0": 3, "1": 3, "2": 3}, per)
			case "consume":
				require.Contains(t, apis, "Fetch")
			case "produce":
				require.Contains(t, apis, "Produce")
				last := rows[len(rows)-1]
				require.Equal(t, fmt.Sprintf("t/%d", javaMurmur2([]byte("k"))&0x7fffffff%3), last[4], "the key's partition")
			case "create":
				require.Contains(t, apis, "CreateTopics")
			case "drop":
				require.Contains(t, apis, "DeleteTopics")
			}
		})
	}
	rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	require.Len(t, rows, 3, "EXPLAIN DROP TOPIC dropped nothing")
}

// EXPLAIN PRODUCE of a keyless record names one partition; the PRODUCE that
// follows should write where EXPLAIN said (or EXPLAIN should say "round
// robin" instead of naming one).
func TestExplainProduceKeylessNamesAnotherPartition(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	st := &lang.Produce{Topic: "t", Value: &lang.Literal{Bytes: []byte("v")}}
	plan, _ := mustRun(t, f.sess, &lang.Explain{Stmt: st})
	last := plan[len(plan)-1]
	rows, _ := mustRun(t, f.sess, st)
	require.Equal(t, fmt.Sprintf("t/%d", rows[0][1]), last[4], "EXPLAIN said %v, PRODUCE wrote partition %v", last[4], rows[0][1])
}

// EXPLAIN of FROM NEWEST with WHERE says what runs: a backward scan of
// keys (a Fetch of its own, which may read the whole range when nothing
// matches) before the page's Fetch; it showed one Fetch and no scan.
func TestExplainNewestWhereScan(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _, _ := queryTopic(t, b)
		// Without WHERE a tail read scans keys too, unless the range holds
		// no more than LIMIT records (TestConsumeNewestCoveringEverythingReadsOnce):
		// EXPLAIN lists that Fetch, conditional, with no Scan note.
		for src, want := range map[string]struct {
			scan    bool
			fetches int
		}{
			"EXPLAIN CONSUME %s FROM NEWEST WHERE value.amount > 1000 LIMIT 3": {true, 2},
			"EXPLAIN CONSUME %s WHERE value.amount > 1000 LIMIT 3 FOLLOW":      {true, 2},
			"EXPLAIN CONSUME %s FROM NEWEST LIMIT 3":                           {false, 2},
			"EXPLAIN CONSUME %s FROM NEWEST LIMIT ALL":                         {false, 1},
			"EXPLAIN CONSUME %s WHERE value.amount > 1000 LIMIT 3":             {false, 1},
		} {
			scan := want.scan
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
			require.Len(t, fetchSteps, want.fetches, src)
		}
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
