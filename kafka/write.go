package kafka

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Writing many records (PRODUCE ... FROM FILE/STDIN, INSERT INTO ... SELECT)
// goes through one transactional producer per statement. Routing:
//
//   - Produce: each partition's leader, the partitions a broker leads
//     batched into one request per broker (kgo's producer does this).
//   - FindCoordinator (key type transaction), then InitProducerId,
//     AddPartitionsToTxn and EndTxn: the transactional id's coordinator.
//
// Transactions make the move all-or-nothing per transaction: a reader with
// read_committed never sees an aborted batch, so a failed statement has
// written exactly the transactions it reported committed, and a rerun from
// there duplicates nothing.

// Header is one header of a record to write. A nil Value is a null value.
type Header struct {
	Key   string
	Value []byte
}

// OutRecord is one record to write. The caller chooses the partition (see
// PartitionForKey). A zero Timestamp means "now" (the producer stamps it).
type OutRecord struct {
	Topic     string
	Partition int32
	Key       []byte // nil: a null key
	Value     []byte // nil: a null value (a tombstone)
	Headers   []Header
	Timestamp time.Time
}

// Size is the record's payload as kql counts bytes written: key, value,
// header keys and values.
func (r *OutRecord) Size() int64 {
	n := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		n += int64(len(h.Key) + len(h.Value))
	}
	return n
}

// PartitionWritten is what a writer committed to one partition. Err is set
// when the partition's records of the failed transaction were refused.
type PartitionWritten struct {
	Topic      string
	Partition  int32
	Records    int64
	Bytes      int64
	LastOffset int64 // offset of the last record committed; -1 when none
	Err        error
}

// WriterConfig sizes a writer's transactions.
type WriterConfig struct {
	// TransactionalID names the writer's transactions; see NewTransactionalID.
	TransactionalID string
	// A transaction is committed when it holds MaxTxnRecords records or
	// MaxTxnBytes bytes, whichever comes first (defaults 10,000 and 16 MiB).
	MaxTxnRecords int
	MaxTxnBytes   int64
	// TxnTimeout is the broker's limit on one transaction (default 60 s): a
	// kql killed mid-transaction leaves it open that long at most, and
	// read_committed readers of its partitions wait until the coordinator
	// aborts it.
	TxnTimeout time.Duration
	// MaxBufferedRecords bounds the records the producer holds, buffered
	// or in flight until their partition's leader acknowledges them (0:
	// franz-go's default, 50,000). It bounds memory where MaxBufferedBytes
	// does not: each held record costs its kgo.Record beside its bytes,
	// and keeps alive whatever its bytes point into.
	MaxBufferedRecords int
	// MaxTxnAge, if set, also commits a transaction that has been open
	// that long (checked every txnAgeEvery records): a bound in time well
	// inside TxnTimeout, however slowly the records go out.
	MaxTxnAge time.Duration
	// MaxInFlight, if set, bounds the records the producer holds, and so
	// the writer's memory: Write waits while that many are not answered,
	// until half of them are, and while the records since the first one
	// not answered (what its caller keeps for it: Answered) are
	// inFlightSpan times that many (writeblocks.go). Without it the
	// producer's own bound (writerBufferedRecords) blocks Write.
	MaxInFlight int
}

// writerBufferedBytes bounds what the producer holds. A record larger than
// that is failed by the producer before it is buffered, on its promise
// goroutine, which neither Flush nor the commit waits for: Write refuses
// it itself, or a commit right after it could succeed without it.
const writerBufferedBytes = 32 << 20

// writerBufferedRecords is the default bound of the records the producer
// holds (kgo's default), and so of the writer's record blocks
// (writeblocks.go).
const writerBufferedRecords = 50000

// txnAgeEvery is how often (in records) Write looks at the open
// transaction's age: a clock read per record would cost more than the
// check is worth.
const txnAgeEvery = 256

// DefaultMaxTxnBytes is a transaction's byte bound when the config sets
// none (EXPLAIN names it).
const DefaultMaxTxnBytes = 16 << 20

var txnSeq atomic.Int64

// NewTransactionalID is a transactional id for one statement run:
// kql-<kind>-<host>-<pid>-<n>. It is unique per run, so two kql writing at
// once never fence each other, and SHOW TRANSACTIONS tells which host and
// process an open transaction belongs to. A rerun is safe without reusing
// the id: every committed transaction is reported (and resumed after), an
// aborted or timed-out one is invisible to read_committed readers, and a
// run that was killed cannot commit anything later.
func NewTransactionalID(kind string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	host = strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, host)
	return fmt.Sprintf("kql-%s-%s-%d-%d", kind, host, os.Getpid(), txnSeq.Add(1))
}

// PeekTransactionalID is the id the next NewTransactionalID(kind) returns,
// without taking it (for EXPLAIN).
func PeekTransactionalID(kind string) string {
	id := NewTransactionalID(kind)
	txnSeq.Add(-1)
	return id
}

// Writer writes records in transactions of bounded size. It is used from
// one goroutine; Close it when done.
type Writer struct {
	c   *Cluster
	cfg WriterConfig
	p   *kgo.Client

	inTxn      bool
	txnRecords int
	txnBytes   int64
	txnStart   time.Time // when the open transaction began (MaxTxnAge)

	cur     *recordBlock       // the block records are carved from (newRecord)
	hdrs    []kgo.RecordHeader // the block headers are carved from
	seq     int64              // records given to the producer so far
	made    int                // record blocks allocated (tests)
	promise func(*kgo.Record, error)

	hasErr atomic.Bool // firstErr is set: Write checks this, not the mutex, per record

	mu        sync.Mutex
	firstErr  error             // the first record the open transaction failed to write
	lastTP    TopicPartition    // the partition written last ...
	lastPW    *PartitionWritten // ... and its pending entry: records come in runs of one partition
	pending   map[TopicPartition]*PartitionWritten
	committed map[TopicPartition]*PartitionWritten
	failed    map[TopicPartition]error
	aborting  bool
	txns      int
	// The record blocks in use, and how far the producer has answered
	// (writeblocks.go): a block is carved from again as soon as the producer
	// has answered every record of it, whatever the transaction's size.
	spans      []*blockSpan // the blocks not yet answered in full, in order
	freeBlocks []*recordBlock
	answeredN  atomic.Int64 // the first answeredN records given to Write are all answered (written under mu)
	promised   atomic.Int64 // records whose promise ran (written under mu)
	resumeAt   int64        // a waiting Write goes on once promised reaches it ...
	resumeAll  int64        // ... and answeredN this
	room       sync.Cond    // signalled when it does (L is &mu)
}

// writerRetryBackoff is how soon the writer retries a batch a broker
// answered with a retriable error (Kafka's retry.backoff.ms).
const writerRetryBackoff = 100 * time.Millisecond

// writerUnknownTopicWait is how long the writer keeps retrying a partition
// its leader answers UNKNOWN_TOPIC_OR_PARTITION (a topic created a moment
// ago whose metadata has not reached that broker yet, or one deleted under
// the statement). kgo counts retries, not time (4 by default): at one
// retry per writerRetryBackoff that would be half a second.
const writerUnknownTopicWait = 10 * time.Second

// NewWriter starts a transactional producer and registers its
// transactional id with the coordinator (FindCoordinator, InitProducerId)
// before anything is read, so that a principal that may not write
// transactions fails before the statement consumes its input.
func (c *Cluster) NewWriter(ctx context.Context, cfg WriterConfig) (*Writer, error) {
	if cfg.TransactionalID == "" {
		return nil, errors.New("kafka writer: no transactional id")
	}
	if cfg.MaxTxnRecords <= 0 {
		cfg.MaxTxnRecords = 10000
	}
	if cfg.MaxTxnBytes <= 0 {
		cfg.MaxTxnBytes = DefaultMaxTxnBytes
	}
	if cfg.TxnTimeout <= 0 {
		cfg.TxnTimeout = 60 * time.Second
	}
	buffered := writerBufferedRecords
	if cfg.MaxInFlight > 0 {
		// Answered moves by whole blocks, and the block being carved
		// from is not counted: a wait for half the window must not need
		// it.
		cfg.MaxInFlight = max(cfg.MaxInFlight, 4*blockRecords)
		buffered = 2 * cfg.MaxInFlight // never reached: Write waits first
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.cfg.Bootstrap...),
		kgo.ClientID(c.cfg.ClientID),
		kgo.DialTimeout(c.cfg.DialTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.TransactionalID(cfg.TransactionalID),
		kgo.TransactionTimeout(cfg.TxnTimeout),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.MaxBufferedBytes(writerBufferedBytes), // memory stays flat however big the input
		kgo.MaxBufferedRecords(buffered),
		// Under transaction version 2 (KIP-890, Kafka 4's default) a
		// transaction's first Produce to a partition whose previous
		// transaction's markers are still being written is answered
		// CONCURRENT_TRANSACTIONS; kgo retries the batch after its next
		// metadata refresh, which by default comes at most every 5 s: up
		// to 5 s per transaction (measured: 9 transactions of 7 records
		// took 45 s on the 3-broker test cluster). Kafka's producer retries
		// after retry.backoff.ms (100 ms); a refresh at most every 100 ms
		// does the same.
		kgo.MetadataMinAge(writerRetryBackoff),
		kgo.UnknownTopicRetries(int(writerUnknownTopicWait / writerRetryBackoff)),
		kgo.WithHooks(writeTrace{c}),
		kgo.DisableClientMetrics(), // as in Dial: no requests kql does not route
	}
	if cfg.MaxBufferedRecords > 0 {
		opts = append(opts, kgo.MaxBufferedRecords(cfg.MaxBufferedRecords))
	}
	if c.cfg.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(c.cfg.TLS))
	}
	if c.cfg.SASL != nil {
		opts = append(opts, kgo.SASL(c.cfg.SASL))
	}
	p, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("producer options: %w", err)
	}
	if _, _, err := p.ProducerID(ctx); err != nil {
		p.Close()
		if errors.Is(err, kerr.TransactionalIDAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed) {
			return nil, fmt.Errorf("cannot start transactional id %q: the principal needs the WRITE ACL on transactional ids with that prefix (TRANSACTIONAL_ID 'kql-' PREFIXED) and WRITE on the target topics: %w", cfg.TransactionalID, err)
		}
		return nil, fmt.Errorf("cannot start transactional id %q at its coordinator: %w", cfg.TransactionalID, err)
	}
	w := &Writer{c: c, cfg: cfg, p: p,
		pending:   map[TopicPartition]*PartitionWritten{},
		committed: map[TopicPartition]*PartitionWritten{},
		failed:    map[TopicPartition]error{},
	}
	w.room.L = &w.mu
	return w, nil
}

// TransactionalID is the id the writer's transactions run under.
func (w *Writer) TransactionalID() string { return w.cfg.TransactionalID }

// OpenSince is when the open transaction began, and false if none is
// open. Like Write and Commit, it must not run concurrently with them.
func (w *Writer) OpenSince() (time.Time, bool) { return w.txnStart, w.inTxn }

// Transactions is how many transactions the writer committed.
func (w *Writer) Transactions() int { return w.txns }

// Write adds rec to the open transaction (beginning one if none is open)
// and commits it when it is full. committed reports that this call ended a
// transaction with rec in it: everything given to Write so far is then
// durable. An error means the open transaction was aborted: nothing of it
// is visible to read_committed readers.
func (w *Writer) Write(ctx context.Context, rec *OutRecord) (committed bool, err error) {
	if err := w.takeErr(); err != nil {
		return false, w.abortWith(err)
	}
	if !w.inTxn {
		if err := w.p.BeginTransaction(); err != nil {
			return false, fmt.Errorf("begin transaction %s: %w", w.cfg.TransactionalID, err)
		}
		w.inTxn = true
		w.txnRecords, w.txnBytes = 0, 0
		w.txnStart = time.Now()
	}
	size := rec.Size()
	if size > writerBufferedBytes {
		err := fmt.Errorf("a record of %d bytes (key, value and headers) for %s/%d is larger than the %d MiB the producer holds, and than any broker's default max.message.bytes: it cannot be written (split or shrink it)", size, rec.Topic, rec.Partition, writerBufferedBytes>>20)
		if w.inTxn {
			return false, w.abortWith(err)
		}
		return false, err
	}
	if w.cfg.MaxInFlight > 0 && (w.seq-w.promised.Load() >= int64(w.cfg.MaxInFlight) || w.seq-w.answeredN.Load() >= inFlightSpan*int64(w.cfg.MaxInFlight)) {
		w.waitForRoom()
	}
	r := w.newRecord(len(rec.Headers))
	r.Topic, r.Partition, r.Key, r.Value, r.Timestamp = rec.Topic, rec.Partition, rec.Key, rec.Value, rec.Timestamp
	for i, h := range rec.Headers {
		r.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
	}
	if w.promise == nil {
		w.promise = w.written
	}
	w.p.Produce(ctx, r, w.promise)
	w.txnRecords++
	w.txnBytes += size
	if w.txnRecords >= w.cfg.MaxTxnRecords || w.txnBytes >= w.cfg.MaxTxnBytes ||
		w.cfg.MaxTxnAge > 0 && w.txnRecords%txnAgeEvery == 0 && time.Since(w.txnStart) >= w.cfg.MaxTxnAge {
		if err := w.Commit(ctx); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// written is every record's promise: the producer's answer for it.
func (w *Writer) written(r *kgo.Record, err error) {
	tp := TopicPartition{r.Topic, r.Partition}
	w.mu.Lock()
	defer w.mu.Unlock()
	defer w.answered(r) // after the accounting below: it reads r
	if err != nil {
		if w.aborting {
			return
		}
		if w.firstErr == nil {
			w.hasErr.Store(true)
			w.firstErr = fmt.Errorf("write to %s/%d (leader broker %s): %w", r.Topic, r.Partition, w.leaderOf(r.Topic, r.Partition), err)
		}
		if _, ok := w.failed[tp]; !ok {
			w.failed[tp] = err
		}
		return
	}
	pw := w.lastPW
	if pw == nil || w.lastTP != tp {
		if pw = w.pending[tp]; pw == nil {
			pw = &PartitionWritten{Topic: tp.Topic, Partition: tp.Partition, LastOffset: -1}
			w.pending[tp] = pw
		}
		w.lastTP, w.lastPW = tp, pw
	}
	size := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		size += int64(len(h.Key) + len(h.Value))
	}
	pw.Records++
	pw.Bytes += size
	pw.LastOffset = max(pw.LastOffset, r.Offset)
}

// leaderOf names the broker the producer sent topic/p's records to: its id
// as the producer's own metadata has it (the cluster's last metadata is
// that of the last statement's topics, often only the source of an
// INSERT, which left the destination's leader "unknown"), and its address.
func (w *Writer) leaderOf(topic string, p int32) string {
	id, _, err := w.p.PartitionLeader(topic, p)
	if err != nil || id < 0 {
		return w.c.leaderAddr(topic, p)
	}
	w.c.metaMu.Lock()
	m := w.c.lastMeta
	w.c.metaMu.Unlock()
	addr := "unknown address"
	if m != nil {
		addr = m.Addr(id)
	}
	return fmt.Sprintf("%d at %s", id, addr)
}

func (w *Writer) takeErr() error {
	if !w.hasErr.Load() {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.firstErr
}

// Commit flushes and commits the open transaction, if any. On failure the
// transaction is aborted and the error says so; a commit whose outcome the
// coordinator did not confirm is aborted too (kgo bumps the epoch, which
// fences whatever was still open).
func (w *Writer) Commit(ctx context.Context) error {
	if !w.inTxn {
		return nil
	}
	if err := w.p.Flush(ctx); err != nil {
		return w.abortWith(fmt.Errorf("writing the transaction's records: %w", err))
	}
	if err := w.takeErr(); err != nil {
		return w.abortWith(err)
	}
	if err := w.p.EndTransaction(ctx, kgo.TryCommit); err != nil {
		var refused *kerr.Error
		if errors.As(err, &refused) {
			// The coordinator answered and refused: not committed.
			return w.abortWith(fmt.Errorf("commit of transaction %s (EndTxn to its coordinator): %w", w.cfg.TransactionalID, err))
		}
		// No answer (timeout, cancel, connection lost): the coordinator
		// may have committed it. Saying "aborted" here would make a rerun
		// copy its records twice.
		_ = w.Abort()
		return &CommitUnknownError{TransactionalID: w.cfg.TransactionalID, Err: err}
	}
	w.inTxn = false
	w.txns++
	w.mu.Lock()
	for tp, pw := range w.pending {
		c := w.committed[tp]
		if c == nil {
			c = &PartitionWritten{Topic: tp.Topic, Partition: tp.Partition, LastOffset: -1}
			w.committed[tp] = c
		}
		c.Records += pw.Records
		c.Bytes += pw.Bytes
		c.LastOffset = max(c.LastOffset, pw.LastOffset)
	}
	clear(w.pending)
	w.lastPW = nil
	w.mu.Unlock()
	return nil
}

// CommitUnknownError is a commit the coordinator did not answer: the
// transaction may be committed or not, and only reading the destination
// (read_committed) tells which.
type CommitUnknownError struct {
	TransactionalID string
	Err             error
}

func (e *CommitUnknownError) Error() string {
	return fmt.Sprintf("commit of transaction %s (EndTxn to its coordinator) got no answer (%v): its outcome is unknown, it may or may not be committed", e.TransactionalID, e.Err)
}

func (e *CommitUnknownError) Unwrap() error { return e.Err }

// abortWith aborts the open transaction and returns cause, annotated with
// the abort's own failure if it had one.
func (w *Writer) abortWith(cause error) error {
	if err := w.Abort(); err != nil {
		return fmt.Errorf("%w; the abort failed too (%v): the coordinator aborts the transaction after its timeout of %s, and read_committed readers never see it", cause, err, w.cfg.TxnTimeout)
	}
	return fmt.Errorf("%w; the open transaction was aborted, nothing of it is visible to read_committed readers", cause)
}

// Abort abandons the open transaction, if any: buffered records are
// dropped, those in flight are waited for, and EndTxn aborts the rest. It
// runs on its own bounded context, since it is what a cancelled statement
// calls.
func (w *Writer) Abort() error {
	if !w.inTxn {
		return nil
	}
	w.inTxn = false
	w.mu.Lock()
	w.aborting = true // the records dropped now are not failures of their partitions
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		clear(w.pending)
		w.lastPW = nil
		w.firstErr = nil
		w.hasErr.Store(false)
		w.aborting = false
		w.mu.Unlock()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.p.AbortBufferedRecords(ctx); err != nil {
		return err
	}
	return w.p.EndTransaction(ctx, kgo.TryAbort)
}

// Written is what the writer committed, one row per partition written or
// refused, sorted by topic and partition.
func (w *Writer) Written() []PartitionWritten {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[TopicPartition]bool{}
	var out []PartitionWritten
	for tp, pw := range w.committed {
		seen[tp] = true
		row := *pw
		row.Err = w.failed[tp]
		out = append(out, row)
	}
	for tp, err := range w.failed {
		if !seen[tp] {
			out = append(out, PartitionWritten{Topic: tp.Topic, Partition: tp.Partition, LastOffset: -1, Err: err})
		}
	}
	slices.SortFunc(out, func(a, b PartitionWritten) int {
		return compareTP(TopicPartition{a.Topic, a.Partition}, TopicPartition{b.Topic, b.Partition})
	})
	return out
}

// Close aborts an open transaction and closes the producer.
func (w *Writer) Close() {
	_ = w.Abort()
	w.p.Close()
}

// writeTrace reports every request of a writer to the trace hook.
type writeTrace struct{ c *Cluster }

func (h writeTrace) OnBrokerE2E(meta kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	fn := h.c.trace.Load()
	if fn == nil {
		return
	}
	err := e2e.WriteErr
	if err == nil {
		err = e2e.ReadErr
	}
	name := kmsg.NameForKey(key)
	if name == "InitProducerID" {
		name = "InitProducerId" // Kafka's own spelling, as EXPLAIN prints it
	}
	(*fn)(TraceEvent{API: name, Broker: meta.NodeID, Addr: fmt.Sprintf("%s:%d", meta.Host, meta.Port), Duration: e2e.DurationE2E(), Err: err})
}
