package exec

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(seededServerEnv); spec != "" {
		os.Exit(runSeededServer(spec))
	}
	kafkatest.Main(m)
}

// session dials b with a trace hook.
func session(t *testing.T, b kafkatest.Backend) (*Session, *tracer) {
	t.Helper()
	tr := &tracer{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Bootstrap: b.Bootstrap(), Trace: tr.record})
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return NewSession(cl), tr
}

// createSpreadTopic creates a 6-partition RF-3 topic; on kfake its leaders
// are moved onto every broker (real Kafka spreads them itself). It returns
// a producer with the manual partitioner and an admin client.
func createSpreadTopic(t *testing.T, b kafkatest.Backend) (string, *kgo.Client, *kadm.Client) {
	t.Helper()
	topic := kafkatest.TopicName(t)
	cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	kafkatest.CreateTopic(t, b, topic, 6, 3, nil)
	if f, ok := b.(*kafkatest.Fake); ok {
		for p := int32(0); p < 6; p++ {
			require.NoError(t, f.MoveTopicPartition(topic, p, p%3))
		}
	}
	return topic, cl, adm
}

// spreadTopic creates a 6-partition RF-3 topic whose leaders are on every
// broker (kfake: moved there; real Kafka spreads leaders itself) and writes
// `per` records to each partition.
func spreadTopic(t *testing.T, b kafkatest.Backend, per int) (string, map[int32]int32) {
	t.Helper()
	ctx := ctxT(t)
	topic, cl, adm := createSpreadTopic(t, b)
	leaders := map[int32]int32{}
	require.Eventually(t, func() bool {
		td, err := adm.ListTopics(ctx, topic)
		if err != nil || td[topic].Err != nil || len(td[topic].Partitions) != 6 {
			return false
		}
		for _, p := range td[topic].Partitions {
			if p.Leader < 0 {
				return false
			}
			leaders[p.Partition] = p.Leader
		}
		return true
	}, 20*time.Second, 100*time.Millisecond)
	distinct := map[int32]bool{}
	for _, l := range leaders {
		distinct[l] = true
	}
	require.Len(t, distinct, 3, "leaders %v must cover all 3 brokers for this test to prove routing", leaders)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for i := 0; i < per; i++ {
		for p := int32(0); p < 6; p++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i)),
				Timestamp: base.Add(time.Duration(i*6+int(5-p)) * time.Millisecond)})
		}
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())
	return topic, leaders
}

func TestStatementsOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, leaders := spreadTopic(t, b, 10)

		t.Run("describe topic asks each leader once per bound", func(t *testing.T) {
			tr.reset()
			rows, _ := mustRun(t, s, &lang.DescribeTopic{Topic: topic})
			require.Len(t, rows, 6)
			for _, r := range rows {
				require.Equal(t, int64(leaders[int32(r[0].(int64))]), r[1])
				require.Equal(t, []any{int64(0), int64(10), int64(10), int64(10), int64(0)}, []any{r[4], r[5], r[6], r[7], r[8]})
			}
			require.Len(t, tr.count("ListOffsets"), 3)
			for id, n := range tr.count("ListOffsets") {
				require.Equal(t, 3, n, "broker %d: one ListOffsets per bound (earliest, latest, last stable)", id)
			}
		})

		t.Run("describe topic with 60 partitions: one request per broker per step", func(t *testing.T) {
			wide := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, wide, 60, 3, nil)
			mustRun(t, s, &lang.DescribeTopic{Topic: wide}) // the session's first look at it
			tr.reset()
			rows, _ := mustRun(t, s, &lang.DescribeTopic{Topic: wide})
			require.Len(t, rows, 60)
			leaders := map[int64]bool{}
			for _, r := range rows {
				leaders[r[1].(int64)] = true
			}
			require.Len(t, leaders, 3, "60 partitions are led by all 3 brokers")
			require.Equal(t, map[int32]int{}, without(tr.count("Metadata"), 1), "one Metadata request")
			for id, n := range tr.count("ListOffsets") {
				require.Equal(t, 3, n, "broker %d: one ListOffsets each for the earliest, latest and last stable offsets, not one per partition", id)
			}
			require.Len(t, tr.count("ListOffsets"), 3)
		})

		t.Run("consume newest equals the end of oldest", func(t *testing.T) {
			all := consumeAll(t, s, &lang.Consume{Topic: topic, Limit: i64(1000)})
			require.Len(t, all, 60)
			newest := consumeAll(t, s, &lang.Consume{Topic: topic, From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(13)})
			require.Equal(t, all[47:], newest)
			_, _, err := run(t, s, &lang.Consume{Topic: topic, Partitions: []int32{99}})
			require.ErrorContains(t, err, "its partitions are 0-5")
		})

		t.Run("show groups unions every broker; describe group", func(t *testing.T) {
			cl := kafkatest.Client(t, b)
			adm := kadm.NewClient(cl)
			want := map[string]int32{}
			perBroker := map[int32]int{}
			for i := 0; len(want) < 6 && i < 2000; i++ {
				g := fmt.Sprintf("%s-g%d", topic, i)
				resp := adm.FindGroupCoordinators(ctxT(t), g)
				id := resp[g].NodeID
				if resp[g].Err == nil && perBroker[id] < 2 {
					perBroker[id]++
					want[g] = id
				}
			}
			require.Len(t, want, 6)
			for g := range want {
				_, err := adm.CommitOffsets(ctxT(t), g, kadm.OffsetsFromRecords(kgo.Record{Topic: topic, Partition: 1, Offset: 3}))
				require.NoError(t, err)
			}
			pattern := topic + "-g*"
			rows, _ := mustRun(t, s, &lang.ShowGroups{Like: &pattern})
			got := map[string]int32{}
			for _, r := range rows {
				got[r[0].(string)] = int32(r[3].(int64))
			}
			require.Equal(t, want, got)
			for g := range want {
				rows, _ := mustRun(t, s, &lang.DescribeGroup{Group: g})
				require.Len(t, rows, 6, "every partition of the committed topic")
				require.Equal(t, result.Row{topic, int64(1), int64(4), int64(10), int64(6), nil, nil, nil}, rows[1][:8])
				require.Equal(t, result.Row{topic, int64(0), nil, int64(10), nil, nil, nil, nil, nil}, rows[0])
				break
			}
			_, _, err := run(t, s, &lang.DescribeGroup{Group: topic + "-nope"})
			require.ErrorContains(t, err, "no consumer group named")
		})

		t.Run("produce, create and drop", func(t *testing.T) {
			rows, _ := mustRun(t, s, &lang.Produce{Topic: topic, Key: &lang.Literal{Bytes: []byte("k1")}, Value: &lang.Literal{Bytes: []byte("v")}})
			p := kafka.PartitionForKey(topic, []byte("k1"), 6)
			require.Equal(t, int64(p), rows[0][1])
			require.Equal(t, int64(10), rows[0][2])
			name := kafkatest.TopicName(t)
			mustRun(t, s, &lang.CreateTopic{Topic: name, Partitions: i32(3), Replication: i16(3)})
			rows, _ = mustRun(t, s, &lang.DescribeTopic{Topic: name})
			require.Len(t, rows, 3)
			mustRun(t, s, &lang.DropTopic{Topic: name})
			require.Eventually(t, func() bool {
				rows, _ := mustRun(t, s, &lang.DropTopic{Topic: name, IfExists: true})
				return rows[0][1] == "did not exist"
			}, 20*time.Second, 200*time.Millisecond)
		})
	})
}

func TestShowClusterNamesTheQuorumLeader(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	cl := kafkatest.Client(t, r)
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	quorumLeader := func() int32 {
		resp, err := req.RequestWith(ctxT(t), cl)
		require.NoError(t, err)
		return resp.Topics[0].Partitions[0].LeaderID
	}
	// Metadata's controller_id is a random broker under KRaft; the row must
	// name the quorum leader every time (as it was just before or just
	// after: on a loaded machine the quorum may elect another).
	for i := 0; i < 5; i++ {
		before := quorumLeader()
		rows, _ := mustRun(t, s, &lang.ShowCluster{})
		after := quorumLeader()
		require.Equal(t, "controller", rows[3][0])
		named := rows[3][1].(string)
		require.True(t, strings.HasPrefix(named, fmt.Sprintf("%d (", before)) || strings.HasPrefix(named, fmt.Sprintf("%d (", after)),
			"row %q, quorum leader %d then %d", named, before, after)
		require.Equal(t, "brokers", rows[1][0])
		require.Equal(t, "3", rows[1][1])
	}
}

func TestConsumeTransactionsDoesNotHang(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	topic := kafkatest.TopicName(t)
	kafkatest.CreateTopic(t, r, topic, 1, 3, nil)
	txn := kafkatest.Client(t, r, kgo.TransactionalID(topic+"-txn"), kgo.DefaultProduceTopic(topic))
	batch := func(commit bool, vals ...string) {
		require.NoError(t, txn.BeginTransaction())
		for _, v := range vals {
			require.NoError(t, txn.ProduceSync(ctxT(t), &kgo.Record{Value: []byte(v)}).FirstErr())
		}
		require.NoError(t, txn.EndTransaction(ctxT(t), kgo.TransactionEndTry(commit)))
	}
	batch(true, "c1", "c2")
	batch(false, "a1", "a2", "a3")
	batch(true, "c3")
	batch(false, "a4") // the log now ends in an aborted batch and its marker
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.Execute(ctx, &lang.Consume{Topic: topic, Limit: i64(1000)})
	require.NoError(t, err)
	var vals []string
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		vals = append(vals, string(row[4].([]byte)))
	}
	require.NoError(t, res.Err())
	require.NoError(t, ctx.Err(), "CONSUME must stop at the captured end, not wait")
	require.Equal(t, []string{"c1", "c2", "c3"}, vals)
	newest := consumeAll(t, s, &lang.Consume{Topic: topic, From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(2)})
	require.Len(t, newest, 2, "markers and aborted batches widen the tail window instead of shrinking the page")
	require.Equal(t, "c3", string(newest[1][4].([]byte)))
}

func TestCompactionGapsDoNotShrinkOrHang(t *testing.T) {
	f := kafkatest.NewFake(t)
	s, _ := session(t, f)
	topic := kafkatest.TopicName(t)
	adm := kadm.NewClient(kafkatest.Client(t, f))
	_, err := adm.CreateTopic(ctxT(t), 1, 3, map[string]*string{"cleanup.policy": kmsg.StringPtr("compact")}, topic)
	require.NoError(t, err)
	cl := kafkatest.Client(t, f, kgo.DefaultProduceTopic(topic))
	for round := 0; round < 5; round++ {
		for k := 0; k < 4; k++ {
			require.NoError(t, cl.ProduceSync(ctxT(t), &kgo.Record{Key: []byte(fmt.Sprint("k", k)), Value: []byte(fmt.Sprint(round))}).FirstErr())
		}
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), &kgo.Record{Key: []byte("k0"), Value: nil}).FirstErr())
	f.Compact()
	all := consumeAll(t, s, &lang.Consume{Topic: topic, Limit: i64(1000)})
	require.Less(t, len(all), 21, "compaction removed records")
	newest := consumeAll(t, s, &lang.Consume{Topic: topic, From: &lang.Start{Kind: lang.FromNewest}, Limit: i64(3)})
	require.Equal(t, all[len(all)-3:], newest)
}

func TestBrokerKilledStatementsAnswerOrNameIt(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	topic, leaders := spreadTopic(t, r, 5)
	victim := leaders[0]
	var addr string
	for _, b := range r.Brokers() {
		if b.ID == victim {
			addr = b.Addr
		}
	}
	require.NoError(t, r.StopBroker(victim, true))
	t.Cleanup(func() { require.NoError(t, r.StartBroker(victim)) })

	namesVictim := func(err error) {
		if err != nil {
			require.Contains(t, err.Error(), fmt.Sprintf("broker %d (%s)", victim, addr), "an error must name the dead broker")
		}
	}
	rows, _, err := run(t, s, &lang.DescribeTopic{Topic: topic})
	t.Logf("DESCRIBE TOPIC right after the kill: %v", err)
	namesVictim(err)
	require.Len(t, rows, 6, "every partition keeps its row")

	_, _, err = run(t, s, &lang.Consume{Topic: topic, Limit: i64(1000)})
	namesVictim(err)

	_, _, err = run(t, s, &lang.ShowGroups{})
	namesVictim(err)

	// Once Kafka has moved leadership (RF 3), everything answers fully again.
	require.Eventually(t, func() bool {
		rows, _, err := run(t, s, &lang.DescribeTopic{Topic: topic})
		return err == nil && len(rows) == 6
	}, 60*time.Second, time.Second)
	all := consumeAll(t, s, &lang.Consume{Topic: topic, Limit: i64(1000)})
	require.Len(t, all, 30)
}

// without returns counts whose total is not want, as a map to compare
// against empty: without(m, 1) is empty when exactly one request was sent.
func without(m map[int32]int, want int) map[int32]int {
	total := 0
	for _, n := range m {
		total += n
	}
	if total == want {
		return map[int32]int{}
	}
	return m
}

func TestShowTopicsMarksInternalTopics(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	topic := kafkatest.TopicName(t)
	kafkatest.CreateTopic(t, r, topic, 1, 3, nil)
	adm := kadm.NewClient(kafkatest.Client(t, r))
	// A commit makes Kafka create its internal offsets topic.
	_, err := adm.CommitOffsets(ctxT(t), kafkatest.GroupName(t), kadm.OffsetsFromRecords(kgo.Record{Topic: topic, Partition: 0, Offset: 0}))
	require.NoError(t, err)
	internal := "__consumer_offsets"
	rows, _ := mustRun(t, s, &lang.ShowTopics{Like: &internal})
	require.Len(t, rows, 1)
	require.Equal(t, true, rows[0][3], "internal column")
	require.Equal(t, int64(3), rows[0][2], "offsets.topic.replication.factor=3")
}
