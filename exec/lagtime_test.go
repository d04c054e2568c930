package exec

import (
	"crypto/rand"
	"fmt"
	"slices"
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
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// timedRecords writes 10 records to each of the 6 partitions, compressed,
// in one batch per partition: the first 5 ten minutes old, the last 5
// twenty seconds old (explicit timestamps, so what "the last minute" holds
// does not depend on how fast the test runs). It returns each record's
// timestamp by partition and offset.
func timedRecords(t *testing.T, b kafkatest.Backend, topic string, now time.Time) map[int32][]time.Time {
	t.Helper()
	cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	ts := map[int32][]time.Time{}
	var recs []*kgo.Record
	for p := int32(0); p < 6; p++ {
		for i := 0; i < 10; i++ {
			at := now.Add(-10 * time.Minute).Add(time.Duration(i) * time.Millisecond)
			if i >= 5 {
				at = now.Add(-20 * time.Second).Add(time.Duration(i) * time.Millisecond)
			}
			ts[p] = append(ts[p], at)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(fmt.Sprintf("%d-%d", p, i)), Timestamp: at})
		}
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	return ts
}

func commitAt(t *testing.T, b kafkatest.Backend, group, topic string, offsets map[int32]int64) {
	t.Helper()
	var recs []kgo.Record
	for p, off := range offsets {
		recs = append(recs, kgo.Record{Topic: topic, Partition: p, Offset: off - 1})
	}
	_, err := kadm.NewClient(kafkatest.Client(t, b)).CommitOffsets(ctxT(t), group, kadm.OffsetsFromRecords(recs...))
	require.NoError(t, err)
}

func column(res result.Result, name string) int { return slices.Index(colNames(res), name) }

// TestLagInTime: lag_ms is now minus the timestamp of the record at the
// committed offset (in the middle of a compressed batch for some), 0 where
// the group is caught up, NULL where it committed nothing or the record
// was deleted; read with one Fetch per leader broker. SHOW GROUPS'
// max_lag_ms is the largest. On both backends, over partitions led by all
// three brokers.
func TestLagInTime(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, leaders := spreadTopic(t, b, 0)
		now := time.Now().Truncate(time.Millisecond)
		s.Now = func() time.Time { return now }
		ts := timedRecords(t, b, topic, now)
		group := kafkatest.GroupName(t)
		// 3 and 6 are inside the partitions' single batches; 10 is the end.
		commitAt(t, b, group, topic, map[int32]int64{0: 3, 1: 3, 2: 6, 3: 6, 4: 10})

		tr.reset()
		rows, res := mustRun(t, s, &lang.DescribeGroup{Group: group})
		lagMs := column(res, "lag_ms")
		require.Len(t, rows, 6)
		want := map[int64]any{
			0: now.Sub(ts[0][3]).Milliseconds(), 1: now.Sub(ts[1][3]).Milliseconds(),
			2: now.Sub(ts[2][6]).Milliseconds(), 3: now.Sub(ts[3][6]).Milliseconds(),
			4: int64(0), // caught up
			5: nil,      // never committed
		}
		for _, r := range rows {
			require.Equal(t, want[r[1].(int64)], r[lagMs], "lag_ms of partition %v", r[1])
		}
		fetches := tr.count("Fetch")
		lagging := map[int32]bool{}
		for p := int32(0); p < 4; p++ {
			lagging[leaders[p]] = true
		}
		require.Len(t, fetches, len(lagging), "a Fetch to each leader of a lagging partition (leaders %v), none elsewhere", leaders)
		for broker, n := range fetches {
			require.True(t, lagging[broker], "broker %d leads no lagging partition", broker)
			require.Equal(t, 1, n, "broker %d: one Fetch for all its lagging partitions", broker)
		}

		pattern := group
		tr.reset()
		groups, res := mustRun(t, s, &lang.ShowGroups{Like: &pattern})
		require.Len(t, groups, 1)
		require.Equal(t, want[0], groups[0][column(res, "max_lag_ms")], "max_lag_ms: the oldest unconsumed record's age")
		for broker, n := range tr.count("Fetch") {
			require.Equal(t, 1, n, "SHOW GROUPS: broker %d: one Fetch", broker)
		}

		// The record at a committed offset deleted from below: NULL, and
		// a note that says so.
		deleted := group + "-deleted"
		commitAt(t, b, deleted, topic, map[int32]int64{4: 10, 5: 1})
		_, err := kadm.NewClient(kafkatest.Client(t, b)).DeleteRecords(ctxT(t), kadm.Offsets{topic: {5: {Topic: topic, Partition: 5, At: 2}}})
		require.NoError(t, err)
		rows, res = mustRun(t, s, &lang.DescribeGroup{Group: deleted})
		for _, r := range rows {
			if r[1] == int64(5) {
				require.Nil(t, r[lagMs])
			}
		}
		require.Contains(t, notes(res), fmt.Sprintf("lag_ms is NULL for %s/5: the record at committed offset 1 was deleted", topic))
		pattern = deleted
		groups, res = mustRun(t, s, &lang.ShowGroups{Like: &pattern})
		require.Len(t, groups, 1)
		require.Nil(t, groups[0][column(res, "max_lag_ms")], "partition 4 caught up, partition 5 behind at a deleted record: unknown, never 0")
		require.Contains(t, notes(res), fmt.Sprintf("max_lag_ms leaves out a partition: its lag_ms is NULL for group %q, %s/5", deleted, topic))
	})
}

// TestWriteRates: records_last_minute counts the records whose timestamps
// are within a minute of now, last_write is the newest record's
// timestamp, per partition and per topic; SHOW TOPICS asks each leader
// broker three ListOffsets (latest, at now-60s, max timestamp).
func TestWriteRates(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, _ := spreadTopic(t, b, 0)
		now := time.Now().Truncate(time.Millisecond)
		s.Now = func() time.Time { return now }
		ts := timedRecords(t, b, topic, now)
		recent := func(p int32) int64 {
			n := int64(0)
			for _, at := range ts[p] {
				if !at.Before(now.Add(-time.Minute)) {
					n++
				}
			}
			return n
		}

		rows, res := mustRun(t, s, parse(t, "SHOW PARTITIONS OF "+lang.QuoteName(topic)))
		n, last := column(res, "records_last_minute"), column(res, "last_write")
		var total int64
		for _, r := range rows {
			p := int32(r[1].(int64))
			require.Equal(t, recent(p), r[n], "records_last_minute of partition %d", p)
			require.Equal(t, ts[p][9].UnixMilli(), r[last].(time.Time).UnixMilli(), "last_write of partition %d", p)
			total += recent(p)
		}
		require.Equal(t, int64(30), total, "5 recent records in each of 6 partitions")

		tr.reset()
		rows, res = mustRun(t, s, &lang.ShowTopics{Like: &topic})
		require.Len(t, rows, 1)
		require.Equal(t, total, rows[0][column(res, "records_last_minute")])
		newest := ts[0][9]
		for p := range ts {
			if ts[p][9].After(newest) {
				newest = ts[p][9]
			}
		}
		require.Equal(t, newest.UnixMilli(), rows[0][column(res, "last_write")].(time.Time).UnixMilli())
		lo := tr.count("ListOffsets")
		require.Len(t, lo, 3, "the topic's leaders are on every broker")
		for broker, k := range lo {
			require.Equal(t, 3, k, "broker %d: latest, now-60s and max timestamp, one ListOffsets each", broker)
		}

		// ORDER BY the new column answers "which topics are written now".
		rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("SHOW TOPICS LIKE '%s' WHERE records_last_minute > 0 ORDER BY records_last_minute DESC", topic)))
		require.Len(t, rows, 1)
	})
}

// TestLagInTimeBatchLargerThanTheFirstShare: a Fetch gives only the first
// partition of a response a batch larger than its share (KIP-74); a
// partition whose batch at the committed offset is larger than the first
// round's share is read in a second round, still one Fetch per broker,
// and its lag_ms is right.
func TestLagInTimeBatchLargerThanTheFirstShare(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	for p := int32(1); p < 3; p++ {
		// Every partition on broker 0, so one Fetch carries them all.
		require.NoError(t, f.MoveTopicPartition("t", p, 0))
	}
	now := time.Now().Truncate(time.Millisecond)
	f.sess.Now = func() time.Time { return now }
	big := make([]byte, 200<<10)
	_, _ = rand.Read(big) // incompressible
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20))
	require.NoError(t, err)
	defer cl.Close()
	var recs []*kgo.Record
	at := map[int32]time.Time{}
	for p := int32(0); p < 3; p++ {
		at[p] = now.Add(-time.Duration(p+1) * time.Minute)
		v := []byte("small")
		if p > 0 {
			v = big
		}
		recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Value: v, Timestamp: at[p]}, &kgo.Record{Topic: "t", Partition: p, Value: []byte("next"), Timestamp: now})
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	_, err = f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(
		kgo.Record{Topic: "t", Partition: 0, Offset: -1}, kgo.Record{Topic: "t", Partition: 1, Offset: -1}, kgo.Record{Topic: "t", Partition: 2, Offset: -1}))
	require.NoError(t, err)
	f.trace.reset()
	rows, res := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	lagMs := column(res, "lag_ms")
	for _, r := range rows {
		p := int32(r[1].(int64))
		require.Equal(t, now.Sub(at[p]).Milliseconds(), r[lagMs], "lag_ms of partition %d", p)
	}
	require.Equal(t, map[int32]int{0: 2}, f.trace.count("Fetch"), "one Fetch per round, two rounds: a 64 KiB share, then 1 MiB for the batches that did not fit though the response had room")
}

// TestLagInTimeAtATransactionMarker: a group committed at a transaction's
// commit marker has not consumed the first data record after it: lag_ms is
// that record's age. With no record after the marker yet, lag_ms is NULL
// and a notice says why.
func TestLagInTimeAtATransactionMarker(t *testing.T) {
	f := newFake(t)
	f.spread(t, "tx", 1)
	f.spread(t, "tx-end", 1)
	now := time.Now().Truncate(time.Millisecond)
	f.sess.Now = func() time.Time { return now }
	txn, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.TransactionalID("lag-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer txn.Close()
	require.NoError(t, txn.BeginTransaction())
	for _, topic := range []string{"tx", "tx-end"} {
		for i := 0; i < 2; i++ {
			require.NoError(t, txn.ProduceSync(ctxT(t), &kgo.Record{Topic: topic, Value: []byte("in txn"), Timestamp: now.Add(-time.Hour)}).FirstErr())
		}
	}
	require.NoError(t, txn.EndTransaction(ctxT(t), kgo.TryCommit))
	after := now.Add(-90 * time.Second)
	plain, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer plain.Close()
	require.NoError(t, plain.ProduceSync(ctxT(t), &kgo.Record{Topic: "tx", Value: []byte("after"), Timestamp: after}).FirstErr())
	// Offsets 0 and 1 are the transaction's records, 2 its commit marker.
	for _, topic := range []string{"tx", "tx-end"} {
		_, err := f.adm.CommitOffsets(ctxT(t), "g-"+topic, kadm.OffsetsFromRecords(kgo.Record{Topic: topic, Partition: 0, Offset: 1}))
		require.NoError(t, err)
	}
	rows, res := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g-tx"})
	require.Len(t, rows, 1)
	require.Equal(t, int64(2), rows[0][2], "committed at the marker")
	require.Equal(t, now.Sub(after).Milliseconds(), rows[0][column(res, "lag_ms")], "the age of the first data record after the marker")

	rows, res = mustRun(t, f.sess, &lang.DescribeGroup{Group: "g-tx-end"})
	require.Len(t, rows, 1)
	require.Equal(t, int64(1), rows[0][4], "lag counts the marker")
	require.Nil(t, rows[0][column(res, "lag_ms")])
	require.Contains(t, notes(res), "lag_ms is NULL for tx-end/0: the record at committed offset 2 is a transaction marker and no record follows it yet")
}

// TestLastWriteOnBrokersBeforeKafka3: ListOffsets before v7 (Kafka 2.8)
// reads MAX_TIMESTAMP's -3 as a time and would answer the first record:
// last_write is NULL with a notice, records_last_minute still counts, and
// the result is not partial.
func TestLastWriteOnBrokersBeforeKafka3(t *testing.T) {
	f := newFakeTB(t, kfake.MaxVersions(kversion.V2_8_0()))
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)
	rows, res, err := run(t, f.sess, parse(t, "SHOW PARTITIONS OF t"))
	require.NoError(t, err)
	for _, r := range rows {
		require.Nil(t, r[column(res, "last_write")], "partition %v", r[1])
		require.Equal(t, int64(0), r[column(res, "records_last_minute")], "an hour old: none in the last minute")
	}
	require.Contains(t, notes(res), "last_write is NULL where the leader is older than Kafka 3.0")
}

// TestLagInTimeNotAuthorizedToRead: reading the record at a committed
// offset needs READ on the topic, which lag in offsets does not: lag_ms
// and max_lag_ms are NULL with a notice, the result is not partial.
func TestLagInTimeNotAuthorizedToRead(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 4)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 1, Offset: 0}))
	require.NoError(t, err)
	f.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewFetchResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewFetchResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	rows, res, err := run(t, f.sess, &lang.DescribeGroup{Group: "g"})
	require.NoError(t, err, "not partial")
	for _, r := range rows {
		if r[1] == int64(1) {
			require.Equal(t, int64(3), r[4], "lag in offsets is known")
			require.Nil(t, r[column(res, "lag_ms")])
		}
	}
	require.Contains(t, notes(res), "lag_ms is NULL where reading the record at the committed offset was not authorized (it needs READ on the topic): t")
	groups, res, err := run(t, f.sess, &lang.ShowGroups{})
	require.NoError(t, err, "not partial")
	require.Len(t, groups, 1)
	require.Nil(t, groups[0][column(res, "max_lag_ms")])
}

// TestLagInTimeManyPartitionsOverTheBrokersResponseCap: a broker caps a
// Fetch response at its fetch.max.bytes (here held low on kfake's hook, as
// a real broker with thousands of lagging partitions reaches its 55 MiB);
// the partitions it leaves out were starved, not too large: they are asked
// again with the same share until every one is read, and none is reported
// as a batch too large to read.
func TestLagInTimeManyPartitionsOverTheBrokersResponseCap(t *testing.T) {
	f := newFake(t)
	const parts = 12
	f.spread(t, "t", parts)
	for p := int32(0); p < parts; p++ {
		require.NoError(t, f.MoveTopicPartition("t", p, 0))
	}
	now := time.Now().Truncate(time.Millisecond)
	f.sess.Now = func() time.Time { return now }
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	// Ten 10 KiB batches per partition: more than a 64 KiB share of data
	// after each committed offset.
	chunk := make([]byte, 10<<10)
	_, _ = rand.Read(chunk)
	for i := 0; i < 10; i++ {
		var recs []*kgo.Record
		for p := int32(0); p < parts; p++ {
			recs = append(recs, &kgo.Record{Topic: "t", Partition: p, Value: chunk, Timestamp: now.Add(-time.Duration(p+1) * time.Minute).Add(time.Duration(i) * time.Millisecond)})
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	}
	var commits []kgo.Record
	for p := int32(0); p < parts; p++ {
		commits = append(commits, kgo.Record{Topic: "t", Partition: p, Offset: -1})
	}
	_, err = f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(commits...))
	require.NoError(t, err)
	// The broker's fetch.max.bytes: room for about one and a half 64 KiB
	// shares a response.
	f.ControlKey(int16(kmsg.Fetch), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.FetchRequest)
		req.MaxBytes = min(req.MaxBytes, 100<<10)
		return nil, nil, false
	})
	rows, res := mustRun(t, f.sess, &lang.DescribeGroup{Group: "g"})
	lagMs := column(res, "lag_ms")
	require.Len(t, rows, parts)
	for _, r := range rows {
		p := r[1].(int64)
		require.Equal(t, (time.Duration(p+1) * time.Minute).Milliseconds(), r[lagMs], "lag_ms of partition %d", p)
	}
	require.Empty(t, notes(res), "no partition is reported as unreadable")
}

// TestWriteRatesOfQuietAndEmptyPartitions: a partition with no record in
// the last minute (ListOffsets by time answers -1) has
// records_last_minute 0, not a negative count; one with no record at all
// has last_write NULL, not 1970; a topic of both sums to 0 and has the
// newest of its records' timestamps.
func TestWriteRatesOfQuietAndEmptyPartitions(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, _ := spreadTopic(t, b, 0)
		now := time.Now().Truncate(time.Millisecond)
		s.Now = func() time.Time { return now }
		cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		old := map[int32]time.Time{}
		var recs []*kgo.Record
		for p := int32(0); p < 3; p++ { // 3, 4 and 5 stay empty
			old[p] = now.Add(-10 * time.Minute).Add(time.Duration(p) * time.Second)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("old"), Timestamp: old[p]})
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())

		rows, res := mustRun(t, s, parse(t, "SHOW PARTITIONS OF "+lang.QuoteName(topic)))
		n, last := column(res, "records_last_minute"), column(res, "last_write")
		require.Len(t, rows, 6)
		for _, r := range rows {
			p := int32(r[1].(int64))
			require.Equal(t, int64(0), r[n], "records_last_minute of partition %d: nothing in the last minute", p)
			if at, ok := old[p]; ok {
				require.Equal(t, at.UnixMilli(), r[last].(time.Time).UnixMilli(), "last_write of partition %d", p)
			} else {
				require.Nil(t, r[last], "last_write of empty partition %d", p)
			}
		}
		rows, res = mustRun(t, s, &lang.ShowTopics{Like: &topic})
		require.Len(t, rows, 1)
		require.Equal(t, int64(0), rows[0][column(res, "records_last_minute")])
		require.Equal(t, old[2].UnixMilli(), rows[0][column(res, "last_write")].(time.Time).UnixMilli())
	})
}

// TestWriteRatesOfALeaderThatFailsAreNullWithAWarning: when one leader
// broker fails the by-time ListOffsets, records_last_minute of the topics
// it leads a partition of is NULL, never the sum of the partitions that
// answered; SHOW TOPICS still answers, with a warning naming the broker;
// SHOW PARTITIONS leaves only that broker's partitions NULL and is partial.
func TestWriteRatesOfALeaderThatFailsAreNullWithAWarning(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3) // partition p led by broker p
	now := time.Now().Truncate(time.Millisecond)
	f.sess.Now = func() time.Time { return now }
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for p := int32(0); p < 3; p++ {
		require.NoError(t, cl.ProduceSync(ctxT(t), &kgo.Record{Topic: "t", Partition: p, Value: []byte("x"), Timestamp: now.Add(-time.Second)}).FirstErr())
	}
	f.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		if f.CurrentNode() != 2 || len(req.Topics) == 0 || len(req.Topics[0].Partitions) == 0 || req.Topics[0].Partitions[0].Timestamp < 0 {
			return nil, nil, false
		}
		return kafkatest.ListOffsetsFailing(req, kerr.KafkaStorageError.Code), nil, true
	})
	rows, res, err := run(t, f.sess, &lang.ShowTopics{})
	require.NoError(t, err, "SHOW TOPICS is the metadata: it answers")
	require.Len(t, rows, 1)
	require.Nil(t, rows[0][column(res, "records_last_minute")], "partition 2 did not answer: the topic's count is unknown, not 2")
	w := strings.Join(res.Stats().Warnings(), "\n")
	require.Contains(t, w, "records_last_minute")
	require.Contains(t, w, "broker 2")

	rows, res, err = run(t, f.sess, parse(t, "SHOW PARTITIONS OF t"))
	require.True(t, result.IsPartial(err), "SHOW PARTITIONS is partial: %v", err)
	require.ErrorContains(t, err, "t/2")
	for _, r := range rows {
		if r[1] == int64(2) {
			require.Nil(t, r[column(res, "records_last_minute")])
		} else {
			require.Equal(t, int64(1), r[column(res, "records_last_minute")], "partition %v", r[1])
		}
	}
}

// TestShowTopicsAnswersWhenTheWriteRatesFail: the write rates are an
// addition to SHOW TOPICS' metadata rows, not a reason to lose them: when
// their ListOffsets cannot even be retried (here the metadata refresh
// after a NOT_LEADER answers an error), the rows still come, with the
// rates NULL and a warning, as when a leader does not answer.
func TestShowTopicsAnswersWhenTheWriteRatesFail(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)
	var moved atomic.Bool
	f.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		if f.CurrentNode() != 2 || len(req.Topics) == 0 || len(req.Topics[0].Partitions) == 0 || req.Topics[0].Partitions[0].Timestamp < 0 {
			return nil, nil, false
		}
		moved.Store(true)
		return kafkatest.ListOffsetsFailing(req, kerr.NotLeaderForPartition.Code), nil, true
	})
	f.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if !moved.Load() {
			return nil, nil, false
		}
		req := kreq.(*kmsg.MetadataRequest)
		resp := req.ResponseKind().(*kmsg.MetadataResponse)
		st := kmsg.NewMetadataResponseTopic()
		st.Topic = kmsg.StringPtr("t")
		st.ErrorCode = kerr.LeaderNotAvailable.Code
		resp.Topics = append(resp.Topics, st)
		return resp, nil, true
	})
	rows, res, err := run(t, f.sess, &lang.ShowTopics{})
	require.NoError(t, err, "SHOW TOPICS answers its metadata rows")
	require.Len(t, rows, 1)
	require.Equal(t, int64(3), rows[0][column(res, "partitions")])
	require.Nil(t, rows[0][column(res, "records_last_minute")], "unknown, never 0")
	require.Contains(t, strings.Join(res.Stats().Warnings(), "\n"), "records_last_minute")
}

// TestWriteRatesWarningNamesEachPartitionOnce: a leader that fails all
// three of the write rates' ListOffsets (latest, at now-60s, max
// timestamp) is one line of SHOW TOPICS' warning per partition, not three.
func TestWriteRatesWarningNamesEachPartitionOnce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if f.CurrentNode() != 2 {
			return nil, nil, false
		}
		req := kreq.(*kmsg.ListOffsetsRequest)
		return kafkatest.ListOffsetsFailing(req, kerr.KafkaStorageError.Code), nil, true
	})
	_, res, err := run(t, f.sess, &lang.ShowTopics{})
	require.NoError(t, err)
	w := strings.Join(res.Stats().Warnings(), "\n")
	require.Equal(t, 1, strings.Count(w, "partition t/2 on broker 2"), "one line for t/2: %s", w)
}
