package exec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/result"
)

// answerOffsetFetch makes every OffsetFetch answer g's commit of orders/1
// at offset 1 and, with failing, also a partition of a topic named by id
// only that no metadata knows (deleted since), answered with an error.
func answerOffsetFetch(t *testing.T, f *fake, failing *bool) {
	tds, err := f.adm.ListTopics(ctxT(t), "orders")
	require.NoError(t, err)
	ordersID := tds["orders"].ID
	f.ControlKey(int16(kmsg.OffsetFetch), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.OffsetFetchRequest)
		return kafkatest.OffsetFetchAnswer(req, func(group string) []kmsg.OffsetFetchResponseGroupTopic {
			if group != "g" {
				return nil
			}
			topics := []kmsg.OffsetFetchResponseGroupTopic{
				kafkatest.OffsetFetchTopic("orders", ordersID, kafkatest.Commit{Partition: 1, Offset: 1})} // v10+ carries only the id
			if *failing {
				topics = append(topics, kafkatest.OffsetFetchTopic("", [16]byte{0xde, 0xad},
					kafkatest.Commit{Partition: 0, Offset: -1, Err: kerr.TopicAuthorizationFailed.Code}))
			}
			return topics
		}), nil, true
	})
}

// TestExplainListsOffsetFetchNamingMetadata: when an OffsetFetch fails a
// partition of a topic it names by id only, which no metadata knows, the
// statement reads every topic once more to name it; EXPLAIN lists that
// Metadata as a conditional step right after the OffsetFetch.
func TestExplainListsOffsetFetchNamingMetadata(t *testing.T) {
	f := newFake(t)
	f.spread(t, "orders", 3)
	f.produce(t, "orders", 3, 2)
	// A group to describe: the coordinator knows it (DescribeGroups), and
	// the hook answers its offsets.
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "orders", Partition: 1, Offset: 1}))
	require.NoError(t, err)
	failing := false
	answerOffsetFetch(t, f, &failing)

	topicsRead := func(t *testing.T, src string) int {
		f.trace.reset()
		res, err := f.sess.Execute(ctxT(t), parse(t, src))
		require.NoError(t, err, src)
		for {
			if _, ok := res.Next(); !ok {
				break
			}
		}
		res.Close()
		f.trace.mu.Lock()
		defer f.trace.mu.Unlock()
		// Counted over the whole statement: SHOW GROUPS reads the topics
		// concurrently with its OffsetFetch, in either order.
		n, seen := 0, false
		for _, e := range f.trace.events {
			switch {
			case e.API == "OffsetFetch":
				seen = true
			case e.API == "Metadata" && len(e.Items) == 0:
				n++
			}
		}
		require.True(t, seen, "%s sent an OffsetFetch", src)
		return n
	}

	for _, src := range []string{
		"SHOW GROUPS",
		"DESCRIBE GROUP g",
		"RESET GROUP g TOPIC orders TO LATEST",
	} {
		t.Run(src, func(t *testing.T) {
			plan, _ := mustRun(t, f.sess, parse(t, "EXPLAIN "+src))
			var fetchStep int64 = -1
			var naming result.Row
			for _, r := range plan {
				if r[1] == "OffsetFetch" {
					fetchStep = r[0].(int64)
				}
				if r[1] == "Metadata" && fetchStep >= 0 && naming == nil {
					naming = r
				}
			}
			require.NotNil(t, naming, "EXPLAIN lists a Metadata after the OffsetFetch\n%s", dumpPlan(plan))
			require.Equal(t, fetchStep+1, naming[0], "the step after the OffsetFetch")
			require.Equal(t, "any broker", naming[3])
			require.True(t, conditional(naming[4].(string)), "a conditional step: %s", naming[4])

			failing = false
			without := topicsRead(t, src)
			failing = true
			defer func() { failing = false }()
			with := topicsRead(t, src)
			require.Equal(t, without+1, with, "one Metadata of every topic more when a failed partition's topic is unknown")
			if src == "DESCRIBE GROUP g" {
				// The failed partition's topic has no name to ask its end
				// by: the partial result carries the OffsetFetch error
				// alone, and no ListOffsets waits for a leader of "/0".
				res, err := f.sess.Execute(ctxT(t), parse(t, src))
				require.NoError(t, err)
				for {
					if _, ok := res.Next(); !ok {
						break
					}
				}
				var pe *result.PartialError
				require.ErrorAs(t, res.Err(), &pe)
				require.Len(t, pe.Missing, 1, "%v", pe)
				require.Contains(t, pe.Missing[0].Error(), "OffsetFetch")
			}
		})
	}
}
