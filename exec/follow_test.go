package exec

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// follower reads a FOLLOW statement's rows on its own goroutine, so a test
// can write records and wait for them with a deadline.
type follower struct {
	rows   chan result.Row
	res    result.Result
	cancel context.CancelFunc
	done   chan struct{}
}

func follow(t *testing.T, s *Session, src string) *follower {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	res, err := s.Execute(ctx, parse(t, src))
	require.NoError(t, err, src)
	f := &follower{rows: make(chan result.Row, 1000), res: res, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		defer close(f.rows)
		for {
			row, ok := res.Next()
			if !ok {
				return
			}
			f.rows <- row
		}
	}()
	t.Cleanup(func() { f.stop(t) })
	return f
}

// take waits for n rows, each within a deadline, and returns their keys.
func (f *follower) take(t *testing.T, n int, within time.Duration) []string {
	t.Helper()
	var keys []string
	for len(keys) < n {
		select {
		case row, ok := <-f.rows:
			require.True(t, ok, "FOLLOW ended after %d of %d rows: %v", len(keys), n, f.res.Err())
			keys = append(keys, text(row[3]))
		case <-time.After(within):
			t.Fatalf("only %d of %d rows within %s: %v", len(keys), n, within, keys)
		}
	}
	return keys
}

// stop cancels the statement, as Ctrl-C does: FOLLOW ends cleanly.
func (f *follower) stop(t *testing.T) {
	f.cancel()
	select {
	case <-f.done:
	case <-time.After(10 * time.Second):
		t.Fatal("FOLLOW did not end within 10 s of its cancellation")
	}
	f.res.Close()
}

func produceKeys(t *testing.T, cl *kgo.Client, topic string, partitions []int32, prefix string) []string {
	t.Helper()
	var recs []*kgo.Record
	var keys []string
	for i, p := range partitions {
		k := fmt.Sprintf("%s-%d", prefix, i)
		keys = append(keys, k)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(k), Value: []byte(`{"amount":1}`)})
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
	return keys
}

func TestFollowOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, all, _ := queryTopic(t, b)
		cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		every := []int32{0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5} // partitions led by all three brokers

		t.Run("the last 10, then what is written, from every broker; Ctrl-C ends it cleanly", func(t *testing.T) {
			// Connections to every broker are kept by the session; open
			// them first so that the count below sees only the statement.
			drain(s.Execute(ctxT(t), parse(t, fmt.Sprintf("CONSUME %s LIMIT ALL", lang.QuoteName(topic)))))
			var warm []*kgo.Record // and the test's producer's
			for _, p := range every[:6] {
				warm = append(warm, &kgo.Record{Topic: topic, Partition: p, Key: []byte("warm"), Value: []byte(`{}`)})
			}
			require.NoError(t, cl.ProduceSync(ctxT(t), warm...).FirstErr())
			all = append(all, make([]orderRec, 6)...) // the backlog below is the last 10 again
			for i, p := range every[:6] {
				all[len(all)-6+i] = orderRec{key: "warm", p: p}
			}
			before := clientGoroutines()
			f := follow(t, s, fmt.Sprintf("CONSUME %s FOLLOW", lang.QuoteName(topic)))
			var last10 []string
			for _, o := range all[len(all)-10:] {
				last10 = append(last10, o.key)
			}
			require.Equal(t, last10, f.take(t, 10, 10*time.Second))
			start := time.Now()
			want := produceKeys(t, cl, topic, every, "new")
			got := f.take(t, len(want), 5*time.Second)
			t.Logf("%d new records arrived %s after they were written", len(got), time.Since(start))
			require.ElementsMatch(t, want, got)
			f.stop(t)
			require.NoError(t, f.res.Err(), "FOLLOW ends by Ctrl-C without an error")
			require.Eventually(t, func() bool { return clientGoroutines() <= before+2 }, 5*time.Second, 50*time.Millisecond,
				"goroutines left after FOLLOW ended: %d before, %d after", before, clientGoroutines())
		})

		t.Run("WHERE filters what FOLLOW shows; a forward start shows everything first", func(t *testing.T) {
			f := follow(t, s, fmt.Sprintf("SELECT key, value.amount FROM %s FROM OFFSET 58 WHERE value.amount = 2 FOLLOW", lang.QuoteName(topic)))
			produceKeys(t, cl, topic, every, "one") // amount 1: left out
			var recs []*kgo.Record
			for i, p := range every {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte(fmt.Sprintf("two-%d", i)), Value: []byte(`{"amount":2}`)})
			}
			require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
			var got []string
			for len(got) < len(recs) {
				select {
				case row := <-f.rows:
					got = append(got, text(row[0]))
				case <-time.After(5 * time.Second):
					t.Fatalf("rows so far: %v", got)
				}
			}
			slices.Sort(got)
			require.Len(t, slices.Compact(got), len(recs))
			for _, k := range got {
				require.Contains(t, k, "two-")
			}
		})
	})
}

// kfake can add partitions and move leaders on demand.
func TestFollowPicksUpNewPartitionsAndMovedLeaders(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	fl := follow(t, f.sess, "CONSUME t FOLLOW")
	fl.take(t, 6, 10*time.Second)

	require.NoError(t, f.MoveTopicPartition("t", 0, 2))
	want := produceKeys(t, cl, "t", []int32{0, 1, 2}, "after-move")
	require.ElementsMatch(t, want, fl.take(t, 3, 10*time.Second), "records of a partition whose leader moved")

	_, err = kadm.NewClient(cl).CreatePartitions(ctxT(t), 5, "t")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		cl.ForceMetadataRefresh()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Partition: 4, Key: []byte("in-new")}).FirstErr() == nil
	}, 10*time.Second, 200*time.Millisecond)
	start := time.Now()
	got := fl.take(t, 1, 12*time.Second)
	require.Equal(t, []string{"in-new"}, got)
	require.Less(t, time.Since(start), 10*time.Second, "a new partition is picked up within 10 s")
}

// A SELECT list that names the six record columns in their order has the
// record columns, so the jsonl, csv and tsv writers read it through
// NextRecord: with FOLLOW that path skipped the backlog (the projection
// above the scan hands out no records) and showed only new records.
func TestFollowSixColumnsKeepsBacklog(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, all, _ := queryTopic(t, b)
		// Bounded (a FOLLOW that showed no backlog would wait for ever),
		// with room for a loaded real cluster.
		ctx, cancel := context.WithTimeout(ctxT(t), 15*time.Second)
		defer cancel()
		res, err := s.Execute(ctx, parse(t, fmt.Sprintf("SELECT partition, offset, timestamp, key, value, headers FROM %s FROM NEWEST LIMIT 3 FOLLOW", lang.QuoteName(topic))))
		require.NoError(t, err)
		defer res.Close()
		var got []string
		if rs, ok := res.(result.RecordStream); ok && slices.Equal(rs.Columns(), result.RecordColumns) {
			for len(got) < 3 {
				rec, ok := rs.NextRecord()
				if !ok {
					break
				}
				got = append(got, string(rec.Key))
			}
		} else {
			for len(got) < 3 {
				row, ok := res.Next()
				if !ok {
					break
				}
				got = append(got, text(row[3]))
			}
		}
		require.NoError(t, res.Err())
		require.Equal(t, []string{all[len(all)-3].key, all[len(all)-2].key, all[len(all)-1].key}, got)
	})
}

// A topic deleted while FOLLOW reads it ends FOLLOW with an error that
// says so, at the next look for partitions; it was retried without end
// and named only at Ctrl-C, as a warning about a Fetch error.
func TestFollowTopicDeleted(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic, cl, adm := createSpreadTopic(t, b)
		produceKeys(t, cl, topic, []int32{0, 1}, "old")
		f := follow(t, s, fmt.Sprintf("CONSUME %s FOLLOW", lang.QuoteName(topic)))
		f.take(t, 2, 10*time.Second)
		_, err := adm.DeleteTopics(ctxT(t), topic)
		require.NoError(t, err)
		select {
		case _, ok := <-f.rows:
			require.False(t, ok, "no rows after the topic is deleted")
		case <-time.After(followNewPartitions + 10*time.Second):
			t.Fatal("FOLLOW goes on after its topic was deleted")
		}
		<-f.done
		require.ErrorContains(t, f.res.Err(), "was deleted")
	})
}

// A FOLLOW's records read (the shell's progress line) count the new
// records too, matching or not, not only the backlog's; and a FOLLOW has
// no pages.
func TestFollowCountsTheNewRecordsItReads(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic := kafkatest.TopicName(t)
		kafkatest.CreateTopic(t, b, topic, 1, 3, nil)
		cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		write := func(amounts ...int) {
			t.Helper()
			var recs []*kgo.Record
			for i, a := range amounts {
				recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d-%d", a, i)), Value: []byte(fmt.Sprintf(`{"amount":%d}`, a))})
			}
			require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
		}
		write(1, 1, 1) // the backlog: read, none matches
		f := follow(t, s, fmt.Sprintf("CONSUME %s FROM OLDEST WHERE value.amount = 2 FOLLOW", lang.QuoteName(topic)))
		_, paged := PagerOf(f.res)
		require.False(t, paged, "a FOLLOW has no pages")
		write(1, 1, 2) // one partition: the two that do not match are read before the one that does
		require.Equal(t, []string{"k2-2"}, f.take(t, 1, 10*time.Second))
		read, scanning := f.res.Stats().Scanned()
		require.True(t, scanning)
		require.EqualValues(t, 6, read, "3 backlog records and 3 new ones read")
	})
}

// clientGoroutines counts this process's goroutines but kfake's: kfake
// serves in the test's process, and a Fetch that reached it just before
// FOLLOW ended waits there for its MaxWait (a broker's goroutine, not one
// the statement left behind; it made the count flaky under load).
func clientGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "franz-go/pkg/kfake.") {
			count++
		}
	}
	return count
}
