package exec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// unstableOffsetFetch makes every OffsetFetch answer t/0 committed at 4
// and t/1 with UNSTABLE_OFFSET_COMMIT (a transaction's commit pending):
// the commit of t/1 is unknown.
func unstableOffsetFetch(t *testing.T, f *fake) { unstableOffsetFetchOf(t, f, true) }

// unstableOffsetFetchOf is unstableOffsetFetch, with t/0 left out of the
// answer unless withP0.
func unstableOffsetFetchOf(t *testing.T, f *fake, withP0 bool) {
	md, err := f.adm.Metadata(ctxT(t), "t")
	require.NoError(t, err)
	id := md.Topics["t"].ID
	f.ControlKey(int16(kmsg.OffsetFetch), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.OffsetFetchRequest)
		commits := []kafkatest.Commit{{Partition: 1, Offset: -1, Err: kerr.UnstableOffsetCommit.Code}}
		if withP0 {
			commits = append([]kafkatest.Commit{{Partition: 0, Offset: 4}}, commits...)
		}
		return kafkatest.OffsetFetchAnswer(req, func(string) []kmsg.OffsetFetchResponseGroupTopic {
			return []kmsg.OffsetFetchResponseGroupTopic{kafkatest.OffsetFetchTopic("t", id, commits...)}
		}), nil, true
	})
}

// A partition whose committed offset the coordinator could not give is
// not a partition the group never committed: DESCRIBE GROUP keeps its row
// with NULL committed_offset and says the result is partial, naming it.
func TestDescribeGroupPartitionOffsetFetchErrorIsPartial(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	f.produce(t, "t", 2, 6)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 3}))
	require.NoError(t, err)
	unstableOffsetFetch(t, f)
	rows, _, perr := run(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Len(t, rows, 2)
	require.Equal(t, int64(4), rows[0][2], "t/0 committed")
	require.Nil(t, rows[1][2], "t/1's commit is unknown")
	require.Nil(t, rows[1][4], "so is its lag")
	require.True(t, result.IsPartial(perr), "%v", perr)
	require.ErrorContains(t, perr, "OffsetFetch: partition t/1 on broker")
	require.ErrorContains(t, perr, "UNSTABLE_OFFSET_COMMIT")
}

// SHOW GROUPS does not sum a lag over partitions of unknown commit: the
// group's lag is NULL and the result partial.
func TestShowGroupsPartitionOffsetFetchErrorIsPartial(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	f.produce(t, "t", 2, 6)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 3}))
	require.NoError(t, err)
	unstableOffsetFetch(t, f)
	rows, _, perr := run(t, f.sess, &lang.ShowGroups{})
	require.Len(t, rows, 1)
	require.Equal(t, "g", rows[0][0])
	require.Nil(t, rows[0][6], "lag")
	require.True(t, result.IsPartial(perr), "%v", perr)
	require.ErrorContains(t, perr, "UNSTABLE_OFFSET_COMMIT")
}

// A group whose only commit is of unknown offset still lists its topic:
// the coordinator named the partition, only its offset is unknown.
func TestShowGroupsListsTheTopicOfAnUnknownCommit(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 1, Offset: 3}))
	require.NoError(t, err)
	unstableOffsetFetchOf(t, f, false)
	rows, _, perr := run(t, f.sess, &lang.ShowGroups{})
	require.Len(t, rows, 1)
	require.Equal(t, "t", rows[0][5], "topics")
	require.Nil(t, rows[0][6], "lag")
	require.True(t, result.IsPartial(perr), "%v", perr)
}

// RESET GROUP does not plan from a commit it could not read.
func TestResetGroupRefusesAnUnknownCommit(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	f.produce(t, "t", 2, 6)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 3}))
	require.NoError(t, err)
	unstableOffsetFetch(t, f)
	_, _, err = run(t, f.sess, &lang.ResetGroup{Group: "g", To: lang.ResetTarget{Kind: lang.ResetEarliest}})
	require.ErrorContains(t, err, "partition t/1")
	require.ErrorContains(t, err, "UNSTABLE_OFFSET_COMMIT")
}

// Only the partitions a RESET moves need their commit known: a reset of
// another topic, or of the topic's other partitions, plans as before.
func TestResetGroupOfOtherPartitionsIgnoresAnUnknownCommit(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	f.spread(t, "other", 1)
	f.produce(t, "t", 2, 6)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 3}))
	require.NoError(t, err)
	unstableOffsetFetch(t, f)
	other, t0 := "other", "t"
	rows, _, err := run(t, f.sess, &lang.ResetGroup{Group: "g", Topic: &other, To: lang.ResetTarget{Kind: lang.ResetEarliest}})
	require.NoError(t, err, "t/1's unknown commit is not other's")
	require.Len(t, rows, 1)
	rows, _, err = run(t, f.sess, &lang.ResetGroup{Group: "g", Topic: &t0, Partitions: []int32{0}, To: lang.ResetTarget{Kind: lang.ResetEarliest}})
	require.NoError(t, err, "PARTITION 0 leaves t/1 as it is")
	require.Len(t, rows, 1)
	_, _, err = run(t, f.sess, &lang.ResetGroup{Group: "g", Topic: &t0, To: lang.ResetTarget{Kind: lang.ResetEarliest}})
	require.ErrorContains(t, err, "partition t/1", "moving t/1 needs its commit")
	require.ErrorContains(t, err, "UNSTABLE_OFFSET_COMMIT")
}

// DELETE GROUP's confirmation does not count offsets it could not read:
// it asks without a count rather than understate what is deleted.
func TestDeleteGroupConfirmationDoesNotCountAnUnknownCommit(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 2)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 3}))
	require.NoError(t, err)
	q, ask := f.sess.Confirmation(ctxT(t), &lang.DeleteGroup{Group: "g"})
	require.True(t, ask)
	require.Equal(t, "delete group g: its committed offsets for 1 partition of 1 topic?", q, "every commit known: counted")
	unstableOffsetFetch(t, f)
	q, ask = f.sess.Confirmation(ctxT(t), &lang.DeleteGroup{Group: "g"})
	require.True(t, ask)
	require.Equal(t, "delete group g?", q, "t/1's commit is unknown: no count")
}
