package exec

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The resume statement of a failed INSERT INTO TOPIC expr ... LIMIT n
// EXECUTE ends where the failed INSERT's check ended: records that arrived
// after the check (here in partition 1, which was empty, with older
// timestamps, so they come first in the merge) are copied neither by the
// INSERT nor by its resume, and the resume finishes the checked records
// without a duplicate. The late records arrive while the test holds the
// writer's InitProducerId; the INSERT is cancelled while its second commit
// is held.
func TestInsertToTopicExprResumeEndsWhereTheCheckEnded(t *testing.T) {
	ls := newLateSource(t, 12)
	f := ls.f
	insertTxnsOf(t, 5)

	ls.lateWhenTheWriterStarts(t)
	release := holdSecondCommit(t, f)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- drain(f.sess.Execute(ctx, parse(t, "INSERT INTO TOPIC header('to') SELECT * FROM src WHERE value = 'v' LIMIT 8 EXECUTE")))
	}()
	select {
	case <-release.held:
	case err := <-done:
		t.Fatalf("the INSERT ended (%v) before its second commit", err)
	}
	cancel()
	err := <-done
	release.now()
	require.Error(t, err)
	resume := resumeIfNotCommitted(t, err.Error())
	require.Contains(t, resume, "WHERE value = 'v' AND (partition = 0 AND offset <= 7) LIMIT 3 EXECUTE", "the resume ends at the last offset checked")
	require.Len(t, committedRows(t, f.sess, "dst"), 5, "the first transaction")

	rows, _ := mustRun(t, f.sess, parse(t, resume))
	require.Equal(t, int64(3), sumRecords(rows), "the resume writes the 3 checked records left: %v", rows)
	seen := map[string]bool{}
	for _, r := range committedEventually(t, f.sess, "dst", 8) {
		k := string(r[3].([]byte))
		require.False(t, seen[k], "%s copied twice", k)
		require.Regexp(t, `^k-0-[0-7]$`, k, "a record the check saw")
		seen[k] = true
	}
	require.Len(t, seen, 8)
}

// insertTxnsOf makes INSERT's transactions hold n records for the test.
func insertTxnsOf(t *testing.T, n int) {
	old := insertTxnRecords
	insertTxnRecords = n
	t.Cleanup(func() { insertTxnRecords = old })
}

// sessionAtCommit is a session whose trace hook runs fn at the answer to
// the writer's n-th successful EndTxn (a commit kql made): the hook runs as
// the answer is read, before kgo hands it over, so what fn does (write
// late records, cancel the statement) comes after exactly n commits, on
// kfake and on real Kafka alike, and before the statement goes on.
func sessionAtCommit(t *testing.T, b kafkatest.Backend, n int, fn func()) *Session {
	t.Helper()
	var mu sync.Mutex
	seen := 0
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Bootstrap: b.Bootstrap(), Trace: func(e kafka.TraceEvent) {
		if e.API != "EndTxn" || e.Err != nil {
			return
		}
		mu.Lock()
		seen++
		now := seen == n
		mu.Unlock()
		if now {
			fn()
		}
	}})
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return NewSession(cl)
}

// skipSource is a source of 3 partitions led by every broker: partition
// 2's first 3 records are the oldest of all (a SKIP 3 leaves out exactly
// them) and its last 3 the newest; partitions 0 and 1 hold 10 records each
// in between, interleaved. Keys are <partition>-<offset>.
func skipSource(t *testing.T, b kafkatest.Backend) (src, dst string, cl *kgo.Client, base time.Time) {
	t.Helper()
	src, dst = kafkatest.TopicName(t), kafkatest.TopicName(t)+"-dst"
	spreadDest(t, b, src, 3)
	spreadDest(t, b, dst, 3)
	cl = kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base = time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	rec := func(p int32, o int, ms int) *kgo.Record {
		return &kgo.Record{Topic: src, Partition: p, Key: []byte(fmt.Sprintf("%d-%d", p, o)), Value: []byte("v"), Timestamp: base.Add(time.Duration(ms) * time.Millisecond)}
	}
	var recs []*kgo.Record
	for o := range 6 {
		recs = append(recs, rec(2, o, o+97*(o/3))) // 0, 1, 2, then 100, 101, 102
	}
	for o := range 10 {
		recs = append(recs, rec(0, o, 10+2*o), rec(1, o, 11+2*o))
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	return src, dst, cl, base
}

// skipThreeLimit21 is the keys SKIP 3 LIMIT 21 takes of skipSource's
// records, in merged order: all of partitions 0 and 1, and partition 2's
// fourth (its first three are the oldest of all, and skipped).
func skipThreeLimit21() []string {
	var want []string
	for o := range 10 {
		want = append(want, fmt.Sprintf("0-%d", o), fmt.Sprintf("1-%d", o))
	}
	return append(want, "2-3")
}

// requireCopiedOnce checks that dst holds each of want's keys exactly once
// (read_committed) and nothing else.
func requireCopiedOnce(t *testing.T, s *Session, dst string, want []string) {
	t.Helper()
	var got []string
	for _, r := range committedEventually(t, s, dst, len(want)) {
		got = append(got, string(r[3].([]byte)))
	}
	require.ElementsMatch(t, want, got, "each record the INSERT was to copy, once, and nothing else")
}

// A plain INSERT ... SKIP 3 LIMIT 21 EXECUTE cancelled after its first
// commit: its resume copies exactly what the statement would have copied
// and did not commit. Not the records SKIP left out (all of partition 2's
// oldest, a partition none of whose rows was committed: the resume starts
// it past them, not at the range's start), not the records that arrived
// in the source while it ran (written with older timestamps while the
// first commit's answer is held, so a read to the new ends would take
// them first and they would use up the LIMIT), and the LIMIT's remaining
// 16, not 21.
func TestInsertResumeCopiesWhatTheStatementWouldHave(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		src, dst, cl, base := skipSource(t, b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := sessionAtCommit(t, b, 1, func() {
			var late []*kgo.Record
			for i := range 3 {
				for _, p := range []int32{0, 2} {
					late = append(late, &kgo.Record{Topic: src, Partition: p, Key: []byte(fmt.Sprintf("late-%d-%d", p, i)), Value: []byte("v"),
						Timestamp: base.Add(-time.Duration(10-i) * time.Second)})
				}
			}
			require.NoError(t, cl.ProduceSync(ctxT(t), late...).FirstErr())
			cancel()
		})
		insertTxnsOf(t, 5)

		err := drain(s.Execute(ctx, parse(t, fmt.Sprintf("INSERT INTO %q SELECT * FROM %q SKIP 3 LIMIT 21 EXECUTE", dst, src))))
		require.Error(t, err)
		require.Len(t, committedEventually(t, s, dst, 5), 5, "the first transaction, and only it: %v", err)
		// The cancel and the commit's answer arrive together: kql takes
		// either first, and says the commit's outcome is unknown when it
		// took the cancel. The resume for a committed transaction applies.
		msg := err.Error()
		resume := resumeIfNotCommitted(t, msg)
		bound := ` WHERE partition = 0 AND offset <= 9 OR partition = 1 AND offset <= 9 OR partition = 2 AND offset <= 5 `
		if strings.Contains(msg, "its outcome is unknown") {
			require.Regexp(t, `FROM ANCHOR \(0:0, 1:0, 2:3\)`+bound+`LIMIT 21 EXECUTE$`, resume,
				"had the commit failed: partition 2 past what SKIP left out, no SKIP, every partition up to the ends captured at the start")
			resume = resumeIfCommitted(t, msg)
		}
		require.Regexp(t, `FROM ANCHOR \(0:\d+, 1:\d+, 2:3\)`+bound+`LIMIT 16 EXECUTE$`, resume,
			"partition 2 past what SKIP left out, no SKIP, every partition up to the ends captured at the start, the LIMIT's rest")

		_, _, err = run(t, s, parse(t, resume))
		require.NoError(t, err)
		requireCopiedOnce(t, s, dst, skipThreeLimit21())
	})
}

// resumeIfCommitted is the resume statement an INSERT's error gives for a
// last transaction whose commit got no answer, for the case that it did
// commit.
func resumeIfCommitted(t *testing.T, msg string) string {
	t.Helper()
	const lead = "; if it does: "
	i := strings.Index(msg, lead)
	require.Positive(t, i, "no resume for a committed last transaction in %q", msg)
	return msg[i+len(lead):]
}

// A plain INSERT ... SKIP 3 LIMIT 21 EXECUTE cancelled before its read
// handed out a record (its first Fetch held on kfake's hooks): nothing
// was committed, nothing skipped
// yet, and the statement it gives copies the range the INSERT read, SKIP
// and LIMIT whole, and not the record that arrives after it failed.
func TestInsertResumeBeforeTheSkipWasUsedUp(t *testing.T) {
	f := kafkatest.NewFake(t)
	src, dst, cl, base := skipSource(t, f)
	s, _ := session(t, f)
	err := cancelInsertAtItsFirstFetch(t, f, s, fmt.Sprintf("INSERT INTO %q SELECT * FROM %q SKIP 3 LIMIT 21 EXECUTE", dst, src))
	late := []*kgo.Record{{Topic: src, Partition: 2, Key: []byte("late"), Value: []byte("v"), Timestamp: base.Add(-time.Minute)}}
	require.NoError(t, cl.ProduceSync(ctxT(t), late...).FirstErr())
	require.Error(t, err)
	require.Contains(t, err.Error(), "nothing was committed")
	resume := resumeIfNotCommitted(t, err.Error())
	require.Regexp(t, `FROM ANCHOR \(0:0, 1:0, 2:0\) WHERE partition = 0 AND offset <= 9 OR partition = 1 AND offset <= 9 OR partition = 2 AND offset <= 5 LIMIT 21 SKIP 3 EXECUTE$`, resume)

	_, _, err = run(t, s, parse(t, resume))
	require.NoError(t, err)
	requireCopiedOnce(t, s, dst, skipThreeLimit21())
}

// An INSERT ... ORDER BY cancelled after its first commit gives no resume
// by source offset: its rows come in ORDER BY's order, so the last offset
// committed per partition does not say which rows are left (a FROM
// ANCHOR resume would skip some and copy others twice).
func TestInsertOrderByHasNoOffsetResume(t *testing.T) {
	f := kafkatest.NewFake(t)
	src, dst, _, _ := skipSource(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := sessionAtCommit(t, f, 1, cancel)
	insertTxnsOf(t, 5)
	err := drain(s.Execute(ctx, parse(t, fmt.Sprintf("INSERT INTO %q SELECT * FROM %q ORDER BY key DESC LIMIT 20 EXECUTE", dst, src))))
	require.Error(t, err)
	require.Contains(t, err.Error(), "rows in ORDER BY's order carry no source offset to resume from: check the destination")
	require.NotContains(t, err.Error(), "FROM ANCHOR")
}

// A plain INSERT ... FROM NEWEST LIMIT 12 EXECUTE cancelled after its
// first commit: a read back from the end reports no forward range, so the
// committed offsets say nothing of where each partition's share began or
// ended. A FROM ANCHOR resume from them would read forward from the
// committed partitions only, past the records the statement took (and
// miss a partition none of whose rows were committed): the error gives
// none and says to check the destination, and the 5 rows committed are
// rows the SELECT returns.
func TestInsertFromNewestHasNoOffsetResume(t *testing.T) {
	f := kafkatest.NewFake(t)
	src, dst, _, _ := skipSource(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := sessionAtCommit(t, f, 1, cancel)
	insertTxnsOf(t, 5)
	sel := fmt.Sprintf("SELECT * FROM %q FROM NEWEST LIMIT 12", src)
	rows, _ := mustRun(t, s, parse(t, sel))
	require.Len(t, rows, 12)
	want := map[string]bool{}
	for _, r := range rows {
		want[string(r[3].([]byte))] = true
	}
	err := drain(s.Execute(ctx, parse(t, fmt.Sprintf("INSERT INTO %q %s EXECUTE", dst, sel))))
	require.Error(t, err)
	require.Contains(t, err.Error(), "a read back from the end (FROM NEWEST, FROM TAIL) carries no source range to resume from: check the destination")
	require.NotContains(t, err.Error(), "FROM ANCHOR")
	for _, r := range committedEventually(t, s, dst, 5) {
		require.True(t, want[string(r[3].([]byte))], "committed %s, which the SELECT does not return", r[3])
	}
}

// A plain INSERT ... WHERE ... SKIP 2 LIMIT 9 EXECUTE over partitions whose
// timestamps go back and forth (kept timestamps of an import, producers
// with skewed clocks), with a WHERE that leaves most records out, cancelled
// after its first commit: the committed rows and the resume's together are
// exactly the rows the SELECT returns, each once. The merge takes records
// in (timestamp, partition, offset) order of the partitions' next records,
// so which record comes next depends on every partition's position: the
// resume must start each partition right after the last record the
// committed part consumed in it.
func TestInsertResumeWithSparseWhereOverUnorderedTimestamps(t *testing.T) {
	f := kafkatest.NewFake(t)
	src, dst := kafkatest.TopicName(t), kafkatest.TopicName(t)+"-dst"
	spreadDest(t, f, src, 3)
	spreadDest(t, f, dst, 3)
	cl := kafkatest.Client(t, f, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var recs []*kgo.Record
	for p := range int32(3) {
		for o := range 12 {
			ms := (int(p) + o) % 5 // back and forth within each partition
			v := "x"
			if (int(p)+o)%3 != 0 {
				v = "m"
			}
			recs = append(recs, &kgo.Record{Topic: src, Partition: p, Key: []byte(fmt.Sprintf("%d-%d", p, o)), Value: []byte(v), Timestamp: base.Add(time.Duration(ms) * time.Millisecond)})
		}
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := sessionAtCommit(t, f, 1, cancel)
	insertTxnsOf(t, 4)

	sel := fmt.Sprintf("SELECT * FROM %q WHERE value = 'm' SKIP 2 LIMIT 13", src)
	rows, _ := mustRun(t, s, parse(t, sel))
	require.Len(t, rows, 13)
	var want []string
	for _, r := range rows {
		want = append(want, string(r[3].([]byte)))
	}
	err := drain(s.Execute(ctx, parse(t, fmt.Sprintf("INSERT INTO %q %s EXECUTE", dst, sel))))
	require.Error(t, err)
	require.Len(t, committedEventually(t, s, dst, 4), 4, "the first transaction, and only it: %v", err)
	msg := err.Error()
	resume := resumeIfNotCommitted(t, msg)
	if strings.Contains(msg, "its outcome is unknown") {
		resume = resumeIfCommitted(t, msg)
	}
	require.Contains(t, resume, "LIMIT 9 EXECUTE")
	_, _, err = run(t, s, parse(t, resume))
	require.NoError(t, err)
	requireCopiedOnce(t, s, dst, want)
}

// cancelInsertAtItsFirstFetch runs stmt (an INSERT ... EXECUTE) in s, holds
// its first Fetch on kfake's control hook, cancels the statement there and
// returns its error, once it has ended: nothing was committed.
func cancelInsertAtItsFirstFetch(t *testing.T, f *kafkatest.Fake, s *Session, stmt string) error {
	t.Helper()
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	var fetches atomic.Int32 // not a sync.Once: a second Fetch waiting on it would stall kfake's control loop
	f.ControlKey(int16(kmsg.Fetch), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if fetches.Add(1) == 1 {
			close(held)
			f.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- drain(s.Execute(ctx, parse(t, stmt))) }()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the INSERT ended (%v) before its first Fetch", err)
	}
	cancel()
	err := <-done
	once.Do(func() { close(release) })
	return err
}
