package exec

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

// staleAfterCommit makes f answer the first read_committed ListOffsets
// (latest) after each EndTxn with the ends the test last set (stale.set),
// as a real broker does while it is still writing a commit's markers
// (transaction version 2 answers EndTxn first): the last stable offset
// from before the commit.
type staleAfterCommit struct {
	mu     sync.Mutex
	armed  bool
	always bool // every such ListOffsets, not only the first after a commit
	ends   map[int32]int64
}

func (s *staleAfterCommit) set(ends map[int32]int64) {
	s.mu.Lock()
	s.ends = ends
	s.mu.Unlock()
}

func answerStaleAfterCommit(f *fake, topic string) *staleAfterCommit {
	s := &staleAfterCommit{}
	f.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		s.mu.Lock()
		s.armed = true
		s.mu.Unlock()
		return nil, nil, false
	})
	f.ControlKey(int16(kmsg.ListOffsets), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.ListOffsetsRequest)
		if req.IsolationLevel != 1 || len(req.Topics) != 1 || req.Topics[0].Topic != topic {
			return nil, nil, false
		}
		for _, p := range req.Topics[0].Partitions {
			if p.Timestamp != kafka.Latest {
				return nil, nil, false
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.armed {
			return nil, nil, false
		}
		s.armed = s.always
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		resp.Version = req.Version
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = topic
		for _, p := range req.Topics[0].Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			rp.Offset = s.ends[p.Partition]
			rp.Timestamp = -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	return s
}

// endsOf is topic's end offsets now, per partition.
func endsOf(t *testing.T, f *fake, topic string) map[int32]int64 {
	t.Helper()
	lo, err := f.adm.ListEndOffsets(ctxT(t), topic)
	require.NoError(t, err)
	out := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

func countOf(t *testing.T, s *Session, topic string) int64 {
	t.Helper()
	rows, _ := mustRun(t, s, parse(t, fmt.Sprintf("SELECT count(*) FROM %q", topic)))
	require.Len(t, rows, 1)
	return rows[0][0].(int64)
}

// A count right after an import sees every line, though the brokers answer
// the first read_committed ListOffsets after the commit with the last
// stable offset from before it: the import waits until each partition it
// wrote is readable, and \trace shows that ListOffsets after the EndTxn,
// to the partitions written.
func TestImportThenCountSeesTheLastTransaction(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	stale := answerStaleAfterCommit(f, "t")
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprint(i))
	}
	for round := int64(1); round <= 3; round++ {
		stale.set(endsOf(t, f, "t"))
		f.trace.reset()
		f.sess.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		mustRun(t, f.sess, &lang.Produce{Topic: "t", From: &lang.ImportSource{Stdin: true, Format: "lines"}})
		requireListOffsetsAfterEndTxn(t, f.trace, "t")
		require.Equal(t, 100*round, countOf(t, f.sess, "t"), "round %d: every line imported so far", round)
	}
}

// The same for INSERT ... EXECUTE.
func TestInsertThenCountSeesTheLastTransaction(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "t", 3)
	f.produce(t, "src", 3, 10)
	stale := answerStaleAfterCommit(f, "t")
	for round := int64(1); round <= 3; round++ {
		stale.set(endsOf(t, f, "t"))
		f.trace.reset()
		mustRun(t, f.sess, parse(t, `INSERT INTO t SELECT * FROM src EXECUTE`))
		requireListOffsetsAfterEndTxn(t, f.trace, "t")
		require.Equal(t, 30*round, countOf(t, f.sess, "t"), "round %d: every record copied so far", round)
	}
}

// requireListOffsetsAfterEndTxn checks that the trace holds, after the
// last EndTxn, a ListOffsets naming partitions of topic.
func requireListOffsetsAfterEndTxn(t *testing.T, tr *tracer, topic string) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	last := slices.IndexFunc(tr.events, func(e kafka.TraceEvent) bool { return e.API == "EndTxn" })
	require.GreaterOrEqual(t, last, 0, "no EndTxn traced")
	for i, e := range tr.events {
		if e.API == "EndTxn" {
			last = i
		}
	}
	for _, e := range tr.events[last+1:] {
		if e.API == "ListOffsets" && len(e.Items) > 0 && strings.HasPrefix(e.Items[0], topic+"/") {
			return
		}
	}
	require.Fail(t, "no ListOffsets of "+topic+" traced after the last EndTxn")
}

// On either backend: an import of 100 lines then an immediate count, five
// times, counts 100, 200, ..., 500 (QA's repro, on real Kafka it printed
// 100, 200, 300, 400, 400).
func TestImportThenImmediateCountEqualsTheLines(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic := kafkatest.TopicName(t)
		kafkatest.CreateTopic(t, b, topic, 3, 3, nil)
		var lines []string
		for i := 1; i <= 100; i++ {
			lines = append(lines, fmt.Sprint(i))
		}
		for round := int64(1); round <= 5; round++ {
			s.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
			mustRun(t, s, &lang.Produce{Topic: topic, From: &lang.ImportSource{Stdin: true, Format: "lines"}})
			require.Equal(t, 100*round, countOf(t, s, topic), "round %d", round)
		}
	})
}

// When the last stable offset stays short past the bound, the import
// still succeeds (its records are committed) and warns what it waited
// for: the partitions, their last stable offset and last record written.
func TestImportWarnsWhenItsRecordsAreNotReadableInTime(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	stale := answerStaleAfterCommit(f, "t")
	stale.always = true
	stale.set(endsOf(t, f, "t"))
	defer func(d time.Duration) { readableWait = d }(readableWait)
	readableWait = 100 * time.Millisecond
	f.sess.Stdin = strings.NewReader("a\nb\nc\n")
	rows, res := mustRun(t, f.sess, &lang.Produce{Topic: "t", From: &lang.ImportSource{Stdin: true, Format: "lines"}})
	require.NotEmpty(t, rows)
	warns := res.Stats().Warnings()
	require.Len(t, warns, 1)
	require.Contains(t, warns[0], "every record is committed, but after 100ms (the bound of the wait) the last stable offset (ListOffsets read_committed) of t/0 (last stable offset 0, last record written at 2) was not yet past the last record written")
}
