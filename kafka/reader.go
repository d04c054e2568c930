package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Range is one partition's share of a read: the offsets [Start, End).
type Range struct {
	TP         TopicPartition
	Start, End int64
}

// DefaultReadBudget is how many bytes of fetched records a Reader buffers
// ahead of its consumer, across all its partitions.
const DefaultReadBudget = 8 << 20

// Reader reads partitions between fixed offsets from their leaders, with
// the next Fetch already in flight while the consumer works through what
// came before: one goroutine per leader broker (a lane) keeps its
// partitions' buffers filled, each Fetch going through Cluster.Fetch, so
// every request is routed to the partition's current leader, traced, and
// retried after a leader moves. A partition whose leader is lost for longer
// than those retries waits for a new one (see leaderwait.go) and resumes
// at its position.
//
// Memory is bounded by bytes, not records: lanes prefetch only while the
// records buffered across all partitions are under the budget, and each
// partition asks for at most budget/(2*partitions) bytes of memory per
// Fetch (Kafka still returns at least one whole batch), converted to wire
// bytes by the expansion measured so far (decompression, decoded
// records), so 32 or 1000 partitions cost about the same. A partition the consumer is waiting for is always
// fetched, whatever the budget, so a reader never deadlocks on its own
// prefetch.
//
// A partition is done when its fetch position reaches its End. Positions,
// not records, are counted: transaction markers, aborted batches and
// compaction gaps move the position, so a reader never waits for records
// that will not come.
type Reader struct {
	cl            *Cluster
	ctx           context.Context
	cancel        context.CancelFunc
	readCommitted bool
	budget        int64

	mu       sync.Mutex
	cond     *sync.Cond
	m        *Metadata
	parts    map[TopicPartition]*readPart
	order    []*readPart // by partition, for stable iteration
	buffered int64       // bytes queued or held by the consumer
	reserved int64       // what the Fetches in flight may bring, in memory
	missing  []error     // partitions that failed for good, in the order they failed
	err      error       // a request-level failure: the read cannot go on
	closed   bool
	// follow: no end (ranges end at math.MaxInt64), an empty answer is the
	// log's end rather than a stall, and a failure is retried after a
	// pause rather than reported (see NewFollowReader).
	follow  bool
	lastErr error // follow: the newest failure, retried
	takeAt  int   // follow: where TakeAny looks first, so partitions take turns
	// expansion is what a byte on the wire becomes in memory once
	// decompressed and decoded, as measured so far: a Fetch's byte limits
	// count wire bytes, the budget counts memory.
	expansion float64
	// spent are the key arrays of chunks the consumer is done with, which
	// a lane puts back in keyPool for the next Fetches (Spent,
	// keypool.go); spentSpare is an emptied spent list to reuse. Only the
	// keys: the records were released from the budget when the next chunk
	// was taken, and must not stay reachable until a lane comes round.
	spent, spentSpare [][]RecordKey
	keyPool           *keyPool
	// waitBound is how long a partition may go without a leader that
	// answers (see leaderwait.go); waitLimit, when set, replaces it: just
	// before the statement's deadline, so the read still ends with its
	// rows and the partitions it could not finish, not with a timeout.
	waitBound time.Duration
	waitLimit time.Time
	clockOn   bool // the clock that wakes lanes for retries runs
	// newEncoder, when set, makes each lane encode its records as they
	// are fetched, in parallel with the consumer (encode.go).
	newEncoder func() RecordEncoder
	encPool    *encPool // the encoded chunks' buffers (encpool.go)
	lanes      int      // lanes started
	wg         sync.WaitGroup
	stopWake   func() bool
}

type readPart struct {
	tp       TopicPartition
	pos, end int64 // the next position to fetch; the exclusive end
	queue    []chunk
	held     int64 // bytes of the chunk the consumer holds
	inflight bool
	wanted   bool // the consumer waits for this partition
	failed   bool
	stalls   int
	retryAt  time.Time // not fetched before this, after a failure
	sentAt   time.Time // when the Fetch in flight was sent
	// leader is the broker the partition was last read from, and its
	// address then: what a failure names once that broker is gone from
	// metadata.
	leader     int32
	leaderAddr string
	wait       partWait // the failed Fetches since the last answer
	// asked is the PartitionMaxBytes of the Fetch in flight; grown, when
	// not 0, is the least this partition asks from now on: its batches are
	// larger than its share of the budget (see grow). unfit: its batches
	// are larger than maxAsk, so it asks for its share and gets a batch
	// only when it comes first.
	asked, grown int32
	unfit        bool
}

// chunk is one Fetch answer's records for one partition, in offset order.
type chunk struct {
	recs  []*kgo.Record
	keys  []RecordKey // keys[i] is recs[i]'s (FetchAnswer.Keys)
	bytes int64
	// enc and ends are an encoding reader's chunk (encode.go): record i's
	// output is enc[ends[i-1]:ends[i]]; recs is then nil, the records
	// being dropped once encoded.
	enc  []byte
	ends []int32
}

// recordOverhead is what a decoded record costs beyond its key, value and
// headers: the kgo.Record in its batch's slab and the pointer to it.
const recordOverhead = int64(unsafe.Sizeof(kgo.Record{})) + 8

// headerOverhead is what each header costs beyond its key and value.
const headerOverhead = int64(unsafe.Sizeof(kgo.RecordHeader{}))

// decodedBytes is what recs cost in memory, decoded.
func decodedBytes(recs []*kgo.Record) int64 {
	var bytes int64
	for _, rec := range recs {
		bytes += int64(len(rec.Key)+len(rec.Value)) + recordOverhead
		for _, h := range rec.Headers {
			bytes += int64(len(h.Key)+len(h.Value)) + headerOverhead
		}
	}
	return bytes
}

// askBytes is the PartitionMaxBytes of the next Fetch: each partition's
// share of the budget, in wire bytes. The caller holds r.mu.
func (r *Reader) askBytes() int32 {
	per := float64(r.budget) / float64(2*max(len(r.order), 1)) / r.expansion
	return int32(min(max(per, 4<<10), maxAsk))
}

// planAsksLocked sets the PartitionMaxBytes of each partition of a Fetch
// about to be sent (in asks and p.asked) and returns the memory they may
// bring, which counts against the budget (r.reserved) until the answer is
// applied. A partition whose batches are larger than the share asks for a
// whole batch only while the budget has room for it: the lanes would
// otherwise overshoot the budget together, and a read at its budget
// fetches only the partitions its consumer waits for, one round trip each;
// without room it asks for the share and gets a batch when it comes first.
// The caller holds r.mu.
func (r *Reader) planAsksLocked(batch []*readPart, asks map[TopicPartition]int32) int64 {
	share := r.askBytes()
	clear(asks)
	room := r.budget - r.buffered - r.reserved
	var reserve int64
	// What an answer costs in flight: the response as it came and what it
	// decodes (and encodes) into, held together until the answer is
	// applied. Counting only the decoded part put peak RSS at 64 to 68 MiB
	// on real Kafka (1M Avro records, 32 partitions) against 56 to 60
	// before asks grew; with the response counted, 59 to 61.
	perByte := r.expansion + 1
	for _, p := range batch {
		ask := p.askOf(share)
		cost := int64(float64(ask) * perByte)
		// A partition waiting for its leader may hold its Fetch (and
		// what it reserved) for seconds: it asks for its share.
		if ask > share && (cost > room || !p.wait.since.IsZero()) {
			ask, cost = share, int64(float64(share)*perByte)
		}
		room -= cost
		reserve += cost
		p.asked = ask
		asks[p.tp] = ask
	}
	r.reserved += reserve
	return reserve
}

// maxAsk is the most a partition asks for in one Fetch.
const maxAsk = 1 << 20

// askOf is p's PartitionMaxBytes in the next Fetch, given the share.
func (p *readPart) askOf(share int32) int32 { return max(share, p.grown) }

// grow records that p came back empty though it has records: not the first
// partition of its broker's Fetch, it gets a batch only if the whole batch
// fits in its ask (KIP-74), and its batches are larger than the share. Left
// at the share, it would be read only when it came first in a Fetch, one
// batch per round trip to its broker: measured (1M records of 100 B in
// 64 KiB batches, 32 partitions, 8 MiB budget), 941 Fetches on real Kafka
// and 1900 on kfake, against 458 and 1568 with asks that grow. Its ask
// doubles until a batch fits, up to maxAsk.
//
// A partition still empty at maxAsk has batches larger than any ask: it
// goes back to its share rather than reserve maxAsk of the budget, Fetch
// after Fetch, for nothing.
func (p *readPart) grow() {
	switch {
	case p.unfit || p.asked <= 0:
	case p.asked >= maxAsk:
		p.grown, p.unfit = 0, true
	default:
		p.grown = min(max(p.grown, 2*p.asked), maxAsk)
	}
}

// NewReader starts reading the ranges; ranges that are already empty are
// done from the start. m says where the leaders are; the reader follows
// leaders that move. Close must be called to stop its goroutines.
func (c *Cluster) NewReader(ctx context.Context, m *Metadata, ranges []Range, budget int64, readCommitted bool) *Reader {
	return c.newReader(ctx, m, ranges, budget, readCommitted, nil)
}

// newReader is NewReader whose lanes encode the records with encoders
// from newEncoder when it is not nil (encode.go).
func (c *Cluster) newReader(ctx context.Context, m *Metadata, ranges []Range, budget int64, readCommitted bool, newEncoder func() RecordEncoder) *Reader {
	if budget <= 0 {
		budget = DefaultReadBudget
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Reader{cl: c, ctx: ctx, cancel: cancel, readCommitted: readCommitted, budget: budget, m: m,
		parts: make(map[TopicPartition]*readPart, len(ranges)), keyPool: newKeyPool(budget), newEncoder: newEncoder}
	if newEncoder != nil {
		r.encPool = newEncPool(budget)
	}
	r.cond = sync.NewCond(&r.mu)
	r.expansion = 4 // until measured: compressed text often shrinks about that much
	// With a statement deadline, the wait ends a moment before it, to
	// leave the statement time to hand out what it has.
	now := time.Now()
	if limit, bound := c.waitBoundFor(ctx, now); bound == 0 {
		r.waitLimit = limit
		r.waitBound = DefaultLeaderWait
	} else {
		r.waitBound = bound
	}
	r.mu.Lock()
	r.addLocked(ranges)
	r.mu.Unlock()
	// Wake the lanes and the consumer when the statement is cancelled.
	r.stopWake = context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	return r
}

// NewFollowReader reads the partitions from their start with no end, as
// new records are written: a Fetch at the log's end waits up to half a
// second for records, and a partition that fails (its leader down, a
// broker that does not answer) is asked again a second later instead of
// being given up; Err reports the newest failure. Take, TakeAny and Add
// work as on any reader; Close must be called.
func (c *Cluster) NewFollowReader(ctx context.Context, m *Metadata, starts []Range, budget int64, readCommitted bool) *Reader {
	for i := range starts {
		starts[i].End = math.MaxInt64
	}
	r := c.NewReader(ctx, m, nil, budget, readCommitted)
	r.mu.Lock()
	r.follow = true
	// FOLLOW hands chunks out as they come (TakeAny) and never compares
	// keys: its Fetches fill no key arrays (Take's keys are nil).
	r.keyPool = nil
	r.addLocked(starts)
	r.startClockLocked() // retries and TakeAny's waits need a clock
	r.mu.Unlock()
	return r
}

// startClockLocked starts the clock that wakes the lanes (and TakeAny)
// every 100 ms, for retries after a pause; the caller holds r.mu.
func (r *Reader) startClockLocked() {
	if r.clockOn || r.closed {
		return
	}
	r.clockOn = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
				r.mu.Lock()
				r.cond.Broadcast()
				r.mu.Unlock()
			}
		}
	}()
}

// Add starts reading more partitions (a follow read picks up partitions
// added to the topic); a partition already read is left as it is.
func (r *Reader) Add(ranges []Range) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.follow {
		for i := range ranges {
			ranges[i].End = math.MaxInt64
		}
	}
	r.addLocked(ranges)
}

// addLocked adds ranges and starts a lane per leader for them; the caller
// holds r.mu.
func (r *Reader) addLocked(ranges []Range) {
	if r.closed {
		return
	}
	lanes := map[int32][]*readPart{}
	for _, rg := range ranges {
		if _, ok := r.parts[rg.TP]; ok {
			continue
		}
		p := &readPart{tp: rg.TP, pos: rg.Start, end: rg.End}
		p.leader = leaderOf(r.m, rg.TP)
		p.leaderAddr = r.m.Addr(p.leader)
		r.parts[rg.TP] = p
		r.order = append(r.order, p)
		lanes[leaderOf(r.m, rg.TP)] = append(lanes[leaderOf(r.m, rg.TP)], p)
	}
	slices.SortFunc(r.order, func(a, b *readPart) int { return compareTP(a.tp, b.tp) })
	r.lanes += len(lanes)
	for _, ps := range lanes {
		r.wg.Add(1)
		go r.lane(ps)
	}
}

func leaderOf(m *Metadata, tp TopicPartition) int32 {
	if t, ok := m.Topics[tp.Topic]; ok {
		for _, p := range t.Partitions {
			if p.ID == tp.Partition {
				return p.Leader
			}
		}
	}
	return -1
}

// Close stops every fetch and waits for the lanes to end. What was
// fetched stays readable through NextUnread; Take reports no more records.
func (r *Reader) Close() {
	r.stopWake()
	r.mu.Lock()
	r.closed = true
	r.cond.Broadcast()
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

// needs reports whether p should be fetched now.
func (r *Reader) needs(p *readPart) bool {
	if p.failed || p.inflight || p.pos >= p.end || len(p.queue) > 0 {
		return false
	}
	if !p.retryAt.IsZero() && time.Now().Before(p.retryAt) {
		return false
	}
	return p.wanted || r.buffered < r.budget
}

// lane keeps one leader's partitions fetched, one Fetch at a time.
func (r *Reader) lane(ps []*readPart) {
	defer r.wg.Done()
	lap := 0
	// Reused from Fetch to Fetch (a read sends thousands): what each
	// asks for, and each broker's first partition.
	var order []TopicPartition
	positions := map[TopicPartition]int64{}
	asks := map[TopicPartition]int32{}
	first := map[int32]TopicPartition{}
	le := r.laneEncoder(ps)
	for {
		r.mu.Lock()
		var batch []*readPart
		for {
			if r.closed || r.err != nil || r.ctx.Err() != nil {
				r.mu.Unlock()
				return
			}
			batch = batch[:0]
			live := false
			now := time.Now()
			for _, p := range ps {
				if !r.follow && !p.failed && !p.inflight && !p.wait.since.IsZero() && !now.Before(r.giveUpAt(p)) {
					r.giveUpLocked(p, now)
				}
				if !p.failed && p.pos < p.end {
					live = true
				}
				if r.needs(p) {
					batch = append(batch, p)
				}
			}
			if !live {
				r.mu.Unlock()
				return
			}
			if len(batch) > 0 {
				break
			}
			r.cond.Wait()
		}
		// A Fetch answer that fills its MaxBytes leaves out the partitions
		// after it: the ones the consumer waits for go first, and the
		// rest take turns.
		lap++
		slices.SortStableFunc(batch, func(a, b *readPart) int {
			switch {
			case a.wanted && !b.wanted:
				return -1
			case b.wanted && !a.wanted:
				return 1
			}
			return 0
		})
		if n := len(batch); n > 1 {
			first := 0
			for first < n && batch[first].wanted {
				first++
			}
			if rest := batch[first:]; len(rest) > 1 {
				k := lap % len(rest)
				rotated := append(slices.Clone(rest[k:]), rest[:k]...)
				copy(rest, rotated)
			}
		}
		reserve := r.planAsksLocked(batch, asks)
		order = slices.Grow(order[:0], len(batch))[:len(batch)]
		clear(positions)
		sent := time.Now()
		// The Fetch ends, answered or not, after fetchAnswerBound or when
		// the first of its partitions has waited for a leader as long as
		// the read waits: a hung leader costs kql's bound, not kgo's read
		// timeout times Leaders' rounds.
		var deadline time.Time
		refresh := false
		for i, p := range batch {
			p.inflight = true
			p.sentAt = sent
			positions[p.tp] = p.pos
			order[i] = p.tp
			if d := r.fetchDeadline(p, sent); deadline.IsZero() || d.Before(deadline) {
				deadline = d
			}
			refresh = refresh || !p.wait.since.IsZero()
		}
		m := r.m
		spent := r.spent
		r.spent, r.spentSpare = r.spentSpare, nil
		r.mu.Unlock()
		r.keyPool.recycle(spent) // off the consumer's goroutine
		clear(spent)

		if refresh {
			// A partition that lost its leader is asked where the
			// cluster now says it is led, not where it last was: a hung
			// leader would hold the Fetch again.
			mctx, cancel := context.WithDeadline(r.ctx, deadline)
			if fresh, err := r.cl.Metadata(mctx, topicsOf(order)); err == nil {
				m = fresh
			}
			cancel()
			// The Fetch gets its own time to answer, within the wait.
			r.mu.Lock()
			now := time.Now()
			deadline = time.Time{}
			for _, p := range batch {
				if d := r.fetchDeadline(p, now); deadline.IsZero() || d.Before(deadline) {
					deadline = d
				}
			}
			r.mu.Unlock()
		}
		actx, cancel := context.WithDeadline(r.ctx, deadline)
		got, failed, err := r.cl.fetchOrdered(actx, m, order, positions, func(tp TopicPartition) int32 { return asks[tp] }, r.readCommitted, r.keyPool, le.slabs(), true)
		cancel()
		le.encodeAll(got)

		r.mu.Lock()
		r.reserved -= reserve
		if r.spentSpare == nil {
			r.spentSpare = spent[:0]
		}
		for _, p := range batch {
			p.inflight = false
		}
		r.cond.Broadcast()
		if r.closed || r.ctx.Err() != nil {
			// Answers that arrived whole are still applied below only
			// when the read goes on; a closed reader keeps its state as
			// it was, consistent for NextUnread.
			r.mu.Unlock()
			return
		}
		// A Fetch that refreshed metadata (a leader moved) lets later
		// fetches go straight to the new leaders.
		if latest := r.cl.Latest(); latest != nil && latest != r.m {
			if _, ok := latest.Topics[batch[0].tp.Topic]; ok {
				r.m = latest
			}
		}
		if err != nil && r.follow && credentialFailure(err) {
			r.endLocked(err)
			r.mu.Unlock()
			return
		}
		if err != nil && !waitable(err) {
			if r.follow {
				r.lastErr = err
				for _, p := range batch {
					p.retryAt = time.Now().Add(followRetry)
				}
				r.mu.Unlock()
				continue
			}
			r.err = err
			r.mu.Unlock()
			return
		}
		now := time.Now()
		for _, p := range batch {
			if _, ok := got[p.tp]; ok {
				continue
			}
			pe := failed[p.tp]
			if pe == nil {
				if err == nil {
					continue
				}
				// The Fetch as a whole failed (its metadata refresh, or
				// the wait's bound cut it off before this partition's
				// broker answered).
				pe = &PartitionError{API: "Fetch", Topic: p.tp.Topic, Partition: p.tp.Partition, Broker: p.leader, Addr: p.leaderAddr, Err: err}
			}
			if r.follow && credentialFailure(pe.Err) {
				r.endLocked(pe)
				r.mu.Unlock()
				return
			}
			if !waitable(pe.Err) {
				if r.follow {
					r.lastErr = pe
					p.retryAt = now.Add(followRetry)
					continue
				}
				p.failed = true
				r.missing = append(r.missing, pe)
				continue
			}
			r.waitLocked(p, pe, sent, now)
		}
		// Only the first partition of a broker's request is sure to get
		// a batch if it has one (KIP-74); the others may come back empty
		// because the answer was full, which is no stall.
		clear(first)
		for _, tp := range order {
			if l := leaderOf(m, tp); l >= 0 {
				if _, ok := first[l]; !ok {
					first[l] = tp
				}
			}
		}
		for tp, a := range got {
			p := r.parts[tp]
			// A leader answered: whatever the partition waited for is over.
			p.wait, p.retryAt = partWait{}, time.Time{}
			if l := leaderOf(m, tp); l >= 0 && l != p.leader {
				p.leader, p.leaderAddr = l, m.Addr(l)
			}
			r.apply(p, a, first[leaderOf(m, tp)] == tp)
		}
		r.mu.Unlock()
	}
}

// giveUpAt is when p, waiting for a leader since p.wait.since, has waited
// as long as the read waits: just before the statement's deadline when it
// has one, else waitBound from the first Fetch that failed. A follow read
// never gives a partition up.
func (r *Reader) giveUpAt(p *readPart) time.Time {
	if !r.waitLimit.IsZero() {
		return r.waitLimit
	}
	return p.wait.since.Add(r.waitBound)
}

// fetchDeadline is when p's Fetch, sent at sent, is cut off unanswered:
// after fetchAnswerBound, or the wait's bound if shorter (the leader then
// counts as hung, and the partition waits for a leader as after any
// failure), and, for a partition that already waits, when its wait ends.
func (r *Reader) fetchDeadline(p *readPart, sent time.Time) time.Time {
	d := sent.Add(min(fetchAnswerBound, r.waitBound))
	if !r.follow && !p.wait.since.IsZero() {
		if g := r.giveUpAt(p); g.Before(d) {
			d = g
		}
	}
	return d
}

// waitLocked records a failed Fetch of p that a new leader may cure: p is
// asked again after a backoff, or given up once it waited as long as the
// read waits. The caller holds r.mu.
func (r *Reader) waitLocked(p *readPart, pe *PartitionError, sent, now time.Time) {
	if p.wait.since.IsZero() {
		p.wait.since = sent
	}
	p.wait.tries++
	p.wait.err = pe
	if r.follow {
		r.lastErr = pe
	} else if !now.Before(r.giveUpAt(p)) {
		r.giveUpLocked(p, now)
		return
	}
	p.retryAt = now.Add(leaderBackoff(p.wait.tries))
	r.startClockLocked()
}

// giveUpLocked fails p after its wait for a leader: the error names the
// partition, the broker it was last read from, how long kql waited and the
// newest failure. The caller holds r.mu.
func (r *Reader) giveUpLocked(p *readPart, now time.Time) {
	p.failed = true
	r.cond.Broadcast() // a Take waiting for p returns
	bound := r.waitBound
	if !r.waitLimit.IsZero() {
		bound = 0
	}
	broker, addr := p.leader, p.leaderAddr
	var last error = errors.New("no answer")
	if pe := p.wait.err; pe != nil {
		last = pe.Err
		if broker < 0 {
			broker, addr = pe.Broker, pe.Addr
		}
	}
	r.missing = append(r.missing, &PartitionError{API: "Fetch", Topic: p.tp.Topic, Partition: p.tp.Partition, Broker: broker, Addr: addr,
		Err: &LeaderWaitError{Waited: now.Sub(p.wait.since), Bound: bound, Last: last}})
}

// GiveUpWaiting gives up every partition that is still waiting for a
// leader, as its bound would a moment later: a read cut off by its
// statement's deadline reports them (partition, broker, how long kql
// waited) with what it read, instead of only the timeout; on a loaded
// machine the lanes may not have got to the give-up before the deadline.
// A follow read gives nothing up.
func (r *Reader) GiveUpWaiting() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.follow {
		return
	}
	now := time.Now()
	for _, p := range r.order {
		if !p.failed && p.pos < p.end && !p.wait.since.IsZero() {
			r.giveUpLocked(p, now)
		}
	}
}

// waitingFor is how long an unanswered Fetch runs before progress counts
// its partitions as waiting for their leader (a Fetch waits at most 500 ms
// for records).
const waitingFor = 3 * time.Second

// Waiting returns the partitions that are waiting for a leader to answer:
// their last Fetch failed, or has gone unanswered for a while. Progress
// shows them.
func (r *Reader) Waiting() []LeaderWait {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	var out []LeaderWait
	for _, p := range r.order {
		if p.failed {
			continue
		}
		w := LeaderWait{TP: p.tp, Broker: p.leader, Addr: p.leaderAddr, Since: p.wait.since}
		if p.wait.err != nil {
			w.Err = p.wait.err
		}
		switch {
		case !p.wait.since.IsZero():
		case p.inflight && now.Sub(p.sentAt) >= waitingFor:
			w.Since = p.sentAt
		default:
			continue
		}
		out = append(out, w)
	}
	return out
}

// maxStalls is how many answers in a row may bring a partition no progress
// before it is reported instead of asked again.
const maxStalls = 5

// apply queues one partition's answer; the caller holds r.mu. first says
// the partition came first in its broker's request.
func (r *Reader) apply(p *readPart, a FetchAnswer, first bool) {
	if a.Ends != nil || a.Enc != nil {
		r.applyEncoded(p, a, first)
		return
	}
	recs, keys := a.Records, a.Keys
	// Records come in offset order; ProcessFetchPartition already left out
	// those before the position. Cut those at or past the end.
	if n := len(recs); n > 0 && recs[n-1].Offset >= p.end {
		i, _ := slices.BinarySearchFunc(recs, p.end, func(rec *kgo.Record, end int64) int {
			if rec.Offset < end {
				return -1
			}
			return 1
		})
		recs = recs[:i]
		if keys != nil {
			keys = keys[:i]
		}
	}
	if len(recs) > 0 {
		bytes := decodedBytes(recs)
		p.queue = append(p.queue, chunk{recs: recs, keys: keys, bytes: bytes})
		r.buffered += bytes
		if a.WireBytes > 0 && len(recs) == len(a.Records) {
			// A moving average: one odd batch does not swing the asks.
			r.expansion = 0.75*r.expansion + 0.25*max(float64(bytes)/float64(a.WireBytes), 1)
		}
	}
	if a.Err != nil {
		p.failed = true
		r.missing = append(r.missing, &PartitionError{API: "Fetch", Topic: p.tp.Topic, Partition: p.tp.Partition, Broker: -1,
			Err: fmt.Errorf("decoding records at offset %d: %w", p.pos, a.Err)})
		return
	}
	if a.Omitted {
		return // the response was full before this partition's turn
	}
	if a.Next <= p.pos && len(recs) == 0 && !first && !a.Limited && p.pos < a.HWM && (!r.readCommitted || p.pos < a.LSO) {
		p.grow() // records it did not get: they did not fit its ask
	}
	if a.Next <= p.pos && len(recs) == 0 {
		if !first || r.follow {
			return // a follow read at the log's end waits for records
		}
		p.stalls++
		if p.stalls >= maxStalls {
			p.failed = true
			r.missing = append(r.missing, &PartitionError{API: "Fetch", Topic: p.tp.Topic, Partition: p.tp.Partition, Broker: -1,
				Err: fmt.Errorf("no progress at offset %d (end %d) after %d fetches", p.pos, p.end, p.stalls)})
		}
		return
	}
	p.stalls = 0
	// Never past the end: what lies beyond it (records written after the
	// read pinned its end, cut above) is the next page's, which starts at
	// NextUnread.
	p.pos = min(max(p.pos, a.Next), p.end)
}

// endLocked ends the read with err: Take and TakeAny return it. The caller
// holds r.mu.
func (r *Reader) endLocked(err error) {
	if r.err == nil {
		r.err = err
	}
	r.cond.Broadcast()
}

// followRetry is how long a follow read waits before asking again for a
// partition whose Fetch failed.
const followRetry = time.Second

// TakeAny returns the next records of whichever partition has some,
// partitions taking turns, waiting at most wait; nil records when none
// came in time. It is how a follow read hands out records as they arrive.
func (r *Reader) TakeAny(wait time.Duration) (TopicPartition, []*kgo.Record, error) {
	deadline := time.Now().Add(wait)
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if r.err != nil {
			return TopicPartition{}, nil, r.err
		}
		if r.closed {
			return TopicPartition{}, nil, ErrReaderClosed
		}
		if err := r.ctx.Err(); err != nil {
			return TopicPartition{}, nil, err
		}
		n := len(r.order)
		for i := 0; i < n; i++ {
			p := r.order[(r.takeAt+i)%n]
			r.buffered -= p.held
			p.held = 0
			if len(p.queue) == 0 {
				continue
			}
			r.takeAt = (r.takeAt + i + 1) % n
			c := p.queue[0]
			p.queue[0] = chunk{}
			p.queue = p.queue[1:]
			p.held = c.bytes
			r.cond.Broadcast()
			return p.tp, c.recs, nil
		}
		if !time.Now().Before(deadline) {
			return TopicPartition{}, nil, nil
		}
		r.cond.Wait() // the follow clock wakes it at least every 100 ms
	}
}

// LastErr is a follow read's newest failure (retried since), or nil.
func (r *Reader) LastErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// ErrReaderClosed is returned by Take after Close.
var ErrReaderClosed = errors.New("reader closed")

// Take returns the next records of one partition, in offset order, and
// their keys (keys[i] is recs[i]'s), waiting for the fetch that brings
// them. It returns nil records when the
// partition is done (its end reached, or failed: see Missing). The
// records returned by the previous Take of this partition are released
// from the budget: the consumer must be done with them. err is a
// request-level failure or the statement's cancellation.
func (r *Reader) Take(tp TopicPartition) (recs []*kgo.Record, keys []RecordKey, err error) {
	c, _, err := r.take(tp)
	return c.recs, c.keys, err
}

// take is Take's chunk; ok false when the partition is done.
func (r *Reader) take(tp TopicPartition) (c chunk, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parts[tp]
	if p == nil {
		return chunk{}, false, nil
	}
	r.buffered -= p.held
	p.held = 0
	for len(p.queue) == 0 {
		if p.failed || (p.pos >= p.end && !p.inflight) {
			return chunk{}, false, nil
		}
		if r.err != nil {
			return chunk{}, false, r.err
		}
		if r.closed {
			return chunk{}, false, ErrReaderClosed
		}
		if err := r.ctx.Err(); err != nil {
			return chunk{}, false, err
		}
		if !p.wanted {
			p.wanted = true
			r.cond.Broadcast() // a lane may be waiting on the budget
		}
		r.cond.Wait()
	}
	p.wanted = false
	c = p.queue[0]
	p.queue[0] = chunk{}
	p.queue = p.queue[1:]
	p.held = c.bytes
	r.cond.Broadcast() // room in the budget
	return c, true, nil
}

// ready reports whether take(tp) would return without waiting: a chunk is
// queued, the partition is done, or the read is over. When it would wait,
// the partition is marked wanted, as take marks it, so that its lane
// fetches it first while the consumer writes out what it has.
func (r *Reader) ready(tp TopicPartition) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parts[tp]
	if p == nil || len(p.queue) > 0 || p.failed || (p.pos >= p.end && !p.inflight) ||
		r.err != nil || r.closed || r.ctx.Err() != nil {
		return true
	}
	if !p.wanted {
		p.wanted = true
		r.cond.Broadcast() // a lane may be waiting on the budget
	}
	return false
}

// Spent hands back the key array of a chunk that Take returned and the
// consumer will not read again: a lane puts it back for the next Fetches
// to fill. It takes the keys only, so that a spent chunk's records (and
// the response buffers their values point into) are not kept reachable
// after the budget released them, while the lanes are in a Fetch.
func (r *Reader) Spent(keys []RecordKey) {
	if r.keyPool == nil || cap(keys) == 0 {
		return
	}
	r.mu.Lock()
	r.spent = append(r.spent, keys)
	r.mu.Unlock()
}

// NextUnread returns the offset of the first record of tp that Take has
// not handed out: the first queued record, or the fetch position when
// nothing is queued (past markers and aborted batches). Meaningful after
// Close, or for a partition the consumer is not taking from.
func (r *Reader) NextUnread(tp TopicPartition) (pos, end int64, failed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parts[tp]
	if p == nil {
		return 0, 0, true
	}
	if len(p.queue) > 0 {
		if c := p.queue[0]; c.recs == nil {
			return c.keys[0].Offset, p.end, p.failed
		}
		return p.queue[0].recs[0].Offset, p.end, p.failed
	}
	return p.pos, p.end, p.failed
}

// Missing returns the partitions that failed for good, each as a
// *PartitionError naming the partition and, where known, the broker.
func (r *Reader) Missing() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.missing)
}

// Metadata returns the newest metadata the reader routed by.
func (r *Reader) Metadata() *Metadata {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m
}
