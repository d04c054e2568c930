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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// shareFromEarliest sets share.auto.offset.reset=earliest for group (a
// GROUP config, IncrementalAlterConfigs): the default, latest, would give a
// consumer that joins after the records were written nothing to read.
func shareFromEarliest(t *testing.T, b kafkatest.Backend, group string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	rr := kmsg.NewIncrementalAlterConfigsRequestResource()
	rr.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	rr.ResourceName = group
	rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	rc.Name = "share.auto.offset.reset"
	rc.Value = kmsg.StringPtr("earliest")
	rc.Op = kmsg.IncrementalAlterConfigOpSet
	rr.Configs = append(rr.Configs, rc)
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctxT(t), kafkatest.Client(t, b))
	require.NoError(t, err)
	require.Len(t, resp.Resources, 1)
	require.NoError(t, kerr.ErrorForCode(resp.Resources[0].ErrorCode), "setting share.auto.offset.reset for group %s", group)
}

// shareConsume joins group as a share consumer of topic and reads until it
// has want records, acknowledging each (accept). The consumer stays in the
// group until the returned client is closed (or the test ends).
func shareConsume(t *testing.T, b kafkatest.Backend, group, topic string, want int) *kgo.Client {
	t.Helper()
	cl := kafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ShareGroup(group), kgo.ClientID("share-"+group))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got := 0
	for got < want {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "share consumer read %d of %d records", got, want)
		for _, e := range fs.Errors() {
			require.NoError(t, e.Err, "share fetch of %s/%d", e.Topic, e.Partition)
		}
		got += len(fs.Records())
		cl.MarkAcks(kgo.AckAccept)
	}
	require.NoError(t, cl.FlushAcks(ctx))
	require.Equal(t, want, got)
	return cl
}

// shareGroupOn returns a group name whose coordinator is broker id, so a
// test can tell a request sent to the coordinator from one sent elsewhere.
func shareGroupOn(t *testing.T, adm *kadm.Client, prefix string, id int32) string {
	t.Helper()
	for i := 0; i < 500; i++ {
		g := fmt.Sprintf("%s-%d", prefix, i)
		resp := adm.FindGroupCoordinators(ctxT(t), g)
		if resp[g].Err == nil && resp[g].NodeID == id {
			return g
		}
	}
	t.Fatalf("no group name %s-N is coordinated by broker %d", prefix, id)
	return ""
}

// brokersOf returns the brokers api went to.
func brokersOf(tr *tracer, api string) []int32 {
	var out []int32
	for id := range tr.count(api) {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// itemsTo returns the items (groups, partitions) api carried to broker id.
func itemsTo(tr *tracer, api string, id int32) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, e := range tr.events {
		if e.API == api && e.Broker == id {
			out = append(out, e.Items...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestShareGroupsOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, leaders := spreadTopic(t, b, 10)
		adm := kadm.NewClient(kafkatest.Client(t, b))
		ids := []int32{}
		for _, br := range b.Brokers() {
			ids = append(ids, br.ID)
		}
		// Two groups coordinated by two different brokers: every request
		// about one must reach its own coordinator.
		prefix := kafkatest.GroupName(t)
		live := shareGroupOn(t, adm, prefix+"-live", ids[1])
		idle := shareGroupOn(t, adm, prefix+"-idle", ids[2])
		shareFromEarliest(t, b, live)
		consumer := shareConsume(t, b, live, topic, 60)

		// The idle group gets start offsets without ever having a member
		// (AlterShareGroupOffsets creates it, as kafka-share-groups.sh
		// --reset-offsets does for a group that does not exist).
		rows, res := mustRun(t, s, &lang.ResetShareGroup{Group: idle, Topic: &topic, Partitions: []int32{0, 1}, To: lang.ResetTarget{Kind: lang.ResetOffset, Offset: 4}, Execute: true})
		require.Equal(t, []result.Row{{topic, int64(0), nil, int64(4), nil, int64(6)}, {topic, int64(1), nil, int64(4), nil, int64(6)}}, rows)
		require.Contains(t, notes(res), "EXECUTE creates it")

		t.Run("show share groups: every broker lists, each coordinator describes its own", func(t *testing.T) {
			like := prefix + "*"
			var rows []result.Row
			require.Eventually(t, func() bool {
				tr.reset()
				rows, _ = mustRun(t, s, &lang.ShowShareGroups{Like: &like})
				// Acknowledged records move the start offset once the
				// share coordinator has written them down.
				return len(rows) == 2 && rows[1][5] == int64(0)
			}, 30*time.Second, 300*time.Millisecond, "rows %v", rows)
			require.Equal(t, result.Row{idle, "Empty", int64(ids[2]), int64(0), topic, int64(12)}, rows[0], "6 records after offset 4 in each of 2 partitions")
			require.Equal(t, result.Row{live, "Stable", int64(ids[1]), int64(1), topic, int64(0)}, rows[1])
			require.Equal(t, ids, brokersOf(tr, "ListGroups"), "ListGroups to every broker")
			require.Equal(t, []int32{ids[1], ids[2]}, brokersOf(tr, "ShareGroupDescribe"))
			require.Equal(t, []string{live}, itemsTo(tr, "ShareGroupDescribe", ids[1]))
			require.Equal(t, []string{idle}, itemsTo(tr, "ShareGroupDescribe", ids[2]))
			require.Equal(t, []string{live}, itemsTo(tr, "DescribeShareGroupOffsets", ids[1]))
			require.Equal(t, []string{idle}, itemsTo(tr, "DescribeShareGroupOffsets", ids[2]))
			require.Empty(t, tr.count("ListOffsets"), "the broker gives the lag (DescribeShareGroupOffsets v1): no ListOffsets")
		})

		startOf := map[int32]int64{}
		t.Run("describe share group: start offsets from the coordinator, ends from the leaders", func(t *testing.T) {
			tr.reset()
			rows, _ := mustRun(t, s, &lang.DescribeShareGroup{Group: live})
			require.Len(t, rows, 6)
			member := rows[0][6].(string)
			require.NotEmpty(t, member)
			for p, r := range rows {
				// Every record is acknowledged: no lag. The start offset
				// is the broker's: kfake moves it past acknowledged
				// records at once, Kafka 4.3.1 may keep it where the
				// acknowledged run began (the lag subtracts those).
				start := r[2].(int64)
				require.True(t, start >= 0 && start <= 10, "start offset %d", start)
				require.Equal(t, result.Row{topic, int64(p), start, int64(10), int64(0), int64(1), member, "share-" + live}, r)
				startOf[int32(p)] = start
			}
			require.Equal(t, []int32{ids[1]}, brokersOf(tr, "ShareGroupDescribe"))
			require.Equal(t, []int32{ids[1]}, brokersOf(tr, "DescribeShareGroupOffsets"))
			for id := range tr.count("ListOffsets") {
				for _, item := range itemsTo(tr, "ListOffsets", id) {
					var p int32
					_, err := fmt.Sscanf(item[len(topic)+1:], "%d", &p)
					require.NoError(t, err)
					require.Equal(t, leaders[p], id, "ListOffsets for %s went to its leader", item)
				}
			}
			require.Len(t, tr.count("ListOffsets"), 3, "one ListOffsets per leader broker")

			rows, _ = mustRun(t, s, &lang.DescribeShareGroup{Group: idle})
			require.Equal(t, []result.Row{{topic, int64(0), int64(4), int64(10), int64(6), int64(0), nil, nil}, {topic, int64(1), int64(4), int64(10), int64(6), int64(0), nil, nil}}, rows)
		})

		t.Run("a share group is not a consumer group", func(t *testing.T) {
			rows, res := mustRun(t, s, &lang.ShowGroups{Like: str(prefix + "*")})
			require.Empty(t, rows, "no share group shows as an empty consumer group")
			require.Contains(t, notes(res), "2 share groups are not listed here: SHOW SHARE GROUPS lists them")
			_, _, err := run(t, s, &lang.DescribeGroup{Group: live})
			require.ErrorContains(t, err, fmt.Sprintf("%q is a share group, not a consumer group: DESCRIBE SHARE GROUP %s", live, live))
			_, _, err = run(t, s, &lang.ResetGroup{Group: idle, Topic: &topic, To: lang.ResetTarget{Kind: lang.ResetEarliest}})
			require.ErrorContains(t, err, "is a share group, not a consumer group: RESET SHARE GROUP")
			_, _, err = run(t, s, &lang.DescribeShareGroup{Group: prefix + "-nope"})
			require.ErrorContains(t, err, "no share group named")
		})

		t.Run("reset and delete refuse a group with members", func(t *testing.T) {
			tr.reset()
			_, _, err := run(t, s, &lang.ResetShareGroup{Group: live, To: lang.ResetTarget{Kind: lang.ResetEarliest}, Execute: true})
			require.ErrorContains(t, err, "has 1 active member")
			require.ErrorContains(t, err, "share-"+live)
			_, _, err = run(t, s, &lang.DeleteShareGroup{Group: live})
			require.ErrorContains(t, err, "has 1 active member")
			require.Empty(t, tr.count("AlterShareGroupOffsets"))
			require.Empty(t, tr.count("DeleteGroups"))
		})

		consumer.Close() // leaves the group
		var st []result.Row
		require.Eventually(t, func() bool {
			st, _ = mustRun(t, s, &lang.ShowShareGroups{Like: &live})
			return len(st) == 1 && st[0][1] == "Empty" && st[0][3] == int64(0)
		}, 30*time.Second, 200*time.Millisecond, "the group empties after its consumer left: %v", st)
		// 5 more records in every partition: the lag a reader will see.
		prod := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		for p := int32(0); p < 6; p++ {
			for i := 0; i < 5; i++ {
				require.NoError(t, prod.ProduceSync(ctxT(t), &kgo.Record{Topic: topic, Partition: p, Value: []byte("more")}).FirstErr())
			}
		}

		t.Run("reset: a dry run changes nothing, EXECUTE moves the start offsets at the coordinator", func(t *testing.T) {
			tr.reset()
			dry := &lang.ResetShareGroup{Group: live, To: lang.ResetTarget{Kind: lang.ResetEarliest}}
			planned, res := mustRun(t, s, dry)
			require.Len(t, planned, 6)
			for p, r := range planned {
				require.Equal(t, result.Row{topic, int64(p), startOf[int32(p)], int64(0), int64(5), int64(15)}, r, "5 new records to read")
			}
			require.Contains(t, notes(res), "dry run: nothing was changed; to move these start offsets run: RESET SHARE GROUP "+live+" TO EARLIEST EXECUTE;")
			require.Empty(t, tr.count("AlterShareGroupOffsets"), "a dry run sends no AlterShareGroupOffsets")
			rows, _ := mustRun(t, s, &lang.DescribeShareGroup{Group: live})
			for p, r := range rows {
				require.Equal(t, startOf[int32(p)], r[2], "start offset unchanged by the dry run: %v", r)
				require.Equal(t, int64(5), r[4])
			}

			exec := *dry
			exec.Execute = true
			tr.reset()
			done, res := mustRun(t, s, &exec)
			require.Equal(t, planned, done, "EXECUTE matches its dry run row for row")
			require.Contains(t, notes(res), "executed: moved the start offsets of 6 partitions")
			require.Equal(t, []int32{ids[1]}, brokersOf(tr, "AlterShareGroupOffsets"), "AlterShareGroupOffsets to the coordinator")
			rows, _ = mustRun(t, s, &lang.DescribeShareGroup{Group: live})
			for p, r := range rows {
				require.Equal(t, result.Row{topic, int64(p), int64(0), int64(15), int64(15), int64(0), nil, nil}, r)
			}

			// One partition, to an offset past the end: clamped, and said.
			rows, res = mustRun(t, s, &lang.ResetShareGroup{Group: live, Topic: &topic, Partitions: []int32{2}, To: lang.ResetTarget{Kind: lang.ResetOffset, Offset: 99}, Execute: true})
			require.Equal(t, []result.Row{{topic, int64(2), int64(0), int64(15), int64(15), int64(0)}}, rows)
			require.Contains(t, notes(res), "past the log's end (15); clamped to 15")
			// By time: the first 10 records are an hour old, the last 5 new.
			rows, _ = mustRun(t, s, &lang.ResetShareGroup{Group: live, Topic: &topic, Partitions: []int32{3}, To: lang.ResetTarget{Kind: lang.ResetAgo, Ago: 10 * time.Minute}})
			require.Equal(t, result.Row{topic, int64(3), int64(0), int64(10), int64(15), int64(5)}, rows[0])
		})

		t.Run("delete: a topic's start offsets, then the group, at the coordinator", func(t *testing.T) {
			other := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, other, 1, 3, nil)
			mustRun(t, s, &lang.ResetShareGroup{Group: idle, Topic: &other, To: lang.ResetTarget{Kind: lang.ResetLatest}, Execute: true})
			tr.reset()
			rows, _ := mustRun(t, s, &lang.DeleteShareGroup{Group: idle, Topics: []string{topic}})
			require.Equal(t, []result.Row{{idle, topic, "deleted"}}, rows)
			require.Equal(t, []int32{ids[2]}, brokersOf(tr, "DeleteShareGroupOffsets"))
			rows, _ = mustRun(t, s, &lang.DescribeShareGroup{Group: idle})
			require.Equal(t, []result.Row{{other, int64(0), int64(0), int64(0), int64(0), int64(0), nil, nil}}, rows, "only the other topic's start offsets are left")
			rows, _ = mustRun(t, s, &lang.DeleteShareGroup{Group: idle})
			require.Equal(t, []result.Row{{idle, "deleted"}}, rows)
			require.Equal(t, []int32{ids[2]}, brokersOf(tr, "DeleteGroups"))
			_, _, err := run(t, s, &lang.DescribeShareGroup{Group: idle})
			require.ErrorContains(t, err, "no share group named")
			_, _, err = run(t, s, &lang.DeleteShareGroup{Group: idle})
			require.ErrorContains(t, err, "no share group named")
		})
	})
}

// EXPLAIN of a share statement sends nothing it plans, and plans exactly
// the routed requests the statement then sends: to the group's
// coordinator, to every broker, to each partition's leader.
func TestExplainShareStatementsMatchWhatTheyRun(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)
	group := "work"
	f.spread(t, "u", 3)
	for _, topic := range []string{"t", "u"} {
		mustRun(t, f.sess, &lang.ResetShareGroup{Group: group, Topic: str(topic), To: lang.ResetTarget{Kind: lang.ResetEarliest}, Execute: true})
	}
	routed := func(api string) bool {
		return api != "Metadata" && api != "FindCoordinator" && api != "Note"
	}
	stmts := []lang.Statement{
		&lang.ShowShareGroups{},
		&lang.DescribeShareGroup{Group: group},
		&lang.ResetShareGroup{Group: group, Topic: str("t"), Partitions: []int32{0, 2}, To: lang.ResetTarget{Kind: lang.ResetAgo, Ago: time.Hour}, Execute: true},
		&lang.ResetShareGroup{Group: group, Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetLatest}},
		&lang.DeleteShareGroup{Group: group, Topics: []string{"t"}},
		&lang.DeleteShareGroup{Group: group},
	}
	for _, st := range stmts {
		t.Run(lang.Format(st), func(t *testing.T) {
			f.trace.reset()
			rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: st})
			for _, e := range f.trace.events {
				require.False(t, routed(e.API), "EXPLAIN sent %s to broker %d", e.API, e.Broker)
			}
			// A row with a broker names it; one without ("each group's
			// coordinator", before the groups are known) names the API.
			planned, unnamed, onlyIf := map[string]bool{}, map[string]bool{}, map[string]bool{}
			for _, r := range rows {
				api := r[1].(string)
				switch {
				case !routed(api):
				case r[2] == nil && strings.HasPrefix(r[4].(string), "only if"):
					onlyIf[api] = true // a request on a condition this statement does not meet
				case r[2] != nil:
					planned[fmt.Sprintf("%s@%d", api, r[2])] = true
				default:
					unnamed[api] = true
				}
			}
			require.NotEmpty(t, planned)
			f.trace.reset()
			mustRun(t, f.sess, st)
			sent := map[string]bool{}
			for _, e := range f.trace.events {
				switch {
				case !routed(e.API):
				case onlyIf[e.API]:
					t.Errorf("sent %s, planned only if its condition holds", e.API)
				case unnamed[e.API]:
					sent[e.API] = true
				default:
					sent[fmt.Sprintf("%s@%d", e.API, e.Broker)] = true
				}
			}
			for api := range unnamed {
				if api != "ListOffsets" || sent[api] { // ListOffsets "if any": only for a broker that gives no lag
					planned[api] = true
				}
			}
			require.Equal(t, planned, sent, "EXPLAIN's routed requests and the trace of running it")
		})
	}
}

// DESCRIBE GROUP and RESET GROUP of a name no consumer group has ask its
// coordinator whether it is a share group (to point to the share
// statement): EXPLAIN lists that request too, on the condition it is sent.
func TestExplainListsTheShareGroupQuestionOfGroupStatements(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	for _, st := range []lang.Statement{
		&lang.DescribeGroup{Group: "nope"},
		&lang.ResetGroup{Group: "nope", Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetEarliest}},
	} {
		t.Run(lang.Format(st), func(t *testing.T) {
			f.trace.reset()
			_, _, err := run(t, f.sess, st)
			if _, ok := st.(*lang.DescribeGroup); ok {
				require.ErrorContains(t, err, "no consumer group named")
			} else {
				require.NoError(t, err)
			}
			require.NotEmpty(t, f.trace.count("ShareGroupDescribe"), "the statement asks")
			rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: st})
			var planned []string
			for _, r := range rows {
				if r[1] == "ShareGroupDescribe" {
					planned = append(planned, fmt.Sprint(r[3], ": ", r[4]))
				}
			}
			require.Equal(t, []string{"the group's coordinator: only if no consumer group has that name (is it a share group?)"}, planned)
		})
	}
}

// A broker that counts lag (DescribeShareGroupOffsets v1, Kafka 4.2+)
// answers -1 where it cannot (the partition's end unknown to it). That is
// NULL, as kafka-share-groups.sh prints "-", not latest - start counted by
// kql: that count ignores the records already acknowledged past the start
// offset, so it would show a lag the broker itself does not claim.
func TestShareLagTheBrokerCannotCountIsNull(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 6)
	group := "queue"
	mustRun(t, f.sess, &lang.ResetShareGroup{Group: group, Topic: str("t"), Partitions: []int32{0, 1}, To: lang.ResetTarget{Kind: lang.ResetOffset, Offset: 2}, Execute: true})
	answerShareOffsets(f, group, "t", []int64{2, 2}, []int64{-1, 3})
	rows, _ := mustRun(t, f.sess, &lang.DescribeShareGroup{Group: group})
	require.Equal(t, []result.Row{
		{"t", int64(0), int64(2), int64(6), nil, int64(0), nil, nil},
		{"t", int64(1), int64(2), int64(6), int64(3), int64(0), nil, nil},
	}, rows)
	rows, _ = mustRun(t, f.sess, &lang.ShowShareGroups{Like: &group})
	require.Equal(t, []result.Row{{group, "Empty", int64(f.CoordinatorFor(group)), int64(0), "t", nil}}, rows, "the group's lag is unknown")
	rows, _ = mustRun(t, f.sess, &lang.ResetShareGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetEarliest}})
	require.Equal(t, []any{nil, int64(3)}, []any{rows[0][4], rows[1][4]}, "lag_before")
}

// ListGroups v5+ names each group's type; only that says a group is a
// share group. A classic group may use any protocol type, "share" too (a
// client's own protocol): it is still a classic group, and SHOW GROUPS
// lists it.
func TestShowGroupsKeepsAClassicGroupWhoseProtocolTypeIsShare(t *testing.T) {
	f := newFake(t)
	join := func(member string) *kmsg.JoinGroupResponse {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group, req.MemberID, req.ProtocolType = "custom", member, "share"
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 30000
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name = "mine"
		req.Protocols = append(req.Protocols, p)
		resp, err := req.RequestWith(ctxT(t), f.kcl)
		require.NoError(t, err)
		return resp
	}
	resp := join("")
	if resp.ErrorCode == kerr.MemberIDRequired.Code {
		resp = join(resp.MemberID)
	}
	require.NoError(t, kerr.ErrorForCode(resp.ErrorCode))
	rows, res := mustRun(t, f.sess, &lang.ShowGroups{})
	require.Len(t, rows, 1, "the classic group is listed")
	require.Equal(t, "custom", rows[0][0])
	require.NotContains(t, notes(res), "share group")
}

// answerShareOffsets has the coordinator answer every
// DescribeShareGroupOffsets of group with these start offsets and lags of
// topic's partitions 0, 1, ...: what Kafka 4.x answers and kfake does not
// (a start offset of -1 for a partition never fetched, a lag of -1 where
// the broker cannot count it).
func answerShareOffsets(f *fake, group, topic string, starts, lags []int64) {
	f.ControlKey(int16(kmsg.DescribeShareGroupOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
		resp.Version = req.GetVersion()
		g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		g.GroupID = group
		rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
		rt.Topic = topic
		for p := range starts {
			rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
			rp.Partition, rp.StartOffset, rp.Lag = int32(p), starts[p], lags[p]
			rt.Partitions = append(rt.Partitions, rp)
		}
		g.Topics = append(g.Topics, rt)
		resp.Groups = append(resp.Groups, g)
		return resp, nil, true
	})
}
