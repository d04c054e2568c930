package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// send issues one request to one broker and reports it to the trace hook.
// A broker that is also a bootstrap seed is asked over the seed's
// connection, which Dial has already opened: kgo learns the other
// brokers' addresses only by a Metadata request of its own, to a seed it
// picks at random, and a hung seed would stall that request.
//
// A request that kgo failed because the connection it was queued on was
// being torn down is sent once more, on a new connection. That happens
// right after a cancelled statement: kgo closes a connection whose
// request was abandoned mid-flight, but fails that request before the
// connection is marked dead, so the next request to the broker can be
// queued on it and fail too although the broker is fine.
func (c *Cluster) send(ctx context.Context, api string, broker int32, items []string, req kmsg.Request) (kmsg.Response, error) {
	h := c.seedFor(broker)
	if h == nil {
		h = c.cl.Broker(int(broker))
	}
	for attempt := 0; ; attempt++ {
		start := time.Now()
		resp, err := h.Request(ctx, req)
		if fn := c.trace.Load(); fn != nil {
			(*fn)(TraceEvent{API: api, Broker: broker, Addr: c.addr(broker), Items: items, Duration: time.Since(start), Err: err})
		}
		if err == nil {
			return resp, nil
		}
		if attempt > 0 || !connectionTornDown(err) || ctx.Err() != nil {
			return nil, &BrokerError{API: api, ID: broker, Addr: c.addr(broker), Err: err}
		}
	}
}

// connectionTornDown says err is kgo's "the broker connection has died and
// the request will be retried on a new connection": the request was queued
// on a connection kgo was closing, and kgo's own retries (which kql turns
// off, to route every request itself) would send it again. kgo does not
// export that error, so it is recognised by its text among the errors kgo
// itself calls retryable.
func connectionTornDown(err error) bool {
	return kgo.IsRetryableBrokerErr(err) && strings.Contains(err.Error(), "broker connection has died")
}

// AnyBroker sends a request that every broker can answer (Metadata,
// ApiVersions, FindCoordinator, DescribeCluster). It starts with the broker
// that answered last (so consecutive reads see one broker's view) and moves
// on to the others when a broker cannot be reached or does not answer
// within anyBrokerAttempt, so one dead or hung broker does not fail the
// request. It returns the id of the broker that answered.
func (c *Cluster) AnyBroker(ctx context.Context, api string, items []string, req kmsg.Request) (kmsg.Response, int32, error) {
	c.metaMu.Lock()
	m := c.lastMeta
	sticky := c.lastAnswered
	c.metaMu.Unlock()
	if m == nil || len(m.Brokers) == 0 {
		return c.anySeed(ctx, api, items, req)
	}
	order := make([]int32, 0, len(m.Brokers))
	for _, b := range m.Brokers {
		if b.ID == sticky {
			order = append([]int32{b.ID}, order...)
		} else {
			order = append(order, b.ID)
		}
	}
	var errs []error
	for i, id := range order {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if i < len(order)-1 {
			actx, cancel = context.WithTimeout(ctx, anyBrokerAttempt)
		}
		resp, err := c.send(actx, api, id, items, req)
		cancel()
		if err == nil {
			c.metaMu.Lock()
			c.lastAnswered = id
			c.metaMu.Unlock()
			return resp, id, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 1 {
		return nil, -1, errs[0]
	}
	if len(errs) == len(order) && allTooOld(errs) {
		// One reason, said once, rather than each broker's attempt.
		return nil, -1, fmt.Errorf("%s: none of the cluster's %d brokers knows this request (their ApiVersions leave it out; it needs a newer Kafka): %w", api, len(errs), errs[0])
	}
	return nil, -1, fmt.Errorf("%s: no broker answered: %w", api, errors.Join(errs...))
}

func allTooOld(errs []error) bool {
	for _, err := range errs {
		if !brokerTooOld(err) {
			return false
		}
	}
	return true
}

// anyBrokerAttempt bounds the wait for one broker while others remain.
const anyBrokerAttempt = 5 * time.Second

// anySeed sends to the bootstrap seeds, one after the other, before any
// metadata is known.
func (c *Cluster) anySeed(ctx context.Context, api string, items []string, req kmsg.Request) (kmsg.Response, int32, error) {
	var errs []error
	for i, addr := range c.cfg.Bootstrap {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if i < len(c.cfg.Bootstrap)-1 {
			actx, cancel = context.WithTimeout(ctx, anyBrokerAttempt)
		}
		start := time.Now()
		resp, err := c.seeds[i].Request(actx, req)
		cancel()
		if fn := c.trace.Load(); fn != nil {
			(*fn)(TraceEvent{API: api, Broker: -1, Addr: addr, Items: items, Duration: time.Since(start), Err: err})
		}
		if err == nil {
			c.metaMu.Lock()
			c.seedAnswered = i
			c.metaMu.Unlock()
			return resp, -1, nil
		}
		if se := classifySecurity(addr, err, c.cfg.TLS != nil, c.cfg.TLS != nil && (len(c.cfg.TLS.Certificates) > 0 || c.cfg.TLS.GetClientCertificate != nil)); se != nil {
			// Every broker would answer the same: stop at the first.
			return nil, -1, se
		}
		errs = append(errs, &BrokerError{API: api, ID: -1, Addr: addr, Err: err})
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) == 1 {
		return nil, -1, errs[0]
	}
	return nil, -1, fmt.Errorf("%s: no bootstrap broker answered: %w", api, errors.Join(errs...))
}

// PartAnswer is one partition's answer inside a broker's response.
type PartAnswer[R any] struct {
	TP    TopicPartition
	Value R
	Code  int16 // Kafka error code; 0 is success
}

// LeaderRequest describes a request that must go to each partition's
// leader (ListOffsets, Fetch, ...).
type LeaderRequest[R any] struct {
	API   string
	Build func(parts []TopicPartition) kmsg.Request
	Parse func(resp kmsg.Response) []PartAnswer[R]
	// Item, if set, names one partition in the trace (Fetch adds the
	// offset it asks from); else the partition's topic/partition.
	Item func(tp TopicPartition) string
	// Once asks each leader once: a partition whose answer says the
	// cluster moved is returned failed at once, not asked again. For a
	// caller that waits for leaders itself (a Reader's lanes): Leaders'
	// own rounds held the other partitions' answers back for seconds and
	// could outlast a statement's deadline.
	Once bool
}

// PlanLeaders groups partitions by their leader in m; partitions with no
// leader or unknown to m are returned as errors.
func PlanLeaders(api string, m *Metadata, parts []TopicPartition) (map[int32][]TopicPartition, map[TopicPartition]*PartitionError) {
	plan := make(map[int32][]TopicPartition)
	var failed map[TopicPartition]*PartitionError
	fail := func(tp TopicPartition, err error) {
		if failed == nil {
			failed = make(map[TopicPartition]*PartitionError)
		}
		failed[tp] = &PartitionError{API: api, Topic: tp.Topic, Partition: tp.Partition, Broker: -1, Err: err}
	}
	for _, tp := range parts {
		t, ok := m.Topics[tp.Topic]
		if !ok {
			fail(tp, kerr.UnknownTopicOrPartition)
			continue
		}
		i, found := slices.BinarySearchFunc(t.Partitions, tp.Partition, func(p Partition, id int32) int { return int(p.ID) - int(id) })
		if !found {
			fail(tp, kerr.UnknownTopicOrPartition)
			continue
		}
		p := t.Partitions[i]
		if p.Leader < 0 {
			err := p.Err
			if err == nil {
				err = kerr.LeaderNotAvailable
			}
			fail(tp, err)
			continue
		}
		plan[p.Leader] = append(plan[p.Leader], tp)
	}
	return plan, failed
}

// Leaders sends one request per leader broker (never one per partition),
// to all leaders concurrently, and merges the per-partition answers.
// Partitions whose answer says the cluster moved (a new leader, a fenced
// epoch, a broker that could not be reached) are retried after a metadata
// refresh, up to five times with growing pauses (leaderAttempts); what still fails is returned per partition, never
// dropped. m may be nil, in which case metadata is read first.
func Leaders[R any](ctx context.Context, c *Cluster, m *Metadata, parts []TopicPartition, lr LeaderRequest[R]) (map[TopicPartition]R, map[TopicPartition]*PartitionError, error) {
	topics := topicsOf(parts)
	if m == nil {
		var err error
		if m, err = c.Metadata(ctx, topics); err != nil {
			return nil, nil, err
		}
	}
	got := make(map[TopicPartition]R, len(parts))
	pending := parts
	var failed map[TopicPartition]*PartitionError
	attempts := leaderAttempts
	if lr.Once {
		attempts = 1
	}
	for attempt := 0; attempt < attempts && len(pending) > 0; attempt++ {
		if attempt > 0 {
			if pause := retryPause(attempt, anyTransient(failed)); pause > 0 {
				// A transient failure (a timeout, throttling) asks for a
				// pause, not only for fresh metadata; so does a leader
				// that still says NOT_LEADER after a refresh: the broker
				// that answered Metadata saw the move before the new
				// leader applied it (measured while leaders moved by
				// reassignment and election every 300 ms).
				select {
				case <-ctx.Done():
					return got, failed, ctx.Err()
				case <-time.After(pause):
				}
			}
			var err error
			if m, err = c.Metadata(ctx, topics); err != nil {
				return got, failed, err
			}
		}
		plan, unplanned := PlanLeaders(lr.API, m, pending)
		if failed == nil {
			failed = make(map[TopicPartition]*PartitionError)
		}
		// Only what is asked again may clear its earlier failure; a
		// partition that failed for good in an earlier round stays failed.
		for _, tp := range pending {
			delete(failed, tp)
		}
		for tp, pe := range unplanned {
			failed[tp] = pe
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for broker, bparts := range plan {
			ask := func() {
				// The items name the request in a trace only: not spelled
				// out (a string per partition per Fetch) with none.
				var items []string
				if c.trace.Load() != nil {
					items = tpStrings(bparts)
					if lr.Item != nil {
						for i, tp := range bparts {
							items[i] = lr.Item(tp)
						}
					}
				}
				resp, err := c.send(ctx, lr.API, broker, items, lr.Build(bparts))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					for _, tp := range bparts {
						failed[tp] = &PartitionError{API: lr.API, Topic: tp.Topic, Partition: tp.Partition, Broker: broker, Addr: m.Addr(broker), Err: err}
					}
					return
				}
				answered := make(map[TopicPartition]bool, len(bparts))
				for _, a := range lr.Parse(resp) {
					answered[a.TP] = true
					if a.Code != 0 {
						failed[a.TP] = &PartitionError{API: lr.API, Topic: a.TP.Topic, Partition: a.TP.Partition, Broker: broker, Addr: m.Addr(broker), Err: kerr.ErrorForCode(a.Code)}
						continue
					}
					got[a.TP] = a.Value
				}
				for _, tp := range bparts {
					if !answered[tp] {
						failed[tp] = &PartitionError{API: lr.API, Topic: tp.Topic, Partition: tp.Partition, Broker: broker, Addr: m.Addr(broker),
							Err: ErrNotMentioned}
					}
				}
			}
			if len(plan) == 1 {
				// One leader (a reader's lane asks one broker): asked on
				// this goroutine, whose stack has grown to what parsing
				// the answer needs already. A goroutine per request
				// starts from a small stack and grows it again in every
				// Fetch (copystack, measured at 2-5% of a read's CPU).
				ask()
				break
			}
			wg.Go(ask)
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return got, failed, err
		}
		retry := pending[:0:0]
		for _, tp := range pending {
			if pe := failed[tp]; pe != nil && retriable(pe.Err) {
				retry = append(retry, tp)
			}
		}
		pending = retry
		slices.SortFunc(pending, compareTP)
	}
	if len(failed) == 0 {
		failed = nil
	}
	return got, failed, nil
}

// ErrNotMentioned is a partition's failure when its leader's response left
// it out. For most requests that is a broker bug; a Fetch answer leaves
// out the partitions that did not fit in the response's MaxBytes, which is
// no failure at all (see Cluster.Fetch).
var ErrNotMentioned = errors.New("the broker's response did not mention this partition")

// transientBackoff is the pause before retrying a transient failure.
const transientBackoff = 200 * time.Millisecond

// leaderAttempts bounds the rounds of Leaders: the first, one retry right
// after a metadata refresh (after transientBackoff if the failure was
// transient), and four more after 250, 500, 750 and 1000 ms: together
// about 2.7 s, several times a follower's fetch wait
// (replica.fetch.wait.max.ms, 500 ms), which is what a new leader's high
// watermark waits for (OFFSET_NOT_AVAILABLE). One second was measured too
// short on a loaded 3-broker cluster whose leaders moved every few hundred
// milliseconds (TestRealFaultLeadersMoveDuringStatements: 1 round in 2012).
const leaderAttempts = 6

// retryPause is the pause before round attempt (1-based retries).
func retryPause(attempt int, transient bool) time.Duration {
	pause := time.Duration(0)
	if attempt >= 2 {
		pause = time.Duration(attempt-1) * 250 * time.Millisecond
	}
	if transient {
		pause = max(pause, transientBackoff)
	}
	return pause
}

func anyTransient(failed map[TopicPartition]*PartitionError) bool {
	for _, pe := range failed {
		var ke *kerr.Error
		if errors.As(pe.Err, &ke) && Classify(ke.Code) == Transient {
			return true
		}
	}
	return false
}

// retriable says whether a per-item failure is worth one retry after the
// cluster view is refreshed.
func retriable(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return Classify(ke.Code) != Fatal
	}
	var be *BrokerError
	return errors.As(err, &be) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && !brokerTooOld(be.Err)
}

// brokerTooOld reports kgo's refusal to send a request the broker said
// (ApiVersions) it does not know, e.g. ShareGroupDescribe before Kafka
// 4.0: asking again, or another coordinator, gets the same answer. kgo
// does not export the error, only its text.
func brokerTooOld(err error) bool {
	return err != nil && strings.Contains(err.Error(), "broker is too old")
}

func compareTP(a, b TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

func topicsOf(parts []TopicPartition) []string {
	var ts []string
	for _, tp := range parts {
		if !slices.Contains(ts, tp.Topic) {
			ts = append(ts, tp.Topic)
		}
	}
	return ts
}

// topicParts is one topic's share of a request.
type topicParts struct {
	topic      string
	partitions []int32
}

// byTopic groups partitions by topic, in first-seen order, the shape every
// partitioned request body has.
func byTopic(parts []TopicPartition) []topicParts {
	var out []topicParts
	idx := map[string]int{}
	for _, tp := range parts {
		i, ok := idx[tp.Topic]
		if !ok {
			i = len(out)
			idx[tp.Topic] = i
			out = append(out, topicParts{topic: tp.Topic})
		}
		out[i].partitions = append(out[i].partitions, tp.Partition)
	}
	return out
}

func tpStrings(parts []TopicPartition) []string {
	out := make([]string, len(parts))
	for i, tp := range parts {
		out[i] = tp.String()
	}
	return out
}

// SortedPartitionErrors returns the errors in (topic, partition) order.
func SortedPartitionErrors(m map[TopicPartition]*PartitionError) []*PartitionError {
	out := make([]*PartitionError, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *PartitionError) int {
		return compareTP(TopicPartition{a.Topic, a.Partition}, TopicPartition{b.Topic, b.Partition})
	})
	return out
}

// ToBroker sends a request that only one particular broker can answer: a
// broker's own configs (DescribeConfigs and IncrementalAlterConfigs of a
// BROKER resource) come from that broker, and another broker answers
// INVALID_REQUEST. A broker the cluster does not list is an error that
// names the brokers it does list.
func (c *Cluster) ToBroker(ctx context.Context, api string, broker int32, items []string, req kmsg.Request) (kmsg.Response, error) {
	m := c.Latest()
	if m == nil || !m.hasBroker(broker) {
		var err error
		if m, err = c.Metadata(ctx, []string{}); err != nil {
			return nil, err
		}
	}
	if !m.hasBroker(broker) {
		ids := make([]string, len(m.Brokers))
		for i, b := range m.Brokers {
			ids[i] = fmt.Sprint(b.ID)
		}
		return nil, &UnknownBrokerError{ID: broker, Known: ids}
	}
	return c.send(ctx, api, broker, items, req)
}

// UnknownBrokerError says the cluster lists no broker with this id.
type UnknownBrokerError struct {
	ID    int32
	Known []string
}

func (e *UnknownBrokerError) Error() string {
	return fmt.Sprintf("no broker with id %d: the cluster lists brokers %s (SHOW BROKERS lists them)", e.ID, strings.Join(e.Known, ", "))
}

func (m *Metadata) hasBroker(id int32) bool {
	_, ok := m.Broker(id)
	return ok
}
