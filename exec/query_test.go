package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// parse parses KafkaQL in a test.
func parse(t *testing.T, src string) lang.Statement {
	t.Helper()
	st, err := lang.Parse(src)
	require.NoError(t, err, src)
	return st
}

func colNames(res result.Result) []string {
	var out []string
	for _, c := range res.Columns() {
		out = append(out, c.Name)
	}
	return out
}

// TestMetaColumnsMatchResults: the columns lang lets WHERE and ORDER BY
// name are exactly the columns each statement returns.
func TestMetaColumnsMatchResults(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	g := groupsOnEveryBroker(t, f, 1)[0]
	_, err := f.adm.CommitOffsets(ctxT(t), g, kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	for _, src := range []string{"SHOW TOPICS", "SHOW BROKERS", "SHOW CLUSTER", "SHOW GROUPS", "SHOW PARTITIONS",
		"DESCRIBE TOPIC t", "DESCRIBE GROUP " + g, "SHOW CONFIGS FOR TOPIC t ALL"} {
		st := parse(t, src)
		_, res := mustRun(t, f.sess, st)
		require.Equal(t, lang.MetaColumns(st), colNames(res), src)
	}
	fake := srfake.New()
	defer fake.Close()
	_, _, err = fake.RegisterSchema("t-value", sr.Schema{Schema: `"string"`})
	require.NoError(t, err)
	f.sess.Registry, err = schema.Open(schema.Config{URLs: []string{fake.URL()}})
	require.NoError(t, err)
	for _, src := range []string{"SHOW SUBJECTS", "DESCRIBE SUBJECT 't-value'", "SHOW SCHEMAS FOR TOPIC t"} {
		st := parse(t, src)
		_, res := mustRun(t, f.sess, st)
		require.Equal(t, lang.MetaColumns(st), colNames(res), src)
	}
}

// groupsAndLag commits known offsets for groups spread over the
// coordinators and returns the expected lag per group (nil: no commit).
func groupsAndLag(t *testing.T, b kafkatest.Backend, topic string, groups []string) map[string]any {
	t.Helper()
	cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := int32(0); p < 6; p++ {
		for i := 0; i < 4+int(p); i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")})
		}
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	adm := kadm.NewClient(cl)
	want := map[string]any{}
	for i, g := range groups {
		if i == len(groups)-1 {
			// The last group commits nothing it can lag on: a commit to a
			// deleted-or-absent position is not made; its lag is NULL.
			want[g] = nil
			continue
		}
		// Group i commits offset i on partitions 0..i%6.
		offs := kadm.Offsets{}
		var lag int64
		for p := int32(0); p <= int32(i%6); p++ {
			offs.Add(kadm.Offset{Topic: topic, Partition: p, At: int64(i % 4), LeaderEpoch: -1})
			lag += int64(4+int(p)) - int64(i%4)
		}
		resp, err := adm.CommitOffsets(ctxT(t), g, offs)
		require.NoError(t, err)
		require.NoError(t, resp.Error())
		want[g] = lag
	}
	return want
}

// TestShowGroupsLagMembersTopics: lag is the sum over committed partitions
// (NULL when nothing is committed), computed with one DescribeGroups and
// one OffsetFetch per coordinator and one ListOffsets per leader broker.
func TestShowGroupsLagMembersTopics(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _ := spreadTopic(t, b, 0)
		prefix := kafkatest.GroupName(t)
		var groups []string
		for i := 0; i < 7; i++ {
			groups = append(groups, fmt.Sprintf("%s-%d", prefix, i))
		}
		want := groupsAndLag(t, b, topic, groups[:6])
		// The last group has a live member and has committed nothing.
		member := kafkatest.Client(t, b, kgo.ConsumerGroup(groups[5]), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit())
		require.Eventually(t, func() bool {
			ctx, cancel := context.WithTimeout(ctxT(t), time.Second)
			defer cancel()
			return member.PollFetches(ctx).NumRecords() > 0
		}, 60*time.Second, 10*time.Millisecond, "the member joined and was assigned partitions")
		tr.reset()
		rows, res := mustRun(t, s, parse(t, fmt.Sprintf("SHOW GROUPS LIKE '%s-%%'", prefix)))
		require.Equal(t, lang.MetaColumns(&lang.ShowGroups{}), colNames(res))
		got := map[string]any{}
		for _, r := range rows {
			got[r[0].(string)] = r[6]
			members := int64(0)
			if r[0] == groups[5] {
				members = 1
			}
			require.Equal(t, members, r[4], "members of %s", r[0])
			require.Equal(t, topic, r[5], "topics of %s", r[0])
		}
		require.Equal(t, want, withoutNil(got, want))
		coordinators := map[int32]bool{}
		for _, n := range tr.count("ListGroups") {
			require.Equal(t, 1, n)
		}
		for _, api := range []string{"DescribeGroups", "OffsetFetch", "ListOffsets"} {
			for broker, n := range tr.count(api) {
				require.Equal(t, 1, n, "%s to broker %d: one request per broker", api, broker)
				coordinators[broker] = true
			}
		}
		require.LessOrEqual(t, len(tr.count("Metadata")), 3)
		t.Logf("requests: ListGroups %v, DescribeGroups %v, OffsetFetch %v, ListOffsets %v",
			tr.count("ListGroups"), tr.count("DescribeGroups"), tr.count("OffsetFetch"), tr.count("ListOffsets"))

		// WHERE / ORDER BY / LIMIT over the new columns.
		rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("SHOW GROUPS LIKE '%s-%%' WHERE lag > 10 ORDER BY lag DESC, group LIMIT 2", prefix)))
		var lags []int64
		for _, r := range rows {
			lags = append(lags, r[6].(int64))
		}
		var all []int64
		for _, v := range want {
			if v != nil && v.(int64) > 10 {
				all = append(all, v.(int64))
			}
		}
		slices.Sort(all)
		slices.Reverse(all)
		require.Equal(t, all[:min(2, len(all))], lags)
	})
}

// withoutNil keeps the keys of want in got (ListGroups may list more).
func withoutNil(got, want map[string]any) map[string]any {
	out := map[string]any{}
	for k := range want {
		if v, ok := got[k]; ok {
			out[k] = v
		} else {
			out[k] = "missing"
		}
	}
	return out
}

// TestMetadataWhereOrderByLimit runs WHERE / ORDER BY / LIMIT on SHOW
// TOPICS, DESCRIBE TOPIC, SHOW BROKERS and SHOW CLUSTER.
func TestMetadataWhereOrderByLimit(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, leaders := spreadTopic(t, b, 3)
		adm := kadm.NewClient(kafkatest.Client(t, b))
		small := topic + "-small"
		_, err := adm.CreateTopic(ctxT(t), 2, 1, nil, small)
		require.NoError(t, err)
		// The controller answers CreateTopics before every broker knows the
		// topic; SHOW TOPICS asks any broker.
		require.True(t, s.Cluster().WaitTopic(ctxT(t), small, true, 20*time.Second), "every broker sees %s", small)

		rows, _ := mustRun(t, s, parse(t, fmt.Sprintf("SHOW TOPICS LIKE '%s%%' WHERE partitions > 2", topic)))
		require.Len(t, rows, 1)
		require.Equal(t, topic, rows[0][0])
		rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("SHOW TOPICS LIKE '%s*' ORDER BY partitions, topic DESC", topic)))
		require.Equal(t, []any{small, topic}, []any{rows[0][0], rows[1][0]})
		rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("SHOW TOPICS LIKE '%s_small' LIMIT 1", topic)))
		require.Len(t, rows, 1)

		var broker int32 = -1
		for _, l := range leaders {
			broker = l
			break
		}
		var want []int64
		for p := int32(5); p >= 0; p-- {
			if leaders[p] == broker {
				want = append(want, int64(p))
			}
		}
		rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("DESCRIBE TOPIC %s WHERE leader = %d AND messages = 3 ORDER BY partition DESC", lang.QuoteName(topic), broker)))
		var got []int64
		for _, r := range rows {
			got = append(got, r[0].(int64))
		}
		require.Equal(t, want, got)

		rows, _ = mustRun(t, s, parse(t, "SHOW BROKERS ORDER BY node_id DESC LIMIT 2"))
		require.Len(t, rows, 2)
		require.Greater(t, rows[0][0].(int64), rows[1][0].(int64))
		rows, _ = mustRun(t, s, parse(t, "SHOW CLUSTER WHERE property IN ('brokers', 'cluster_id') ORDER BY property"))
		require.Equal(t, "brokers", rows[0][0])
		require.Equal(t, "3", rows[0][1])

		// A comparison of kinds that do not compare is NULL, with one warning.
		rows, res := mustRun(t, s, parse(t, fmt.Sprintf("DESCRIBE TOPIC %s WHERE leader = 'one'", lang.QuoteName(topic))))
		require.Empty(t, rows)
		w := res.Stats().Warnings()
		require.Len(t, w, 1)
		require.Contains(t, w[0], "leader = 'one': an integer and a text cannot be compared")
		require.Contains(t, w[0], "first at row 1")
	})
}

// TestShowPartitions: one row per partition with its offsets, internal
// topics included and marked, one Metadata and one ListOffsets per leader
// broker per bound.
func TestShowPartitions(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, leaders := spreadTopic(t, b, 2)
		tr.reset()
		rows, res := mustRun(t, s, parse(t, "SHOW PARTITIONS OF "+lang.QuoteName(topic)))
		require.Equal(t, lang.MetaColumns(&lang.ShowPartitions{}), colNames(res))
		require.Len(t, rows, 6)
		for i, r := range rows {
			require.Equal(t, topic, r[0])
			require.Equal(t, int64(i), r[1])
			require.Equal(t, int64(leaders[int32(i)]), r[2])
			require.Len(t, r[3], 3)
			require.Equal(t, false, r[5], "offline")
			require.Equal(t, int64(0), r[7])
			require.Equal(t, int64(2), r[8])
			require.Equal(t, int64(2), r[9])
			require.Equal(t, false, r[10], "internal")
			require.Positive(t, r[11], "size_bytes: the leader replica holds two records")
			require.Equal(t, 3*r[11].(int64), r[12], "replicas_size_bytes: three replicas of the same two records")
		}
		require.Equal(t, 1, sum(tr.count("Metadata")), "one Metadata")
		require.Equal(t, len(tr.events), 1+sum(tr.count("ListOffsets"))+sum(tr.count("DescribeLogDirs")), "and ListOffsets and DescribeLogDirs only")
		for broker, n := range tr.count("DescribeLogDirs") {
			require.Equal(t, 1, n, "broker %d: one DescribeLogDirs for the sizes of its own replicas", broker)
		}
		require.Len(t, tr.count("DescribeLogDirs"), 3, "every broker holds replicas")
		for broker, n := range tr.count("ListOffsets") {
			require.Equal(t, 4, n, "broker %d: one ListOffsets per bound, one at now-60s, one for the max timestamp", broker)
		}
		require.Len(t, tr.count("ListOffsets"), 3, "the leaders are on every broker")

		// Every topic, internal ones marked.
		if _, ok := b.(*kafkatest.Real); ok {
			_, err := kadm.NewClient(kafkatest.Client(t, b)).CommitOffsets(ctxT(t), kafkatest.GroupName(t),
				kadm.OffsetsFromRecords(kgo.Record{Topic: topic, Partition: 0, Offset: 0}))
			require.NoError(t, err)
			rows, _ = mustRun(t, s, parse(t, "SHOW PARTITIONS WHERE internal AND topic = '__consumer_offsets'"))
			require.NotEmpty(t, rows)
		}
		rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("SHOW PARTITIONS LIKE '%s' WHERE partition >= 4 ORDER BY partition DESC", topic)))
		require.Len(t, rows, 2)
		require.Equal(t, int64(5), rows[0][1])

		_, _, err := run(t, s, parse(t, "SHOW PARTITIONS OF no_such_topic_here"))
		require.ErrorContains(t, err, "no_such_topic_here")
	})
}

// TestShowPartitionsUnderReplicatedAfterKill: after a broker is killed,
// SHOW PARTITIONS shows its partitions under-replicated.
func TestShowPartitionsUnderReplicatedAfterKill(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	topic, leaders := spreadTopic(t, r, 1)
	victim := leaders[0]
	require.NoError(t, r.StopBroker(victim, true))
	t.Cleanup(func() { require.NoError(t, r.StartBroker(victim)) })
	query := parse(t, fmt.Sprintf("SHOW PARTITIONS OF %s WHERE under_replicated AND in_sync_replicas < replicas ORDER BY partition", lang.QuoteName(topic)))
	var rows []result.Row
	require.Eventually(t, func() bool {
		var err error
		rows, _, err = run(t, s, query)
		return err == nil && len(rows) == 6
	}, 90*time.Second, time.Second, "every partition had a replica on broker %d", victim)
	for _, row := range rows {
		require.NotContains(t, row[4], victim, "the killed broker left the ISR")
		require.Contains(t, row[3], victim, "it is still a replica")
		require.NotEqual(t, int64(victim), row[2], "nor does it lead")
	}
	t.Logf("after SIGKILL of broker %d: %v", victim, rows[0])
}

// TestShowLikeTakesSQLWildcards: % and _ work like * and ?.
func TestShowLikeTakesSQLWildcards(t *testing.T) {
	f := newFake(t)
	for _, name := range []string{"orders", "orders_v2", "ordersXv2", "payments"} {
		_, err := f.adm.CreateTopic(ctxT(t), 1, 1, nil, name)
		require.NoError(t, err)
	}
	names := func(src string) []string {
		rows, _ := mustRun(t, f.sess, parse(t, src))
		var out []string
		for _, r := range rows {
			out = append(out, r[0].(string))
		}
		return out
	}
	require.Equal(t, []string{"orders", "ordersXv2", "orders_v2"}, names("SHOW TOPICS LIKE 'ord%'"))
	require.Equal(t, []string{"orders", "ordersXv2", "orders_v2"}, names("SHOW TOPICS LIKE 'ord*'"))
	require.Equal(t, []string{"ordersXv2", "orders_v2"}, names("SHOW TOPICS LIKE 'orders_v2'"))
	require.Equal(t, []string{"orders_v2"}, names(`SHOW TOPICS LIKE 'orders\\_v2'`))
	require.Equal(t, []string{"ordersXv2", "orders_v2"}, names("SHOW TOPICS LIKE 'orders?v2'"))
	require.Equal(t, []string{"payments"}, names("SHOW TOPICS LIKE '[p]%'"))
	_, _, err := run(t, f.sess, parse(t, "SHOW TOPICS LIKE 'a['"))
	require.ErrorContains(t, err, "has no closing ]")
}

func sum(m map[int32]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

var _ = strings.Contains
var _ = kmsg.NewPtrMetadataRequest
