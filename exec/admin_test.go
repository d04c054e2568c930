package exec

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
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

func topicRes(t string) lang.ConfigResource {
	return lang.ConfigResource{Kind: lang.ResourceTopic, Topic: t}
}

func brokerRes(id int32) lang.ConfigResource {
	return lang.ConfigResource{Kind: lang.ResourceBroker, Broker: id}
}

// configValue finds name in SHOW CONFIGS rows: its value and source.
func configValue(rows []result.Row, name string) (value any, source string, ok bool) {
	for _, r := range rows {
		if r[0] == name {
			return r[1], r[2].(string), true
		}
	}
	return nil, "", false
}

func notes(res result.Result) string {
	return strings.Join(res.Stats().Notices(), "\n")
}

func TestTopicConfigsOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _ := spreadTopic(t, b, 1)

		rows, _ := mustRun(t, s, &lang.ShowConfigs{Resource: topicRes(topic)})
		_, _, set := configValue(rows, "retention.ms")
		require.False(t, set, "a new topic has no retention.ms of its own: %v", rows)
		all, _ := mustRun(t, s, &lang.ShowConfigs{Resource: topicRes(topic), All: true})
		def, src, ok := configValue(all, "retention.ms")
		require.True(t, ok, "ALL lists the defaults")
		require.NotEqual(t, "DYNAMIC_TOPIC_CONFIG", src)

		tr.reset()
		rows, _ = mustRun(t, s, &lang.AlterConfigs{Resource: topicRes(topic), Set: []lang.TopicConfig{{Name: "retention.ms", Value: "3600000"}}})
		require.Equal(t, []result.Row{{"topic " + topic, "retention.ms", def, "3600000"}}, rows)
		require.Len(t, tr.count("IncrementalAlterConfigs"), 1, "one request")
		require.Empty(t, tr.count("AlterConfigs"), "never the legacy AlterConfigs")

		rows, _ = mustRun(t, s, &lang.ShowConfigs{Resource: topicRes(topic)})
		v, src, ok := configValue(rows, "retention.ms")
		require.True(t, ok)
		require.Equal(t, []any{"3600000", "DYNAMIC_TOPIC_CONFIG"}, []any{v, src})

		// Another SET leaves retention.ms alone (IncrementalAlterConfigs).
		mustRun(t, s, &lang.AlterConfigs{Resource: topicRes(topic), Set: []lang.TopicConfig{{Name: "segment.ms", Value: "7200000"}}})
		rows, _ = mustRun(t, s, &lang.ShowConfigs{Resource: topicRes(topic)})
		v, _, _ = configValue(rows, "retention.ms")
		require.Equal(t, "3600000", v, "setting segment.ms kept retention.ms")

		rows, _ = mustRun(t, s, &lang.AlterConfigs{Resource: topicRes(topic), Unset: []string{"retention.ms", "segment.ms"}})
		require.Equal(t, result.Row{"topic " + topic, "retention.ms", "3600000", def}, rows[0], "UNSET goes back to the default")
		rows, _ = mustRun(t, s, &lang.ShowConfigs{Resource: topicRes(topic)})
		require.Empty(t, rows, "no config of its own left")

		_, _, err := run(t, s, &lang.ShowConfigs{Resource: topicRes(topic + "-nope")})
		require.ErrorContains(t, err, "no topic named")
		_, _, err = run(t, s, &lang.AlterConfigs{Resource: topicRes(topic + "-nope"), Unset: []string{"retention.ms"}})
		require.ErrorContains(t, err, "no topic named")
	})
}

// The broker stores a value in its own spelling (a number trimmed, a list
// without the blanks around its commas): ALTER still sees its change read
// back at once, not after waiting out configSettle for a string that will
// never come, and says nothing of a change that did not show.
func TestAlterReadsBackAValueTheBrokerRespelled(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _ := spreadTopic(t, b, 1)
		start := time.Now()
		rows, res := mustRun(t, s, &lang.AlterConfigs{Resource: topicRes(topic), Set: []lang.TopicConfig{
			{Name: "cleanup.policy", Value: "compact , delete"}, {Name: "retention.ms", Value: " 5000 "}}})
		require.Less(t, time.Since(start), configSettle, "read back without waiting out the bound")
		require.NotContains(t, notes(res), "did not yet read back")
		require.Equal(t, "topic "+topic, rows[0][0])
		require.Contains(t, []any{"compact,delete", "compact , delete"}, rows[0][3])
		require.Contains(t, []any{"5000", " 5000 "}, rows[1][3])
	})
}

// A broker's own configs come from that broker: the trace shows exactly
// one DescribeConfigs, to it, and ALTER BROKER goes to it as well.
func TestBrokerConfigsComeFromThatBroker(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		for _, br := range b.Brokers() {
			tr.reset()
			rows, _ := mustRun(t, s, &lang.ShowConfigs{Resource: brokerRes(br.ID), All: true})
			require.NotEmpty(t, rows)
			require.Equal(t, map[int32]int{br.ID: 1}, tr.count("DescribeConfigs"), "broker %d's configs from broker %d alone", br.ID, br.ID)
		}
		_, _, err := run(t, s, &lang.ShowConfigs{Resource: brokerRes(99)})
		require.ErrorContains(t, err, "no broker with id 99")

		id := b.Brokers()[1].ID
		const name = "log.cleaner.backoff.ms"
		tr.reset()
		rows, _ := mustRun(t, s, &lang.AlterConfigs{Resource: brokerRes(id), Set: []lang.TopicConfig{{Name: name, Value: "16000"}}})
		require.Equal(t, fmt.Sprintf("broker %d", id), rows[0][0])
		require.Equal(t, "16000", rows[0][3])
		require.Equal(t, map[int32]int{id: 1}, tr.count("IncrementalAlterConfigs"))
		rows, _ = mustRun(t, s, &lang.ShowConfigs{Resource: brokerRes(id)})
		v, _, ok := configValue(rows, name)
		require.True(t, ok, "without ALL a broker shows what was set on it: %v", rows)
		require.Equal(t, "16000", v)
		rows, _ = mustRun(t, s, &lang.AlterConfigs{Resource: brokerRes(id), Unset: []string{name}})
		require.Equal(t, "16000", rows[0][2])
		require.NotEqual(t, "16000", rows[0][3])
	})
}

// Real Kafka only: kfake takes any topic config name and value, and keeps
// one set of dynamic broker configs for the whole cluster, reported as
// per-broker values, so there is no cluster default to tell apart there.
func TestConfigErrorsAndClusterDefaultsOnRealKafka(t *testing.T) {
	func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _ := spreadTopic(t, b, 1)
		_, _, err := run(t, s, &lang.AlterConfigs{Resource: topicRes(topic), Set: []lang.TopicConfig{{Name: "retention.ms", Value: "soon"}}})
		require.ErrorContains(t, err, fmt.Sprintf("ALTER TOPIC %q: nothing was changed", topic))
		require.ErrorContains(t, err, "retention.ms")
		_, _, err = run(t, s, &lang.AlterConfigs{Resource: topicRes(topic), Set: []lang.TopicConfig{{Name: "no.such.config", Value: "1"}}})
		require.ErrorContains(t, err, "no.such.config")

		const name = "log.cleaner.backoff.ms"
		rows, _ := mustRun(t, s, &lang.ShowConfigs{Resource: lang.ConfigResource{Kind: lang.ResourceCluster}})
		_, _, was := configValue(rows, name)
		require.False(t, was)
		tr.reset()
		rows, _ = mustRun(t, s, &lang.AlterConfigs{Resource: lang.ConfigResource{Kind: lang.ResourceCluster}, Set: []lang.TopicConfig{{Name: name, Value: "17000"}}})
		require.Equal(t, []result.Row{{"cluster", name, nil, "17000"}}, rows)
		require.Len(t, tr.count("IncrementalAlterConfigs"), 1)
		rows, _ = mustRun(t, s, &lang.ShowConfigs{Resource: lang.ConfigResource{Kind: lang.ResourceCluster}})
		v, src, _ := configValue(rows, name)
		require.Equal(t, []any{"17000", "DYNAMIC_DEFAULT_BROKER_CONFIG"}, []any{v, src})
		rows, _ = mustRun(t, s, &lang.AlterConfigs{Resource: lang.ConfigResource{Kind: lang.ResourceCluster}, Unset: []string{name}})
		require.Equal(t, []result.Row{{"cluster", name, "17000", nil}}, rows)

	}(t, kafkatest.Shared(t))
}

// A value whose name says it is a secret is never echoed, whatever the
// broker says of it (kfake does not flag it sensitive; that is the point).
func TestAlterNeverEchoesASecret(t *testing.T) {
	f := newFake(t)
	rows, _ := mustRun(t, f.sess, &lang.AlterConfigs{Resource: brokerRes(1), Set: []lang.TopicConfig{{Name: "listener.name.x.ssl.key.password", Value: "s3cret-pw"}}})
	require.Equal(t, result.Row{"broker 1", "listener.name.x.ssl.key.password", hidden, hidden}, rows[0])
	f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.IncrementalAlterConfigs}, Err: kerr.InvalidRequest, Count: 1})
	_, _, err := run(t, f.sess, &lang.AlterConfigs{Resource: brokerRes(1), Set: []lang.TopicConfig{{Name: "sasl.jaas.config", Value: "s3cret-pw"}}})
	require.ErrorContains(t, err, "sasl.jaas.config = "+hidden)
	require.NotContains(t, err.Error(), "s3cret-pw")
}

// Kafka types more configs as PASSWORD than their names say: the PEM
// certificates and keys of ssl.keystore.certificate.chain and
// ssl.truststore.certificates (KIP-651) are sensitive too. A failed ALTER
// names what was asked without echoing any of them.
func TestAlterNeverEchoesAPemConfig(t *testing.T) {
	f := newFake(t)
	for _, name := range []string{"ssl.truststore.certificates", "listener.name.x.ssl.keystore.certificate.chain", "ssl.keystore.key",
		"sasl.oauthbearer.assertion.private.key.passphrase"} {
		h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.IncrementalAlterConfigs}, Err: kerr.InvalidRequest, Count: 1})
		_, _, err := run(t, f.sess, &lang.AlterConfigs{Resource: brokerRes(1), Set: []lang.TopicConfig{{Name: name, Value: "-----BEGIN PEM-----"}}})
		h.Remove()
		require.Error(t, err, name)
		require.ErrorContains(t, err, name+" = "+hidden)
		require.NotContains(t, err.Error(), "BEGIN PEM", name)
		require.True(t, SecretConfig(name), name)
	}
	require.False(t, SecretConfig("retention.ms"))
}

func TestAlterPartitionsOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic := kafkatest.TopicName(t)
		mustRun(t, s, &lang.CreateTopic{Topic: topic, Partitions: i32(2), Replication: i16(3)})
		tr.reset()
		rows, res := mustRun(t, s, &lang.AlterPartitions{Topic: topic, Count: 5})
		require.Equal(t, []result.Row{{"topic " + topic, "partitions", "2", "5"}}, rows)
		require.Contains(t, notes(res), "keys now map to other partitions")
		require.Equal(t, 1, len(tr.count("CreatePartitions")))
		rows, _ = mustRun(t, s, &lang.DescribeTopic{Topic: topic})
		require.Len(t, rows, 5, "DESCRIBE TOPIC shows the new partitions at once")
		_, _, err := run(t, s, &lang.AlterPartitions{Topic: topic, Count: 3})
		require.ErrorContains(t, err, "the topic has 5 partitions, and Kafka can only add partitions")
		_, _, err = run(t, s, &lang.AlterPartitions{Topic: topic, Count: 5})
		require.ErrorContains(t, err, "already has 5 partitions")
		_, _, err = run(t, s, &lang.AlterPartitions{Topic: topic + "-nope", Count: 5})
		require.ErrorContains(t, err, "no topic named")
	})
}

// committed reads the group's committed offsets back through DESCRIBE GROUP.
func committed(t *testing.T, s *Session, group string) map[int64]any {
	t.Helper()
	rows, _ := mustRun(t, s, &lang.DescribeGroup{Group: group})
	out := map[int64]any{}
	for _, r := range rows {
		out[r[1].(int64)] = r[2]
	}
	return out
}

func commitAll(t *testing.T, b kafkatest.Backend, group, topic string, parts int32, off int64) {
	t.Helper()
	adm := kadm.NewClient(kafkatest.Client(t, b))
	var recs []kgo.Record
	for p := int32(0); p < parts; p++ {
		recs = append(recs, kgo.Record{Topic: topic, Partition: p, Offset: off - 1})
	}
	_, err := adm.CommitOffsets(ctxT(t), group, kadm.OffsetsFromRecords(recs...))
	require.NoError(t, err)
}

func TestResetGroupOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _ := spreadTopic(t, b, 10)
		group := kafkatest.GroupName(t)
		commitAll(t, b, group, topic, 6, 3)

		dry := &lang.ResetGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetEarliest}}
		tr.reset()
		planned, res := mustRun(t, s, dry)
		require.Len(t, planned, 6)
		for p, r := range planned {
			require.Equal(t, result.Row{topic, int64(p), int64(3), int64(0), int64(7), int64(10)}, r)
		}
		require.Contains(t, notes(res), "dry run: nothing was committed")
		require.Contains(t, notes(res), "RESET GROUP "+group+" TO EARLIEST EXECUTE;")
		require.Empty(t, tr.count("OffsetCommit"), "a dry run commits nothing")
		for p, off := range committed(t, s, group) {
			require.Equal(t, int64(3), off, "partition %d still at 3 after the dry run", p)
		}

		exec := *dry
		exec.Execute = true
		tr.reset()
		done, res := mustRun(t, s, &exec)
		require.Equal(t, planned, done, "EXECUTE matches its dry run row for row")
		require.Contains(t, notes(res), "executed: committed new offsets for 6 partitions")
		require.Len(t, tr.count("OffsetCommit"), 1, "one OffsetCommit, to the coordinator")
		for p, off := range committed(t, s, group) {
			require.Equal(t, int64(0), off, "partition %d", p)
		}

		// SHIFT BY, clamped at both ends and said so.
		rows, res := mustRun(t, s, &lang.ResetGroup{Group: group, Topic: &topic, Partitions: []int32{1, 4}, To: lang.ResetTarget{Kind: lang.ResetShift, Shift: 4}})
		require.Equal(t, []result.Row{{topic, int64(1), int64(0), int64(4), int64(10), int64(6)}, {topic, int64(4), int64(0), int64(4), int64(10), int64(6)}}, rows)
		rows, res = mustRun(t, s, &lang.ResetGroup{Group: group, Topic: &topic, Partitions: []int32{2}, To: lang.ResetTarget{Kind: lang.ResetShift, Shift: -5}})
		require.Equal(t, int64(0), rows[0][3])
		require.Contains(t, notes(res), fmt.Sprintf("%s/2: offset -5 is before the log's start (0); clamped to 0", topic))
		rows, res = mustRun(t, s, &lang.ResetGroup{Group: group, Topic: &topic, Partitions: []int32{2}, To: lang.ResetTarget{Kind: lang.ResetOffset, Offset: 1000}, Execute: true})
		require.Equal(t, result.Row{topic, int64(2), int64(0), int64(10), int64(10), int64(0)}, rows[0])
		require.Contains(t, notes(res), "past the log's end (10); clamped to 10")
		got := committed(t, s, group)
		require.Equal(t, int64(10), got[2])
		require.Equal(t, int64(0), got[1], "only the named partition moved")

		// By time: every record is an hour old, so 2h ago is the start and
		// a minute ago is past the last record: the end.
		rows, _ = mustRun(t, s, &lang.ResetGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetAgo, Ago: 2 * time.Hour}})
		for _, r := range rows {
			require.Equal(t, int64(0), r[3])
		}
		rows, _ = mustRun(t, s, &lang.ResetGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetAgo, Ago: time.Minute}})
		for _, r := range rows {
			require.Equal(t, int64(10), r[3])
		}

		// A group with a live member is refused, naming it; so is DELETE.
		live := kafkatest.GroupName(t)
		consumeOnce(t, b, live, topic, 60)
		_, _, err := run(t, s, &lang.ResetGroup{Group: live, To: lang.ResetTarget{Kind: lang.ResetLatest}, Execute: true})
		require.ErrorContains(t, err, "has 1 active member")
		require.ErrorContains(t, err, "review-"+live)
		_, _, err = run(t, s, &lang.DeleteGroup{Group: live})
		require.ErrorContains(t, err, "review-"+live)

		// SHIFT BY needs a committed offset; a new group needs a topic.
		fresh := kafkatest.GroupName(t)
		_, _, err = run(t, s, &lang.ResetGroup{Group: fresh, To: lang.ResetTarget{Kind: lang.ResetLatest}})
		require.ErrorContains(t, err, "no consumer group named")
		rows, res = mustRun(t, s, &lang.ResetGroup{Group: fresh, Topic: &topic, To: lang.ResetTarget{Kind: lang.ResetOffset, Offset: 5}, Execute: true})
		require.Len(t, rows, 6)
		require.Nil(t, rows[0][2], "no current offset: NULL, not 0")
		require.Nil(t, rows[0][4], "no lag before: NULL, not 0")
		require.Contains(t, notes(res), "EXECUTE creates it")
		require.Equal(t, int64(5), committed(t, s, fresh)[3])
		_, _, err = run(t, s, &lang.ResetGroup{Group: group + "-x", Topic: &topic, To: lang.ResetTarget{Kind: lang.ResetShift, Shift: 1}})
		require.ErrorContains(t, err, "SHIFT BY moves committed offsets")

		// DELETE GROUP of an empty group.
		rows, _ = mustRun(t, s, &lang.DeleteGroup{Group: fresh})
		require.Equal(t, []result.Row{{fresh, "deleted"}}, rows)
		_, _, err = run(t, s, &lang.DescribeGroup{Group: fresh})
		require.ErrorContains(t, err, "no consumer group named")
		_, _, err = run(t, s, &lang.DeleteGroup{Group: fresh})
		require.ErrorContains(t, err, "no consumer group named")
	})
}

// A dry run of TO d AGO suggests the statement that commits exactly its
// rows: the time it resolved, pinned, not "d AGO" again, which EXECUTE
// would resolve against a later clock (records written in between move
// the offsets).
func TestResetGroupAgoDryRunSuggestsThePinnedTime(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.sess.Now = func() time.Time { return now }
	dry := &lang.ResetGroup{Group: "g", Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetAgo, Ago: time.Hour}}
	planned, res := mustRun(t, f.sess, dry)
	pinned := &lang.ResetGroup{Group: "g", Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetTimestamp, Timestamp: now.Add(-time.Hour).UnixMilli()}, Execute: true}
	require.Contains(t, notes(res), "to commit these offsets run: "+lang.Format(pinned)+";")
	require.Contains(t, notes(res), "1h AGO")

	// The suggested statement, run later, commits the rows shown.
	f.sess.Now = func() time.Time { return now.Add(30 * time.Minute) }
	done, _ := mustRun(t, f.sess, pinned)
	require.Equal(t, planned, done)
}

// The coordinator moves between the dry run and EXECUTE: EXECUTE finds the
// new one, and a NOT_COORDINATOR on the way is retried there.
func TestResetGroupCoordinatorMovedBetweenDryRunAndExecute(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0},
		kgo.Record{Topic: "t", Partition: 1, Offset: 0}, kgo.Record{Topic: "t", Partition: 2, Offset: 0}))
	require.NoError(t, err)
	st := &lang.ResetGroup{Group: "g", To: lang.ResetTarget{Kind: lang.ResetLatest}}
	planned, _ := mustRun(t, f.sess, st)
	before := f.CoordinatorFor("g")
	for i := 0; i < 100 && f.CoordinatorFor("g") == before; i++ {
		f.RehashCoordinators()
	}
	after := f.CoordinatorFor("g")
	require.NotEqual(t, before, after, "the coordinator moved")
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Group: "g", Err: kerr.NotCoordinator, Count: 1})
	defer h.Remove()
	f.trace.reset()
	exec := *st
	exec.Execute = true
	done, _ := mustRun(t, f.sess, &exec)
	require.Equal(t, planned, done)
	require.Equal(t, 1, h.Hits(), "the first OffsetCommit was told NOT_COORDINATOR")
	require.Equal(t, map[int32]int{after: 2}, f.trace.count("OffsetCommit"), "both tries went to the new coordinator")
	rows, _ := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	for _, r := range rows {
		require.Equal(t, int64(5), r[2])
	}
}

// One partition's commit is refused: its row has NULL new_offset, the
// others are done, and the error names the partition and the broker.
func TestResetGroupPartialFailureNamesThePartition(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: "t", Partitions: []int32{1}, Err: kerr.OffsetMetadataTooLarge, Count: -1})
	defer h.Remove()
	rows, res, err := run(t, f.sess, &lang.ResetGroup{Group: "g", Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetLatest}, Execute: true})
	require.True(t, result.IsPartial(err), "%v", err)
	require.ErrorContains(t, err, "OffsetCommit: partition t/1 on broker")
	require.Equal(t, int64(5), rows[0][3])
	require.Nil(t, rows[1][3], "not committed: NULL")
	require.Equal(t, int64(5), rows[2][3])
	require.Contains(t, notes(res), "executed in part: committed new offsets for 2 of 3 partitions")
}

// The partition's error names the coordinator that refused it, even when
// FindCoordinator no longer answers by then (or names another broker): it is
// the broker that answered the OffsetCommit, not a second lookup's guess.
func TestResetGroupPartialFailureNamesTheBrokerThatRefused(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	var committing atomic.Bool
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Topic: "t", Partitions: []int32{1}, Err: kerr.OffsetMetadataTooLarge, Count: -1,
		When: func(kmsg.Request) bool { committing.Store(true); return true }})
	defer h.Remove()
	fc := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.FindCoordinator}, Err: kerr.CoordinatorNotAvailable, Count: -1,
		When: func(kmsg.Request) bool { return committing.Load() }})
	defer fc.Remove()
	coord := f.CoordinatorFor("g")
	_, _, err := run(t, f.sess, &lang.ResetGroup{Group: "g", Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetLatest}, Execute: true})
	require.True(t, result.IsPartial(err), "%v", err)
	require.ErrorContains(t, err, fmt.Sprintf("OffsetCommit: partition t/1 on broker %d (127.0.0.1:", coord))
	require.NotContains(t, err.Error(), "no leader")
}

func str(s string) *string { return &s }

func TestDeleteRecordsOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, leaders := spreadTopic(t, b, 10)

		dry := &lang.DeleteRecords{Topic: topic, Before: []lang.PartitionOffset{{Partition: 0, Offset: 4}, {Partition: 3, Offset: 6}}}
		planned, res := mustRun(t, s, dry)
		require.Equal(t, []result.Row{{topic, int64(0), int64(0), int64(4), int64(4)}, {topic, int64(3), int64(0), int64(6), int64(6)}}, planned)
		require.Contains(t, notes(res), "dry run: nothing was deleted (10 records would go)")
		rows, _ := mustRun(t, s, &lang.DescribeTopic{Topic: topic})
		require.Equal(t, int64(0), rows[0][4], "the dry run deleted nothing")

		exec := *dry
		exec.Execute = true
		tr.reset()
		done, _ := mustRun(t, s, &exec)
		require.Equal(t, planned, done, "EXECUTE matches its dry run")
		want := map[int32]int{leaders[0]: 1}
		want[leaders[3]] = 1
		require.Equal(t, want, tr.count("DeleteRecords"), "one DeleteRecords per leader")
		rows, _ = mustRun(t, s, &lang.DescribeTopic{Topic: topic})
		require.Equal(t, []any{int64(4), int64(6)}, []any{rows[0][4], rows[3][4]}, "earliest_offset moved")
		recs := consumeAll(t, s, &lang.Consume{Topic: topic, From: &lang.Start{Kind: lang.FromOldest}, Partitions: []int32{0}, Limit: i64(1)})
		require.Equal(t, int64(4), recs[0][1], "CONSUME FROM OLDEST starts there")

		// BEFORE OFFSET n over every partition: one request per broker;
		// partitions already past n are left alone and say 0.
		tr.reset()
		rows, _ = mustRun(t, s, &lang.DeleteRecords{Topic: topic, BeforeOffset: i64(5), Execute: true})
		require.Len(t, rows, 6)
		require.Equal(t, result.Row{topic, int64(3), int64(6), int64(6), int64(0)}, rows[3])
		require.Equal(t, result.Row{topic, int64(1), int64(0), int64(5), int64(5)}, rows[1])
		require.Len(t, tr.count("DeleteRecords"), 3)
		for id, n := range tr.count("DeleteRecords") {
			require.Equal(t, 1, n, "broker %d", id)
		}

		_, _, err := run(t, s, &lang.DeleteRecords{Topic: topic, BeforeOffset: i64(11), Partitions: []int32{2}, Execute: true})
		require.ErrorContains(t, err, "nothing was deleted: the offset is past the end of "+topic+"/2 ends at offset 10")
		_, _, err = run(t, s, &lang.DeleteRecords{Topic: topic, Before: []lang.PartitionOffset{{Partition: 9, Offset: 1}}})
		require.ErrorContains(t, err, "has no partition 9")
	})
}

func TestDeleteRecordsPartialFailure(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	h := f.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DeleteRecords}, Topic: "t", Partitions: []int32{2}, Err: kerr.PolicyViolation, Count: -1})
	defer h.Remove()
	rows, _, err := run(t, f.sess, &lang.DeleteRecords{Topic: "t", BeforeOffset: i64(2), Execute: true})
	require.True(t, result.IsPartial(err), "%v", err)
	require.ErrorContains(t, err, "DeleteRecords: partition t/2 on broker 2")
	require.Equal(t, result.Row{"t", int64(0), int64(0), int64(2), int64(2)}, rows[0])
	require.Equal(t, result.Row{"t", int64(2), int64(0), nil, nil}, rows[2], "failed: NULL, never a made-up number")
}

func TestExplainAdminStatementsRunNothing(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0}))
	require.NoError(t, err)
	stmts := map[string]lang.Statement{
		"show configs broker": &lang.ShowConfigs{Resource: brokerRes(2)},
		"alter topic":         &lang.AlterConfigs{Resource: topicRes("t"), Set: []lang.TopicConfig{{Name: "retention.ms", Value: "1"}}},
		"alter broker":        &lang.AlterConfigs{Resource: brokerRes(1), Unset: []string{"log.cleaner.backoff.ms"}},
		"partitions":          &lang.AlterPartitions{Topic: "t", Count: 6},
		"reset":               &lang.ResetGroup{Group: "g", Topic: str("t"), To: lang.ResetTarget{Kind: lang.ResetAgo, Ago: time.Hour}, Execute: true},
		"delete group":        &lang.DeleteGroup{Group: "g"},
		"delete records":      &lang.DeleteRecords{Topic: "t", BeforeOffset: i64(1), Execute: true},
	}
	for name, st := range stmts {
		t.Run(name, func(t *testing.T) {
			f.trace.reset()
			rows, _ := mustRun(t, f.sess, &lang.Explain{Stmt: st})
			require.NotEmpty(t, rows)
			for _, api := range []string{"DescribeConfigs", "IncrementalAlterConfigs", "CreatePartitions", "OffsetCommit", "OffsetFetch", "DescribeGroups", "DeleteGroups", "DeleteRecords", "ListOffsets"} {
				require.Empty(t, f.trace.count(api), "EXPLAIN %s sent %s", name, api)
			}
			var apis []string
			for _, r := range rows {
				apis = append(apis, fmt.Sprint(r[1], "@", r[2]))
			}
			joined := strings.Join(apis, " ")
			switch name {
			case "show configs broker":
				require.Equal(t, "DescribeConfigs@2", joined, "to broker 2 itself")
			case "alter broker":
				require.Equal(t, "DescribeConfigs@1 IncrementalAlterConfigs@1 DescribeConfigs@1", joined)
			case "partitions":
				require.Contains(t, joined, "CreatePartitions@")
			case "reset":
				require.Contains(t, joined, fmt.Sprintf("OffsetCommit@%d", f.CoordinatorFor("g")))
				require.Equal(t, 9, strings.Count(joined, "ListOffsets"), "earliest, latest, by time: each to the 3 leaders")
			case "delete group":
				require.Contains(t, joined, fmt.Sprintf("DeleteGroups@%d", f.CoordinatorFor("g")))
			case "delete records":
				require.Equal(t, 3, strings.Count(joined, "DeleteRecords"), "one per leader broker")
			}
		})
	}
	rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "t"})
	require.Len(t, rows, 3, "EXPLAIN ALTER TOPIC PARTITIONS added none")
}

// Real Kafka: the group's coordinator broker goes down (a controlled
// shutdown, as in a rolling restart) between the dry run and EXECUTE.
// EXECUTE finds the new coordinator and commits exactly its dry run.
func TestResetGroupExecuteAfterTheCoordinatorStoppedOnRealKafka(t *testing.T) {
	r := kafkatest.Shared(t)
	s, tr := session(t, r)
	topic, _ := spreadTopic(t, r, 4)
	group := kafkatest.GroupName(t)
	commitAll(t, r, group, topic, 6, 1)
	dry := &lang.ResetGroup{Group: group, To: lang.ResetTarget{Kind: lang.ResetLatest}}
	planned, _ := mustRun(t, s, dry)
	require.Len(t, planned, 6)

	ids, _, err := s.cl.FindCoordinators(ctxT(t), []string{group})
	require.NoError(t, err)
	victim := ids[group]
	require.NoError(t, r.StopBroker(victim, false))
	t.Cleanup(func() { require.NoError(t, r.StartBroker(victim)) })

	exec := *dry
	exec.Execute = true
	tr.reset()
	done, res, err := run(t, s, &exec)
	require.NoError(t, err, "EXECUTE after the coordinator %d stopped", victim)
	require.Equal(t, planned, done, "EXECUTE matches its dry run")
	require.Contains(t, notes(res), "executed: committed new offsets for 6 partitions")
	oc := tr.count("OffsetCommit")
	require.NotContains(t, oc, victim, "nothing committed at the stopped broker: %v", oc)
	for p, off := range committed(t, s, group) {
		require.Equal(t, int64(4), off, "partition %d", p)
	}
}

// The statement is cancelled (Ctrl-C, --timeout) while one leader has not
// answered DeleteRecords: the leaders that answered did delete, so their
// rows are shown as done, and the others are NULL with an error that says
// they are unknown (not "not deleted": their leader may have deleted).
func TestDeleteRecordsCancelledShowsWhatWasDeleted(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	victim := f.LeaderFor("t", 2)
	release := make(chan struct{})
	f.ControlKey(int16(kmsg.DeleteRecords), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if f.CurrentNode() == victim {
			f.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	defer close(release)
	ctx, cancel := context.WithTimeout(ctxT(t), 2*time.Second)
	defer cancel()
	res, err := f.sess.Execute(ctx, &lang.DeleteRecords{Topic: "t", BeforeOffset: i64(2), Execute: true})
	require.NoError(t, err, "the rows of what was deleted are the result")
	var rows []result.Row
	for r, ok := res.Next(); ok; r, ok = res.Next() {
		rows = append(rows, r)
	}
	require.Len(t, rows, 3)
	for _, r := range rows {
		if f.LeaderFor("t", int32(r[1].(int64))) == victim {
			require.Equal(t, result.Row{"t", r[1], int64(0), nil, nil}, r, "unanswered: NULL")
		} else {
			require.Equal(t, result.Row{"t", r[1], int64(0), int64(2), int64(2)}, r, "its leader answered: deleted")
		}
	}
	err = res.Err()
	require.True(t, result.IsPartial(err), "%v", err)
	require.ErrorContains(t, err, fmt.Sprintf("DeleteRecords: partition t/2 on broker %d", victim))
	require.ErrorContains(t, err, "may have deleted")
}
