package exec

import (
	"context"
	"testing"
	"time"

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

func TestCoordinatorLoadingThenSuccess(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 4}))
	require.NoError(t, err)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeGroups}, Group: "g", Err: kerr.CoordinatorLoadInProgress, Count: 2})
	defer h.Remove()
	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Equal(t, 2, h.Hits())
	require.Len(t, rows, 1)
	require.Equal(t, int64(5), rows[0][2])
}

func TestNotCoordinatorForeverIsAnErrorNamingTheGroup(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 4}))
	require.NoError(t, err)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: "g", Err: kerr.NotCoordinator, Count: -1})
	defer h.Remove()
	start := time.Now()
	_, _, err = run(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Error(t, err)
	require.Contains(t, err.Error(), `group "g" on coordinator broker`)
	require.Contains(t, err.Error(), "NOT_COORDINATOR")
	require.Greater(t, h.Hits(), 1, "re-found and retried")
	require.Less(t, time.Since(start), 10*time.Second, "gives up instead of retrying forever")
	// The session still works.
	h.Remove()
	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.Len(t, rows, 1)
}

// DESCRIBE GROUP of a live kgo consumer group (classic protocol): each
// owned partition shows its member, client id and host.
func TestDescribeGroupShowsLiveMembers(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 4)
	cons, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.ConsumerGroup("live"), kgo.ConsumeTopics("t"),
		kgo.ClientID("review-consumer"), kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cons.Close()
	got := 0
	for got < 12 {
		fs := cons.PollFetches(ctxT(t))
		require.NoError(t, fs.Err0())
		got += fs.NumRecords()
	}
	require.NoError(t, cons.CommitUncommittedOffsets(ctxT(t)))

	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "live"})
	require.Len(t, rows, 3)
	for _, r := range rows {
		require.Equal(t, int64(4), r[2], "committed")
		require.Equal(t, int64(0), r[4], "lag")
		require.NotNil(t, r[5], "member_id of partition %v", r[1])
		require.Equal(t, "review-consumer", r[6])
		require.NotEmpty(t, r[7], "host")
	}
	groups, _ := mustRun(t, f.sess, &lang.ShowGroups{})
	// members 1, the topic it reads, lag 0.
	require.Equal(t, []result.Row{{"live", "Stable", "consumer", int64(f.CoordinatorFor("live")), int64(1), "t", int64(0), int64(0)}}, groups)
}

// consumeOnce joins a consumer group with a real kgo consumer, polls every
// record of topic and commits, and leaves the member in the group.
func consumeOnce(t *testing.T, b kafkatest.Backend, group, topic string, want int, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID("review-" + group),
		kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)
	cons := kafkatest.Client(t, b, all...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for got := 0; got < want; {
		fs := cons.PollFetches(ctx)
		require.NoError(t, fs.Err0())
		got += fs.NumRecords()
	}
	require.NoError(t, cons.CommitUncommittedOffsets(ctx))
	return cons
}

// A consumer group with a live member, classic protocol: DESCRIBE GROUP
// fills member_id, client_id and host for every partition the member owns.
func TestDescribeGroupLiveClassicMember(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _ := spreadTopic(t, b, 3)
		group := kafkatest.GroupName(t)
		consumeOnce(t, b, group, topic, 18)
		rows, _ := mustRun(t, s, &lang.DescribeGroup{Group: group})
		require.Len(t, rows, 6)
		for _, r := range rows {
			require.Equal(t, []any{int64(3), int64(3), int64(0)}, []any{r[2], r[3], r[4]}, "committed, end, lag of %v", r[1])
			require.NotEmpty(t, r[5], "member_id of partition %v", r[1])
			require.Equal(t, "review-"+group, r[6], "client_id")
			require.NotEmpty(t, r[7], "host")
		}
	})
}

// Kafka 4 consumer groups (KIP-848, group.protocol=consumer, what kgo's
// ServerSideBalancer and Java's group.protocol=consumer use) are not classic
// groups: DescribeGroups answers GROUP_ID_NOT_FOUND for them. DESCRIBE GROUP
// must still describe a group that SHOW GROUPS lists.
func TestDescribeGroupOfAKIP848ConsumerGroup(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _ := spreadTopic(t, b, 3)
		group := kafkatest.GroupName(t)
		consumeOnce(t, b, group, topic, 18, kgo.ServerSideBalancer())
		pattern := group
		listed, _ := mustRun(t, s, &lang.ShowGroups{Like: &pattern})
		require.Len(t, listed, 1, "SHOW GROUPS lists the group")
		rows, _, err := run(t, s, &lang.DescribeGroup{Group: group})
		require.NoError(t, err)
		require.Len(t, rows, 6)
		for _, r := range rows {
			require.Equal(t, int64(3), r[2], "committed offset of partition %v", r[1])
			if b.Name() == kafkatest.Kafka {
				require.NotEmpty(t, r[5], "member_id of partition %v", r[1])
			}
		}
	})
}

// A group that committed offsets for a topic that was dropped since.
func TestDescribeGroupAfterItsTopicWasDropped(t *testing.T) {
	f := newFake(t)
	f.spread(t, "keep", 1)
	f.spread(t, "gone", 2)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(
		kgo.Record{Topic: "keep", Partition: 0, Offset: 0}, kgo.Record{Topic: "gone", Partition: 1, Offset: 0}))
	require.NoError(t, err)
	mustRun(t, f.sess, &lang.DropTopic{Topic: "gone"})
	rows, _, err := run(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	require.Equal(t, "keep", rows[len(rows)-1][0])
	for _, r := range rows {
		require.NotEqual(t, "", r[0], "a row with no topic name")
	}
}
