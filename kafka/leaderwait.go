package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A read that loses a partition's leader (the broker died, hung, or handed
// leadership over) waits for a new one instead of giving the partition up:
// with replication the records are still there, and the controller elects
// a new leader within seconds (a crashed broker: once its session times
// out, about 9-15 s on Kafka's defaults). The wait is bounded by kql, not
// by kgo's read timeout times its retries: DefaultLeaderWait from the
// first Fetch that failed, or, when the statement has a deadline
// (--timeout), until just before it. The partition then resumes at its
// next position, so nothing is read twice and nothing is skipped.

// DefaultLeaderWait is how long a read waits for a partition to have a
// leader that answers again, when the statement has no deadline of its own.
const DefaultLeaderWait = 30 * time.Second

// leaderRetryFirst and leaderRetryMax are the backoff between the Fetches
// of a partition that waits for its leader (each Fetch already refreshes
// metadata and retries a few times inside Leaders).
const (
	leaderRetryFirst = 100 * time.Millisecond
	leaderRetryMax   = time.Second
)

// fetchAnswerBound is how long a read's Fetch may go unanswered before its
// leader counts as hung: the Fetch is cut off and asked again where fresh
// metadata says the partition is led. A Fetch waits at most 500 ms for
// records and asks for about a megabyte; kgo's own read timeout would be
// 10.5 s per round.
const fetchAnswerBound = 5 * time.Second

// LeaderWait is one partition waiting for a leader, as progress shows it.
type LeaderWait struct {
	TP     TopicPartition
	Broker int32  // the broker it was last read from; -1 if none answered yet
	Addr   string // that broker's address
	Since  time.Time
	Err    error // the newest failure
}

// partWait is a partition's current streak of failed Fetches.
type partWait struct {
	since time.Time // when the first failed Fetch of the streak was sent
	tries int
	err   *PartitionError // the newest failure
}

// LeaderWaitError is a partition's failure once it had no leader kql could
// read from for longer than the bound.
type LeaderWaitError struct {
	Waited time.Duration
	Bound  time.Duration // 0: the statement's deadline was the bound
	Last   error         // the newest failure
}

func (e *LeaderWaitError) Error() string {
	bound := fmt.Sprintf("kql waits up to %s for a new leader, or until the statement's --timeout", e.Bound)
	if e.Bound == 0 {
		bound = "kql waits for a new leader until just before the statement's --timeout"
	}
	last := describe(e.Last)
	var ke *kerr.Error
	var be *BrokerError
	switch {
	case errors.As(e.Last, &ke) && ke.Description != "":
		// Without describe's hint ("try again shortly"): kql did.
		last = ke.Message + " (" + ke.Description + ")"
	case errors.As(e.Last, &be) && errors.Is(e.Last, context.DeadlineExceeded):
		// kql cut the request off: the broker hangs.
		last = fmt.Sprintf("%s to broker %d (%s) went unanswered", be.API, be.ID, be.Addr)
	}
	return fmt.Sprintf("no leader answered for %s (%s); last error: %s", e.Waited.Round(100*time.Millisecond), bound, last)
}

func (e *LeaderWaitError) Unwrap() error { return e.Last }

// waitable says whether a Fetch failure means "the leader is gone or
// moving, ask again later" rather than "this partition cannot be read".
func waitable(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return Classify(ke.Code) != Fatal
	}
	var unknown *UnknownTopicError
	if errors.As(err, &unknown) || IsAuthorization(err) || errors.Is(err, context.Canceled) {
		return false
	}
	// A broker that could not be reached or did not answer, a Metadata
	// refresh no broker answered, a Fetch cut off by the wait's own bound.
	return true
}

// leaderBackoff is the pause before a waiting partition's next Fetch.
func leaderBackoff(tries int) time.Duration {
	d := leaderRetryFirst
	for i := 1; i < tries && d < leaderRetryMax; i++ {
		d *= 2
	}
	return min(d, leaderRetryMax)
}

// waitBoundFor is how a wait for a leader that starts now is bounded: the
// time it gives up, and the bound it reports (0: the statement's
// deadline was the bound).
func (c *Cluster) waitBoundFor(ctx context.Context, now time.Time) (time.Time, time.Duration) {
	if dl, ok := ctx.Deadline(); ok {
		return dl.Add(-min(time.Second, dl.Sub(now)/10)), 0
	}
	bound := DefaultLeaderWait
	if d := time.Duration(c.leaderWait.Load()); d > 0 {
		bound = d
	}
	return now.Add(bound), bound
}

// ListOffsetsWaiting is ListOffsets for a read about to start: a partition
// whose leader is gone, moving or hung (waitable) is asked again, with
// backoff and fresh metadata, until a leader answers or the wait's bound
// passes (as a Reader waits; see DefaultLeaderWait); then its failure is a
// *LeaderWaitError naming how long kql waited. Each round is cut off after
// fetchAnswerBound, as a Reader's Fetch is.
func (c *Cluster) ListOffsetsWaiting(ctx context.Context, m *Metadata, parts []TopicPartition, ts int64, readCommitted bool) (map[TopicPartition]OffsetAnswer, map[TopicPartition]*PartitionError, error) {
	start := time.Now()
	giveUp, bound := c.waitBoundFor(ctx, start)
	got := make(map[TopicPartition]OffsetAnswer, len(parts))
	failed := make(map[TopicPartition]*PartitionError)
	first := map[TopicPartition]*PartitionError{} // the failure that named a broker
	pending := parts
	for tries := 0; ; tries++ {
		if tries > 0 {
			select {
			case <-ctx.Done():
				return got, failed, ctx.Err()
			case <-time.After(leaderBackoff(tries)):
			}
		}
		round := time.Now().Add(fetchAnswerBound)
		if giveUp.Before(round) {
			round = giveUp
		}
		actx, cancel := context.WithDeadline(ctx, round)
		if tries > 0 {
			if fresh, err := c.Metadata(actx, topicsOf(pending)); err == nil {
				m = fresh
			}
		}
		g, f, err := c.ListOffsets(actx, m, pending, ts, readCommitted)
		cancel()
		if ctx.Err() != nil {
			return got, failed, ctx.Err()
		}
		if err != nil && !waitable(err) {
			return got, failed, err
		}
		var again []TopicPartition
		for _, tp := range pending {
			if a, ok := g[tp]; ok {
				got[tp] = a
				delete(failed, tp)
				continue
			}
			pe := f[tp]
			if pe == nil {
				if err == nil {
					continue
				}
				pe = &PartitionError{API: "ListOffsets", Topic: tp.Topic, Partition: tp.Partition, Broker: -1, Err: err}
			}
			failed[tp] = pe
			if waitable(pe.Err) {
				again = append(again, tp)
				if first[tp] == nil || first[tp].Broker < 0 {
					first[tp] = pe
				}
			}
		}
		if len(again) == 0 {
			break
		}
		if now := time.Now(); !now.Add(leaderBackoff(tries + 1)).Before(giveUp) {
			for _, tp := range again {
				pe, named := failed[tp], first[tp]
				failed[tp] = &PartitionError{API: pe.API, Topic: tp.Topic, Partition: tp.Partition, Broker: named.Broker, Addr: named.Addr,
					Err: &LeaderWaitError{Waited: now.Sub(start), Bound: bound, Last: pe.Err}}
			}
			break
		}
		pending = again
	}
	if len(failed) == 0 {
		failed = nil
	}
	return got, failed, nil
}
