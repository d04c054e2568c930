package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kql-dev/kql/kafka"
)

// writeRates is what the log itself says about writes to each partition:
// records_last_minute, the offsets written since now-60s (the latest
// offset minus the first offset whose timestamp is at or after now-60s,
// by ListOffsets by time), and last_write, the greatest record timestamp
// (ListOffsets MAX_TIMESTAMP, KIP-734). A partition whose leader did not
// answer has neither; an empty partition has no last_write.
type writeRates struct {
	minute  map[kafka.TopicPartition]int64
	last    map[kafka.TopicPartition]time.Time
	known   map[kafka.TopicPartition]bool // last_write was answered (possibly: no record)
	missing []error
	tooOld  bool // a leader is older than Kafka 3.0: no MAX_TIMESTAMP
}

// readWriteRates asks the partitions' leaders, one ListOffsets per leader
// broker for each of: the offset at now-60s and the max timestamp, and,
// when latest is nil, the latest offset; all concurrently.
func (s *Session) readWriteRates(ctx context.Context, m *kafka.Metadata, parts []kafka.TopicPartition, latest map[kafka.TopicPartition]kafka.OffsetAnswer) (*writeRates, error) {
	out := &writeRates{minute: map[kafka.TopicPartition]int64{}, last: map[kafka.TopicPartition]time.Time{}, known: map[kafka.TopicPartition]bool{}}
	if len(parts) == 0 {
		return out, nil
	}
	since := s.Now().Add(-time.Minute).UnixMilli()
	// Bounded like the sizes: a leader that does not answer (a stopped
	// broker that still leads) leaves its partitions' rates NULL instead
	// of holding up, or failing, a statement whose rows are the metadata.
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, writeRatesAttempt)
	defer cancel()
	queries := []kafka.OffsetQuery{{At: since}, {At: kafka.MaxTimestamp}}
	if latest == nil {
		queries = append(queries, kafka.OffsetQuery{At: kafka.Latest})
	}
	offs := s.cl.OffsetsAt(ctx, m, parts, kafka.OffsetsOptions{}, queries...)
	at, afail, aerr := offs[0].Got, offs[0].Failed, offs[0].Err
	maxTS, mfail, merr := offs[1].Got, offs[1].Failed, offs[1].Err
	var lfail map[kafka.TopicPartition]*kafka.PartitionError
	var lerr error
	if latest == nil {
		latest, lfail, lerr = offs[2].Got, offs[2].Failed, offs[2].Err
	}
	if err := parent.Err(); err != nil {
		return nil, err
	}
	// Past the bound, or cut short by an error (a metadata refresh
	// between retries that failed): what did not answer is missing, per
	// partition; the statement's rows do not depend on it.
	afail = unanswered(m, parts, at, afail, aerr)
	mfail = unanswered(m, parts, maxTS, mfail, merr)
	lfail = unanswered(m, parts, latest, lfail, lerr)
	for _, tp := range parts {
		end, eok := latest[tp]
		a, aok := at[tp]
		if eok && aok {
			n := int64(0) // no record at or after now-60s
			if a.Offset >= 0 {
				n = max(end.Offset-a.Offset, 0)
			}
			out.minute[tp] = n
		}
		if mt, ok := maxTS[tp]; ok {
			out.known[tp] = true
			if mt.Offset >= 0 && mt.Timestamp >= 0 {
				out.last[tp] = time.UnixMilli(mt.Timestamp)
			}
		}
	}
	// A broker too old for MAX_TIMESTAMP (before Kafka 3.0) cannot say:
	// last_write is NULL for its partitions, with a notice, and the
	// statement is not partial for it.
	for tp, pe := range mfail {
		if kafka.IsUnsupportedVersion(pe.Err) {
			delete(mfail, tp)
			out.known[tp] = true
			out.tooOld = true
		}
	}
	// One line per partition: a leader that fails one of the three fails
	// all three, as a partition with no leader does.
	out.missing = onePerPartition(append(append(partitionErrors(afail), partitionErrors(mfail)...), partitionErrors(lfail)...))
	return out, nil
}

// partition returns one partition's cells: records_last_minute and
// last_write, NULL where unknown (or, for last_write, where the partition
// holds no record).
func (w *writeRates) partition(tp kafka.TopicPartition) (any, any) {
	var n, last any
	if v, ok := w.minute[tp]; ok {
		n = v
	}
	if v, ok := w.last[tp]; ok {
		last = v
	}
	return n, last
}

// topic sums records_last_minute over the topic's partitions and takes the
// latest last_write; either is NULL if a partition's answer is missing
// (a sum of the partitions that answered would look like a complete one).
func (w *writeRates) topic(parts []kafka.TopicPartition) (any, any) {
	var sum int64
	var last time.Time
	sumOK, lastOK := true, true
	for _, tp := range parts {
		if v, ok := w.minute[tp]; ok {
			sum += v
		} else {
			sumOK = false
		}
		if !w.known[tp] {
			lastOK = false
		} else if v, ok := w.last[tp]; ok && v.After(last) {
			last = v
		}
	}
	var n, l any
	if sumOK {
		n = sum
	}
	if lastOK && !last.IsZero() {
		l = last
	}
	return n, l
}

// warning says, for SHOW TOPICS, why some rates are NULL: the topics' rows
// are the metadata, complete without them (as with the sizes).
func (w *writeRates) warning() []string {
	if len(w.missing) == 0 {
		return nil
	}
	return []string{"records_last_minute and last_write are NULL for topics with a partition whose leader did not answer ListOffsets: " + oneLine(errors.Join(w.missing...))}
}

// notes says why last_write is NULL on brokers too old to answer it.
func (w *writeRates) notes() []string {
	if !w.tooOld {
		return nil
	}
	return []string{"last_write is NULL where the leader is older than Kafka 3.0 (ListOffsets MAX_TIMESTAMP, KIP-734, needs 3.0)"}
}

// writeRatesAttempt bounds the write rates' ListOffsets, as the sizes'
// DescribeLogDirs are bounded.
const writeRatesAttempt = 10 * time.Second

// unanswered turns a ListOffsets cut short (by writeRatesAttempt, or by
// an error that ended its retries) into a failure of each partition it
// did not answer.
func unanswered(m *kafka.Metadata, parts []kafka.TopicPartition, got map[kafka.TopicPartition]kafka.OffsetAnswer, failed map[kafka.TopicPartition]*kafka.PartitionError, err error) map[kafka.TopicPartition]*kafka.PartitionError {
	if err == nil {
		return failed
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s", writeRatesAttempt)
	}
	if failed == nil {
		failed = map[kafka.TopicPartition]*kafka.PartitionError{}
	}
	for _, tp := range parts {
		if _, ok := got[tp]; ok {
			continue
		}
		if _, ok := failed[tp]; !ok {
			pe := &kafka.PartitionError{API: "ListOffsets", Topic: tp.Topic, Partition: tp.Partition, Broker: -1, Err: err}
			plan, _ := kafka.PlanLeaders("ListOffsets", m, []kafka.TopicPartition{tp})
			for id := range plan {
				pe.Broker, pe.Addr = id, m.Addr(id)
			}
			failed[tp] = pe
		}
	}
	return failed
}
