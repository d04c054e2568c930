package exec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// DELETE GROUP sends DeleteGroups, which Kafka accepts for every group
// type: without a check it would delete a share group and its start
// offsets while the shell asked about "0 committed offsets". It refuses a
// share group and names the statement that deletes one.
func TestDeleteGroupRefusesAShareGroup(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _ := spreadTopic(t, b, 4)
		group := kafkatest.GroupName(t)
		mustRun(t, s, &lang.ResetShareGroup{Group: group, Topic: &topic, To: lang.ResetTarget{Kind: lang.ResetEarliest}, Execute: true})
		coord := kadm.NewClient(kafkatest.Client(t, b)).FindGroupCoordinators(ctxT(t), group)[group]
		require.NoError(t, coord.Err)

		q, ask := s.Confirmation(ctxT(t), &lang.DeleteGroup{Group: group})
		require.False(t, ask, "no question about committed offsets for a share group (asked %q): the statement refuses it", q)

		tr.reset()
		_, _, err := run(t, s, &lang.DeleteGroup{Group: group})
		require.ErrorContains(t, err, fmt.Sprintf(`DELETE GROUP %q: %q is a share group, not a consumer group: DELETE SHARE GROUP %s deletes it`, group, group, group))
		require.Empty(t, tr.count("DeleteGroups"), "nothing deleted")
		require.Equal(t, []int32{coord.NodeID}, brokersOf(tr, "ShareGroupDescribe"), "asked at the group's coordinator")
		rows, _ := mustRun(t, s, &lang.DescribeShareGroup{Group: group})
		require.Len(t, rows, 6, "the share group and its start offsets are still there")

		// EXPLAIN lists the check it makes before DeleteGroups.
		rows, _ = mustRun(t, s, &lang.Explain{Stmt: &lang.DeleteGroup{Group: group}})
		var apis []string
		for _, r := range rows {
			apis = append(apis, fmt.Sprint(r[1], "@", r[2]))
		}
		id := coord.NodeID
		// and, only if Kafka answers that the group is not empty, its
		// status (to name the members).
		require.Equal(t, fmt.Sprintf("FindCoordinator@<nil> ShareGroupDescribe@%d FindCoordinator@<nil> DeleteGroups@%d DescribeGroups@%d ConsumerGroupDescribe@%d", id, id, id, id), strings.Join(apis, " "))

		// A consumer group is deleted as before, after the same question.
		cg := kafkatest.GroupName(t) + "-consumer"
		_, err = kadm.NewClient(kafkatest.Client(t, b)).CommitOffsets(ctxT(t), cg, kadm.OffsetsFromRecords(kgo.Record{Topic: topic, Partition: 0, Offset: 1}))
		require.NoError(t, err)
		rows, _ = mustRun(t, s, &lang.DeleteGroup{Group: cg})
		require.Equal(t, []result.Row{{cg, "deleted"}}, rows)
	})
}

// A share group's partitions whose share state is initialized but has no
// start offset yet (-1: subscribed, never fetched) are reset too, as
// kafka-share-groups.sh --reset-offsets does without --topic: skipped,
// they would later start at share.auto.offset.reset (latest) and never
// deliver the records the reset was meant to bring back.
func TestResetShareGroupIncludesPartitionsWithNoStartOffsetYet(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 4)
	group := "queue"
	mustRun(t, f.sess, &lang.ResetShareGroup{Group: group, Topic: str("t"), Partitions: []int32{0}, To: lang.ResetTarget{Kind: lang.ResetOffset, Offset: 2}, Execute: true})
	// The coordinator answers as Kafka 4.x does for partitions 1 and 2,
	// initialized at subscription but never fetched: start offset -1.
	answerShareOffsets(f, group, "t", []int64{2, -1, -1}, []int64{4 - 2, -1, -1})
	rows, _ := mustRun(t, f.sess, &lang.ResetShareGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetEarliest}})
	require.Equal(t, []result.Row{
		{"t", int64(0), int64(2), int64(0), int64(2), int64(4)},
		{"t", int64(1), nil, int64(0), nil, int64(4)},
		{"t", int64(2), nil, int64(0), nil, int64(4)},
	}, rows)
}

// Group names are shared by every group type: RESET SHARE GROUP of a name
// a consumer group has cannot create a share group (Kafka refuses the
// AlterShareGroupOffsets), so the dry run must not promise that EXECUTE
// creates one; it says what the name is and which statement moves it.
func TestResetShareGroupOfAConsumerGroupSaysSo(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _ := spreadTopic(t, b, 4)
		group := kafkatest.GroupName(t)
		_, err := kadm.NewClient(kafkatest.Client(t, b)).CommitOffsets(ctxT(t), group, kadm.OffsetsFromRecords(kgo.Record{Topic: topic, Partition: 0, Offset: 1}))
		require.NoError(t, err)
		for _, execute := range []bool{false, true} {
			tr.reset()
			_, _, err := run(t, s, &lang.ResetShareGroup{Group: group, Topic: &topic, To: lang.ResetTarget{Kind: lang.ResetEarliest}, Execute: execute})
			require.ErrorContains(t, err, fmt.Sprintf(`RESET SHARE GROUP %q: %q is a consumer group, not a share group: RESET GROUP %s ... moves its committed offsets`, group, group, group))
			require.Empty(t, tr.count("AlterShareGroupOffsets"))
		}
	})
}

// A share group's coordinator that moves answers NOT_COORDINATOR: each
// share request finds it again and is retried there, so RESET SHARE GROUP
// ... EXECUTE moves every start offset with no partial failure.
func TestShareRequestsFollowAMovedCoordinator(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	group := "queue"
	mustRun(t, f.sess, &lang.ResetShareGroup{Group: group, Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetEarliest}, Execute: true})
	before := f.CoordinatorFor(group)
	for i := 0; i < 100 && f.CoordinatorFor(group) == before; i++ {
		f.RehashCoordinators()
	}
	after := f.CoordinatorFor(group)
	require.NotEqual(t, before, after, "the coordinator moved")
	keys := []kmsg.Key{kmsg.ShareGroupDescribe, kmsg.DescribeShareGroupOffsets, kmsg.AlterShareGroupOffsets}
	var hs []interface{ Hits() int }
	for _, k := range keys {
		h := f.Fault(kfake.Fault{Keys: []kmsg.Key{k}, Group: group, Err: kerr.NotCoordinator, Count: 1})
		defer h.Remove()
		hs = append(hs, h)
	}
	f.trace.reset()
	rows, _ := mustRun(t, f.sess, &lang.ResetShareGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetLatest}, Execute: true})
	require.Len(t, rows, 3)
	for i, k := range keys {
		require.Equal(t, 1, hs[i].Hits(), "%s was told NOT_COORDINATOR once", k.Name())
		require.Equal(t, map[int32]int{after: 2}, f.trace.count(k.Name()), "%s retried at the new coordinator", k.Name())
	}
}
