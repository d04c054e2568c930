package exec

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// committedRows is every record of topic a read_committed reader sees
// (kql reads read_committed).
func committedRows(t *testing.T, s *Session, topic string) []result.Row {
	t.Helper()
	return consumeAll(t, s, &lang.Consume{Topic: topic, Limit: i64(1 << 30)})
}

// committedEventually waits until a read_committed reader sees n records
// of topic: a committed transaction becomes visible once the coordinator
// has written its markers, which it does after EndTxn answered.
func committedEventually(t *testing.T, s *Session, topic string, n int) []result.Row {
	t.Helper()
	var rows []result.Row
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows = committedRows(t, s, topic)
		if len(rows) >= n || time.Now().After(deadline) {
			return rows
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestWriterTransactionsRouteToLeadersAndCoordinator(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, leaders := spreadTopic(t, b, 0)
		ctx := ctxT(t)
		id := kafka.NewTransactionalID("test")
		require.Regexp(t, `^kql-test-[A-Za-z0-9._-]+-\d+-\d+$`, id)
		tr.reset()
		w, err := s.cl.NewWriter(ctx, kafka.WriterConfig{TransactionalID: id, MaxTxnRecords: 7})
		require.NoError(t, err)
		defer w.Close()
		commits := 0
		keyBytes := map[int32]int64{}
		for i := 0; i < 60; i++ {
			rec := &kafka.OutRecord{Topic: topic, Partition: int32(i % 6), Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("v"),
				Headers: []kafka.Header{{Key: "h", Value: nil}, {Key: "h", Value: []byte("x")}}}
			keyBytes[rec.Partition] += int64(len(rec.Key))
			committed, err := w.Write(ctx, rec)
			require.NoError(t, err)
			if committed {
				commits++
			}
		}
		require.Equal(t, 8, commits, "60 records in transactions of 7: 8 full ones")
		require.NoError(t, w.Commit(ctx))
		require.Equal(t, 9, w.Transactions())
		got := w.Written()
		require.Len(t, got, 6)
		for _, pw := range got {
			require.NoError(t, pw.Err)
			require.Equal(t, int64(10), pw.Records)
			require.Equal(t, pw.Records*(1+1+1+1)+keyBytes[pw.Partition], pw.Bytes, "key, value, header keys and values")
		}

		coords, fails, err := s.cl.FindTxnCoordinators(ctx, []string{id})
		require.NoError(t, err)
		require.Empty(t, fails)
		coord := coords[id]
		for _, api := range []string{"InitProducerId", "AddPartitionsToTxn", "EndTxn"} {
			// Under KIP-890 part 2 (transaction.version 2) a Produce adds
			// its partition to the transaction itself: no AddPartitionsToTxn.
			if api != "AddPartitionsToTxn" {
				require.NotEmpty(t, tr.count(api), api)
			}
			for broker := range tr.count(api) {
				require.Equal(t, coord, broker, "%s goes to the transaction coordinator %d", api, coord)
			}
		}
		produced := tr.count("Produce")
		for _, l := range leaders {
			require.NotZero(t, produced[l], "broker %d leads a partition and must get Produce", l)
		}
		require.Len(t, produced, 3, "Produce only to the 3 leaders")

		rows := committedEventually(t, s, topic, 60)
		require.Len(t, rows, 60)
		for _, r := range rows {
			require.Equal(t, []result.Header{{Key: "h"}, {Key: "h", Value: []byte("x")}}, r[5])
		}

		// An aborted transaction: its records reach the log but no
		// read_committed reader sees them.
		w2, err := s.cl.NewWriter(ctx, kafka.WriterConfig{TransactionalID: kafka.NewTransactionalID("test")})
		require.NoError(t, err)
		defer w2.Close()
		for i := 0; i < 12; i++ {
			_, err := w2.Write(ctx, &kafka.OutRecord{Topic: topic, Partition: int32(i % 6), Value: []byte("aborted")})
			require.NoError(t, err)
		}
		require.NoError(t, w2.Abort())
		require.Empty(t, w2.Written())
		require.Len(t, committedRows(t, s, topic), 60, "nothing of the aborted transaction is visible")
	})
}
