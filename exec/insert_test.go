package exec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
)

// dlqRecords are 36 records on the 6 partitions of topic; record i names
// one of origins in its dlq.original.topic header, and every third has
// value "bad-<i>", the rest "ok-<i>".
func dlqRecords(topic string, origins []string) []*kgo.Record {
	// Recent: a real broker's retention (7 days) deletes older records
	// while the test runs.
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var out []*kgo.Record
	for i := 0; i < 36; i++ {
		v := fmt.Sprintf("ok-%d", i)
		if i%3 == 0 {
			v = fmt.Sprintf("bad-%d", i)
		}
		out = append(out, &kgo.Record{Topic: topic, Partition: int32(i % 6), Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(v),
			Timestamp: base.Add(time.Duration(i) * time.Millisecond),
			Headers:   []kgo.RecordHeader{{Key: "dlq.original.topic", Value: []byte(origins[i%len(origins)])}, {Key: "n", Value: nil}}})
	}
	return out
}

// spreadDest creates a topic of n partitions, RF 3, led by every broker
// (kfake: moved there; real Kafka spreads leaders itself).
func spreadDest(t *testing.T, b kafkatest.Backend, name string, n int32) {
	t.Helper()
	kafkatest.CreateTopic(t, b, name, n, 3, nil)
	if f, ok := b.(*kafkatest.Fake); ok {
		for p := int32(0); p < n; p++ {
			require.NoError(t, f.MoveTopicPartition(name, p, p%3))
		}
	}
}

func sumEnds(t *testing.T, s *Session, topic string) int64 {
	t.Helper()
	rows, _ := mustRun(t, s, parse(t, "DESCRIBE TOPIC "+topic))
	var n int64
	for _, r := range rows {
		n += r[5].(int64)
	}
	return n
}

func TestInsertSelect(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		src, cl, _ := createSpreadTopic(t, b)
		origins := []string{kafkatest.TopicName(t) + "-a", kafkatest.TopicName(t) + "-b", kafkatest.TopicName(t) + "-c"}
		for _, o := range origins {
			spreadDest(t, b, o, 3)
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), dlqRecords(src, origins)...).FirstErr())
		all := committedRows(t, s, src)
		require.Len(t, all, 36)

		t.Run("a dry run writes nothing and says what it would", func(t *testing.T) {
			dst := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, dst, 6, 3, nil)
			rows, res := mustRun(t, s, parse(t, fmt.Sprintf("INSERT INTO %q KEEP PARTITION SELECT * FROM %q WHERE value LIKE 'bad-%%'", dst, src)))
			require.Len(t, rows, 2, "the bad records (i%%3 == 0) are on partitions 0 and 3")
			for i, r := range rows {
				p := r[1].(int64)
				require.Equal(t, dst, r[0])
				require.Equal(t, int64(3*i), p)
				require.Equal(t, int64(6), r[2], "partition %d: records", p)
				require.Regexp(t, fmt.Sprintf(`^%d:\d+$`, p), r[4], "first source partition:offset")
				require.Regexp(t, fmt.Sprintf(`^%d:\d+$`, p), r[5], "last source partition:offset")
			}
			require.Contains(t, res.Stats().Notices(), "dry run: nothing was written; add EXECUTE to write")
			require.Equal(t, int64(0), sumEnds(t, s, dst), "no end offset moved")
		})

		t.Run("EXECUTE copies what WHERE selects across every leader", func(t *testing.T) {
			dst := kafkatest.TopicName(t)
			spreadDest(t, b, dst, 3)
			tr.reset()
			rows, _ := mustRun(t, s, parse(t, fmt.Sprintf("INSERT INTO %q SELECT * FROM %q WHERE value LIKE 'ok-%%' EXECUTE", dst, src)))
			var n int64
			for _, r := range rows {
				n += r[2].(int64)
				require.Nil(t, r[6])
			}
			require.Equal(t, int64(24), n)
			require.Len(t, tr.count("Fetch"), 3, "the source is read from its 3 leaders")
			require.Len(t, tr.count("Produce"), 3, "the destination's 3 partitions are written on their 3 leaders")
			got := committedEventually(t, s, dst, 24)
			require.Len(t, got, 24)
			for _, r := range got {
				require.Regexp(t, `^ok-`, string(r[4].([]byte)))
				require.Equal(t, int64(kafka.PartitionForKey(dst, r[3].([]byte), 3)), r[0], "by key, the default partitioner")
			}
		})

		t.Run("redrive a DLQ into the topics its header names", func(t *testing.T) {
			rows, _ := mustRun(t, s, parse(t, fmt.Sprintf("INSERT INTO TOPIC header('dlq.original.topic') SELECT key, value, timestamp FROM %q EXECUTE", src)))
			perTopic := map[string]int64{}
			for _, r := range rows {
				perTopic[r[0].(string)] += r[2].(int64)
			}
			require.Equal(t, map[string]int64{origins[0]: 12, origins[1]: 12, origins[2]: 12}, perTopic)
			for i, o := range origins {
				got := committedEventually(t, s, o, 12)
				require.Len(t, got, 12, o)
				for _, r := range got {
					var k int
					_, err := fmt.Sscanf(string(r[3].([]byte)), "k%d", &k)
					require.NoError(t, err)
					require.Equal(t, i, k%3, "record k%d belongs in %s", k, o)
					require.Empty(t, r[5], "SELECT key, value, timestamp writes no headers")
				}
			}
		})

		t.Run("a record naming no topic fails before anything is written", func(t *testing.T) {
			before := sumEnds(t, s, origins[0])
			_, _, err := run(t, s, parse(t, fmt.Sprintf("INSERT INTO TOPIC header('nope') SELECT * FROM %q EXECUTE", src)))
			require.ErrorContains(t, err, "has no destination: header('nope') is NULL; nothing was written")
			require.Regexp(t, `the record at \d:\d+ has no destination`, err.Error())
			_, _, err = run(t, s, parse(t, fmt.Sprintf("INSERT INTO TOPIC value SELECT * FROM %q EXECUTE", src)))
			require.ErrorContains(t, err, "which does not exist; nothing was written")
			require.Equal(t, before, sumEnds(t, s, origins[0]))
		})
	})
}

// An INSERT cancelled in its second transaction: the first stays, the
// second is aborted (in the log, invisible to read_committed), the error
// names the last source offset copied per partition and a resume
// statement, and running that finishes the copy without a duplicate. The
// cancel happens while the test holds the second commit on kfake's hooks.
func TestInsertCancelledMidStreamResumes(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 6)
	f.spread(t, "dst", 3)
	require.NoError(t, f.kcl.ProduceSync(ctxT(t), dlqRecords("src", []string{"a"})...).FirstErr())
	insertTxnsOf(t, 5)
	release := holdSecondCommit(t, f)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- drain(f.sess.Execute(ctx, parse(t, "INSERT INTO dst SELECT * FROM src EXECUTE"))) }()
	select {
	case <-release.held:
	case err := <-done:
		t.Fatalf("the INSERT ended (%v) before its second commit", err)
	}
	cancel()
	err := <-done // the commit's answer is still held: kql never gets it
	release.now()
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "cancelled")
	// The cancel came while the coordinator held the commit: kql never
	// got its answer, so it must not claim the transaction was aborted.
	require.Contains(t, msg, "its outcome is unknown, it may or may not be committed; 1 transaction was committed before it")
	require.NotContains(t, msg, "nothing of it is visible")
	resume := resumeIfNotCommitted(t, msg) // the hook refused it
	require.Regexp(t, `^INSERT INTO dst SELECT \* FROM src FROM ANCHOR \(0:\d+, 1:\d+, 2:\d+, 3:\d+, 4:\d+, 5:\d+\) `+
		`WHERE partition = 0 AND offset <= \d+ OR partition = 1 AND offset <= \d+ OR partition = 2 AND offset <= \d+ OR `+
		`partition = 3 AND offset <= \d+ OR partition = 4 AND offset <= \d+ OR partition = 5 AND offset <= \d+ EXECUTE$`, resume,
		"every partition, up to the end the INSERT's read captured")

	require.Len(t, committedRows(t, f.sess, "dst"), 5, "only the committed transaction is visible")
	require.Greater(t, sumEnds(t, f.sess, "dst"), int64(5+3), "the aborted records reached the log")

	mustRun(t, f.sess, parse(t, resume))
	seen := map[string]bool{}
	for _, r := range committedEventually(t, f.sess, "dst", 36) {
		k := string(r[3].([]byte))
		require.False(t, seen[k], "%s copied twice", k)
		seen[k] = true
	}
	require.Len(t, seen, 36, "every source record exactly once")
}

type heldCommit struct {
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *heldCommit) now() { h.once.Do(func() { close(h.release) }) }

// holdSecondCommit holds the second EndTxn (a commit) on f's hooks until
// released, then answers it TRANSACTION_ABORTABLE: whichever the writer
// sees first, a cancel or that answer, it aborts the transaction.
func holdSecondCommit(t *testing.T, f *fake) *heldCommit {
	h := &heldCommit{held: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(h.now)
	var mu sync.Mutex
	ended := 0
	f.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		mu.Lock()
		ended++
		n := ended
		mu.Unlock()
		if n != 2 {
			return nil, nil, false
		}
		close(h.held)
		f.SleepControl(func() { <-h.release })
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.TransactionAbortable.Code
		return resp, nil, true
	})
	return h
}

// In the shell an INSERT ... EXECUTE asks first, naming source and
// destination; a dry run and an import never ask.
func TestInsertExecuteAsksFirst(t *testing.T) {
	f := newFake(t)
	exec := parse(t, `INSERT INTO copy SELECT * FROM orders EXECUTE`)
	require.True(t, NeedsConfirmation(exec))
	require.False(t, NeedsConfirmation(parse(t, `INSERT INTO copy SELECT * FROM orders`)), "a dry run never asks")
	require.False(t, NeedsConfirmation(parse(t, `PRODUCE INTO copy FROM FILE 'a.jsonl'`)), "a PRODUCE is explicit")
	q, ask := f.sess.Confirmation(ctxT(t), exec)
	require.True(t, ask)
	require.Equal(t, `copy the records the SELECT reads from orders into topic copy (run it without EXECUTE to see how many)?`, q)
	q, _ = f.sess.Confirmation(ctxT(t), parse(t, `INSERT INTO TOPIC header('t') SELECT * FROM dlq EXECUTE`))
	require.Contains(t, q, "into the topic each record's header('t') names")
}

// A failure before any row of a partition came through: the resume
// statement still lists that partition, from where the range starts, so
// its records are copied too. Here partition 2's records are the newest,
// and the INSERT is cancelled in its second transaction, before the merge
// reaches them.
func TestInsertResumeCoversPartitionsNotReachedYet(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src3", 3)
	f.spread(t, "dst3", 3)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for i := 0; i < 15; i++ {
		p := int32(i % 2)
		if i >= 10 {
			p = 2
		}
		recs = append(recs, &kgo.Record{Topic: "src3", Partition: p, Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte("v"),
			Timestamp: base.Add(time.Duration(i) * time.Millisecond)})
	}
	manual, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer manual.Close()
	require.NoError(t, manual.ProduceSync(ctxT(t), recs...).FirstErr())
	insertTxnsOf(t, 5)
	release := holdSecondCommit(t, f)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- drain(f.sess.Execute(ctx, parse(t, "INSERT INTO dst3 SELECT * FROM src3 EXECUTE"))) }()
	select {
	case <-release.held:
	case err := <-done:
		t.Fatalf("the INSERT ended (%v) before its second commit", err)
	}
	cancel()
	err = <-done // the commit's answer is still held: kql never gets it
	release.now()
	require.Error(t, err)
	msg := err.Error()
	resume := resumeIfNotCommitted(t, msg) // the hook refused it
	require.Regexp(t, `FROM ANCHOR \(0:\d+, 1:\d+, 2:0\) WHERE .*partition = 2 AND offset <= 4 EXECUTE$`, resume, "partition 2, not reached, is resumed from its start")

	mustRun(t, f.sess, parse(t, resume))
	seen := map[string]bool{}
	for _, r := range committedEventually(t, f.sess, "dst3", 15) {
		k := string(r[3].([]byte))
		require.False(t, seen[k], "%s copied twice", k)
		seen[k] = true
	}
	require.Len(t, seen, 15, "every source record exactly once")
}

// resumeIfNotCommitted is the resume statement an INSERT's error gives for
// a last transaction that did not commit: the only one when the
// coordinator refused it, the first of two when its answer never came.
func resumeIfNotCommitted(t *testing.T, msg string) string {
	t.Helper()
	for _, lead := range []string{"to copy the rest: ", "does not hold the last transaction: "} {
		if i := strings.Index(msg, lead); i >= 0 {
			stmt := msg[i+len(lead):]
			if j := strings.Index(stmt, "; if it does"); j >= 0 {
				stmt = stmt[:j]
			}
			return stmt
		}
	}
	t.Fatalf("no resume statement in %q", msg)
	return ""
}
