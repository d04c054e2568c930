package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// The transaction statements. Each request goes where Kafka answers it:
// ListTransactions to every broker (each lists only the transactional ids it
// coordinates), DescribeTransactions to each id's coordinator,
// DescribeProducers and WriteTxnMarkers to each partition's leader.

var showTransactionsCols = []result.Column{
	col("transactional_id", result.String), col("producer_id", result.Int), col("producer_epoch", result.Int),
	col("state", result.String), col("timeout_ms", result.Int), col("coordinator", result.Int),
}

// showTransactions unions ListTransactions over every broker, then asks
// each listed id's coordinator for its epoch and timeout (ListTransactions
// has neither). A broker that did not answer makes the result partial and
// is named; an id whose coordinator did not answer keeps its row, with NULL
// epoch and timeout.
func (s *Session) showTransactions(ctx context.Context) (result.Result, error) {
	listed, brokersMissing, err := s.cl.ListTransactions(ctx, nil)
	if err != nil {
		return nil, err
	}
	var missing []error
	for _, be := range brokersMissing {
		missing = append(missing, be)
	}
	// One row per id. A broker lists what it coordinates, so an id is
	// listed once; should two brokers list it (the coordinator moved
	// between their answers; kfake lists every id on every broker), the
	// broker that answers DescribeTransactions for it is its coordinator.
	var ids []string
	first := map[string]kafka.TxnListing{}
	for _, l := range listed {
		if _, dup := first[l.ID]; !dup {
			first[l.ID] = l
			ids = append(ids, l.ID)
		}
	}
	desc, dfail, err := s.cl.DescribeTransactions(ctx, ids)
	if err != nil {
		return nil, err
	}
	res := result.NewSlice(showTransactionsCols, nil)
	for _, id := range ids {
		l := first[id]
		if d, ok := desc[id]; ok {
			res.Rows = append(res.Rows, result.Row{id, d.ProducerID, int64(d.ProducerEpoch), d.State, int64(d.TimeoutMs), int64(d.Coordinator)})
			continue
		}
		if ge := dfail[id]; ge != nil && kafka.IsTxnNotFound(ge.Err) {
			continue // expired between the listing and the description: it is gone
		}
		if ge := dfail[id]; ge != nil {
			missing = append(missing, ge)
		}
		res.Rows = append(res.Rows, result.Row{id, l.ProducerID, nil, l.State, nil, int64(l.Coordinator)})
	}
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: "SHOW TRANSACTIONS (each broker lists only the transactional ids it coordinates)", Missing: missing}
	}
	return res, nil
}

var describeTransactionCols = []result.Column{
	col("transactional_id", result.String), col("coordinator", result.Int), col("producer_id", result.Int),
	col("producer_epoch", result.Int), col("state", result.String), col("timeout_ms", result.Int),
	col("started", result.Time), col("topic", result.String), col("partition", result.Int),
	col("last_update", result.Time), col("start_offset", result.Int),
}

// describeTransaction asks the transactional id's coordinator, then each of
// its partitions' leaders for the producer's state there: when it last
// wrote (last_update) and where its open transaction starts (start_offset,
// what holds the last stable offset back). One row per partition; a
// transaction with no partitions (Empty, or complete) is one row with NULL
// topic and partition.
func (s *Session) describeTransaction(ctx context.Context, st *lang.DescribeTransaction) (result.Result, error) {
	desc, dfail, err := s.cl.DescribeTransactions(ctx, []string{st.ID})
	if err != nil {
		return nil, err
	}
	if ge := dfail[st.ID]; ge != nil {
		if kafka.IsTxnNotFound(ge.Err) {
			return nil, fmt.Errorf("no transactional id %q: its coordinator (broker %d) does not know it (SHOW TRANSACTIONS lists them)", st.ID, ge.Broker)
		}
		return nil, ge
	}
	d := desc[st.ID]
	head := func() result.Row {
		var started any
		if d.StartMs >= 0 {
			started = time.UnixMilli(d.StartMs)
		}
		return result.Row{d.ID, int64(d.Coordinator), d.ProducerID, int64(d.ProducerEpoch), d.State, int64(d.TimeoutMs), started}
	}
	res := result.NewSlice(describeTransactionCols, nil)
	if len(d.Partitions) == 0 {
		res.Rows = append(res.Rows, append(head(), nil, nil, nil, nil))
		return res, nil
	}
	states, pfail, err := s.cl.DescribeProducers(ctx, nil, d.Partitions)
	if err != nil {
		return nil, err
	}
	for _, tp := range d.Partitions {
		var last, start any
		for _, ps := range states[tp] {
			if ps.ProducerID == d.ProducerID {
				last = time.UnixMilli(ps.LastTimestamp)
				if ps.TxnStartOffset >= 0 {
					start = ps.TxnStartOffset
				}
			}
		}
		res.Rows = append(res.Rows, append(head(), tp.Topic, int64(tp.Partition), last, start))
	}
	if missing := partitionErrors(pfail); len(missing) > 0 {
		res.Failure = &result.PartialError{What: fmt.Sprintf("DESCRIBE TRANSACTION %q (the producer's state on some partitions)", st.ID), Missing: missing}
	}
	return res, nil
}

// hangingThreshold is kafka-transactions.sh find-hanging's default
// --max-transaction-timeout, and the default transaction.max.timeout.ms: a
// coordinator aborts every transaction it knows within that.
const hangingThreshold = 15 * time.Minute

var showHangingCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("producer_id", result.Int),
	col("producer_epoch", result.Int), col("coordinator_epoch", result.Int), col("start_offset", result.Int),
	col("last_update", result.Time), col("minutes", result.Int), col("transactional_id", result.String),
	col("reason", result.String),
}

// openTxn is one producer's open transaction on one partition, as the
// partition's leader keeps it.
type openTxn struct {
	tp    kafka.TopicPartition
	state kafka.ProducerState
}

// verdict is what the coordinators say about an open transaction.
type verdict struct {
	hanging bool
	unsure  bool   // a coordinator or broker did not answer: it may be hanging
	txnID   string // "" when no coordinator lists the producer
	reason  string
}

// judge follows kafka-transactions.sh find-hanging (KIP-664): an open
// transaction is hanging when no coordinator lists its producer
// (ListTransactions on every broker, filtered by producer id), when the
// transactional id's coordinator no longer knows the id, or when the
// coordinator describes the transaction without this partition (it will
// never write this partition's marker). A partition the coordinator still
// lists is not hanging: the coordinator ends it, at the latest at its
// timeout. missing collects what did not answer.
func (s *Session) judge(ctx context.Context, open []openTxn) (map[openTxn]verdict, []error, error) {
	out := make(map[openTxn]verdict, len(open))
	if len(open) == 0 {
		return out, nil, nil
	}
	var pids []int64
	for _, o := range open {
		if !slices.Contains(pids, o.state.ProducerID) {
			pids = append(pids, o.state.ProducerID)
		}
	}
	slices.Sort(pids)
	listed, brokersMissing, err := s.cl.ListTransactions(ctx, pids)
	if err != nil {
		return nil, nil, err
	}
	var missing []error
	var silent []string
	for _, be := range brokersMissing {
		missing = append(missing, be)
		silent = append(silent, fmt.Sprintf("broker %d", be.ID))
	}
	idOf := map[int64]string{}
	var ids []string
	for _, l := range listed {
		if slices.Contains(pids, l.ProducerID) && idOf[l.ProducerID] == "" {
			idOf[l.ProducerID] = l.ID
			ids = append(ids, l.ID)
		}
	}
	desc, dfail, err := s.cl.DescribeTransactions(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	for _, ge := range dfail {
		if !kafka.IsTxnNotFound(ge.Err) {
			missing = append(missing, ge)
		}
	}
	for _, o := range open {
		pid := o.state.ProducerID
		id, ok := idOf[pid]
		switch {
		case !ok && len(silent) > 0:
			out[o] = verdict{unsure: true, reason: fmt.Sprintf("cannot tell: no coordinator that answered lists producer %d, and %s did not answer ListTransactions",
				pid, strings.Join(silent, ", "))}
		case !ok:
			out[o] = verdict{hanging: true, reason: fmt.Sprintf("no coordinator lists producer %d (ListTransactions on every broker): none will write its marker", pid)}
		case dfail[id] != nil && kafka.IsTxnNotFound(dfail[id].Err):
			out[o] = verdict{hanging: true, txnID: id, reason: fmt.Sprintf("the coordinator (broker %d) no longer knows transactional id %q: none will write its marker", dfail[id].Broker, id)}
		case dfail[id] != nil:
			out[o] = verdict{unsure: true, txnID: id, reason: "cannot tell: " + oneLine(dfail[id])}
		case !slices.Contains(desc[id].Partitions, o.tp):
			d := desc[id]
			out[o] = verdict{hanging: true, txnID: id, reason: fmt.Sprintf("its coordinator (broker %d) has transactional id %q %s without %s: it will never write this partition's marker",
				d.Coordinator, id, txnWhat(d), o.tp)}
		default:
			d := desc[id]
			out[o] = verdict{txnID: id, reason: fmt.Sprintf("its coordinator (broker %d) has %s in transactional id %q %s and ends it itself, at the latest %s after it started",
				d.Coordinator, o.tp, id, txnWhat(d), time.Duration(d.TimeoutMs)*time.Millisecond)}
		}
	}
	return out, missing, nil
}

func txnWhat(d kafka.TxnDescription) string {
	return fmt.Sprintf("(state %s, producer %d epoch %d)", d.State, d.ProducerID, d.ProducerEpoch)
}

// showHanging finds open transactions (DescribeProducers to each partition's
// leader) whose last write is older than the threshold, then asks the
// coordinators which of them they will still end (judge). A row that
// cannot be judged says so in its reason and makes the result partial.
func (s *Session) showHanging(ctx context.Context, st *lang.ShowHangingTransactions) (result.Result, error) {
	threshold := hangingThreshold
	if st.OlderThan != nil {
		threshold = *st.OlderThan
	}
	var topics []string
	if st.Topic != nil {
		topics = []string{*st.Topic}
	}
	m, err := s.cl.Metadata(ctx, topics)
	if err != nil {
		return nil, err
	}
	var parts []kafka.TopicPartition
	for _, name := range m.TopicNames() {
		if st.Topic == nil || name == *st.Topic {
			parts = append(parts, partitionsOf(m.Topics[name])...)
		}
	}
	states, pfail, err := s.cl.DescribeProducers(ctx, m, parts)
	if err != nil {
		return nil, err
	}
	missing := partitionErrors(pfail)
	now := s.Now()
	var open []openTxn
	for _, tp := range parts {
		for _, ps := range states[tp] {
			if ps.TxnStartOffset >= 0 && now.Sub(time.UnixMilli(ps.LastTimestamp)) > threshold {
				open = append(open, openTxn{tp: tp, state: ps})
			}
		}
	}
	verdicts, more, err := s.judge(ctx, open)
	if err != nil {
		return nil, err
	}
	missing = append(missing, more...)
	res := result.NewSlice(showHangingCols, nil)
	for _, o := range open {
		v := verdicts[o]
		if !v.hanging && !v.unsure {
			continue
		}
		var id any
		if v.txnID != "" {
			id = v.txnID
		}
		last := time.UnixMilli(o.state.LastTimestamp)
		res.Rows = append(res.Rows, result.Row{o.tp.Topic, int64(o.tp.Partition), o.state.ProducerID, int64(o.state.ProducerEpoch),
			int64(o.state.CoordinatorEpoch), o.state.TxnStartOffset, last, int64(now.Sub(last) / time.Minute), id, v.reason})
	}
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: "SHOW HANGING TRANSACTIONS", Missing: missing}
	}
	return res, nil
}

var abortTransactionCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("producer_id", result.Int),
	col("producer_epoch", result.Int), col("coordinator_epoch", result.Int), col("start_offset", result.Int),
	col("lso", result.Int), col("high_watermark", result.Int), col("lso_after", result.Int),
	col("executed", result.Bool), col("outcome", result.String),
}

// abortPlan is what ABORT TRANSACTION found before writing anything.
type abortPlan struct {
	m       *kafka.Metadata
	tp      kafka.TopicPartition
	state   kafka.ProducerState
	lso, hw int64
	after   int64  // the LSO once the marker is written
	heldBy  string // another open transaction that still holds the LSO, or ""
	verdict verdict
}

// planAbort checks the producer has an open transaction with that epoch
// on the partition (DescribeProducers to its leader), reads the last
// stable offset and high watermark (ListOffsets to the leader, read_committed
// and read_uncommitted), computes where the LSO goes, and asks the
// coordinators whether the transaction is hanging (so the dry run can warn
// before an operator aborts one a coordinator will still end).
func (s *Session) planAbort(ctx context.Context, st *lang.AbortTransaction) (*abortPlan, error) {
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	parts, err := pickPartitions(m.Topics[st.Topic], []int32{st.Partition}, "PARTITION")
	if err != nil {
		return nil, err
	}
	tp := parts[0]
	states, pfail, err := s.cl.DescribeProducers(ctx, m, parts)
	if err != nil {
		return nil, err
	}
	if pe := pfail[tp]; pe != nil {
		return nil, pe
	}
	p := &abortPlan{m: m, tp: tp, after: -1}
	found := false
	var others []kafka.ProducerState
	for _, ps := range states[tp] {
		if ps.ProducerID == st.ProducerID {
			p.state, found = ps, true
		} else if ps.TxnStartOffset >= 0 {
			others = append(others, ps)
		}
	}
	leader := leaderOf(m, tp)
	switch {
	case !found:
		return nil, fmt.Errorf("nothing to abort: partition %s has no active producer %d (its leader, broker %d, lists %s; SHOW HANGING TRANSACTIONS ON TOPIC %s lists open ones)",
			tp, st.ProducerID, leader, producerList(states[tp]), lang.QuoteName(tp.Topic))
	case p.state.TxnStartOffset < 0:
		return nil, fmt.Errorf("nothing to abort: producer %d has no open transaction on partition %s (its leader, broker %d, says so)", st.ProducerID, tp, leader)
	case p.state.ProducerEpoch != int32(st.ProducerEpoch):
		return nil, fmt.Errorf("producer %d's open transaction on partition %s has epoch %d, not %d (its leader, broker %d, says so): write EPOCH %d",
			st.ProducerID, tp, p.state.ProducerEpoch, st.ProducerEpoch, leader, p.state.ProducerEpoch)
	}
	if p.lso, p.hw, err = s.stableOffsets(ctx, m, tp); err != nil {
		return nil, err
	}
	// The abort marker goes at the high watermark; the LSO then moves to
	// the first offset of the next open transaction, or past the marker.
	p.after = p.hw + 1
	for _, o := range others {
		if o.TxnStartOffset < p.after {
			p.after = o.TxnStartOffset
			p.heldBy = fmt.Sprintf("producer %d's open transaction from offset %d", o.ProducerID, o.TxnStartOffset)
		}
	}
	verdicts, _, err := s.judge(ctx, []openTxn{{tp: tp, state: p.state}})
	if err != nil {
		return nil, err
	}
	p.verdict = verdicts[openTxn{tp: tp, state: p.state}]
	return p, nil
}

// stableOffsets reads a partition's last stable offset (ListOffsets,
// read_committed) and high watermark (read_uncommitted) from its leader,
// concurrently.
func (s *Session) stableOffsets(ctx context.Context, m *kafka.Metadata, tp kafka.TopicPartition) (lso, hw int64, err error) {
	offs := s.cl.OffsetsAt(ctx, m, []kafka.TopicPartition{tp}, kafka.OffsetsOptions{},
		kafka.OffsetQuery{At: kafka.Latest, ReadCommitted: true}, kafka.OffsetQuery{At: kafka.Latest})
	for _, a := range offs {
		if a.Err != nil {
			return 0, 0, a.Err
		}
		if pe := a.Failed[tp]; pe != nil {
			return 0, 0, pe
		}
	}
	return offs[0].Got[tp].Offset, offs[1].Got[tp].Offset, nil
}

func leaderOf(m *kafka.Metadata, tp kafka.TopicPartition) int32 {
	if t := m.Topics[tp.Topic]; t != nil {
		for _, p := range t.Partitions {
			if p.ID == tp.Partition {
				return p.Leader
			}
		}
	}
	return -1
}

func producerList(ps []kafka.ProducerState) string {
	if len(ps) == 0 {
		return "no active producers"
	}
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = fmt.Sprintf("%d", p.ProducerID)
	}
	return "producers " + strings.Join(ids, ", ")
}

// abortTransaction is ABORT TRANSACTION: without EXECUTE it shows what a
// read_committed consumer sees before and after; with EXECUTE it writes the
// abort marker to the partition's leader (WriteTxnMarkers, as Kafka's
// Admin.abortTransaction does) and reads the offsets again.
func (s *Session) abortTransaction(ctx context.Context, st *lang.AbortTransaction) (result.Result, error) {
	p, err := s.planAbort(ctx, st)
	if err != nil {
		return nil, err
	}
	// kafka-transactions.sh abort uses coordinator epoch 0 when the
	// leader never saw one (-1): no coordinator ever wrote a marker for
	// this producer here, and 0 is at most any epoch a leader keeps.
	coordEpoch := max(p.state.CoordinatorEpoch, 0)
	row := func(lsoAfter int64, executed bool, outcome string) result.Row {
		return result.Row{p.tp.Topic, int64(p.tp.Partition), p.state.ProducerID, int64(p.state.ProducerEpoch), int64(coordEpoch),
			p.state.TxnStartOffset, p.lso, p.hw, lsoAfter, executed, outcome}
	}
	var warn []string
	switch {
	case p.verdict.unsure:
		warn = append(warn, "maybe not hanging: "+p.verdict.reason)
	case !p.verdict.hanging:
		warn = append(warn, "not hanging: "+p.verdict.reason)
	}
	if !st.Execute {
		outcome := fmt.Sprintf("dry run: read_committed consumers stop at offset %d (the LSO, where this transaction starts at %d); "+
			"after the abort they skip its records and read on to offset %d", p.lso, p.state.TxnStartOffset, p.after)
		if p.heldBy != "" {
			outcome += " (" + p.heldBy + " still holds the LSO there)"
		} else {
			outcome += " (the high watermark after the abort marker)"
		}
		next := "; add EXECUTE to abort"
		if refuseLive(p) != nil {
			next = "; EXECUTE is refused while its coordinator lists this partition"
		}
		res := result.NewSlice(abortTransactionCols, []result.Row{row(p.after, false, outcome+next)})
		res.Warns = warn
		return res, nil
	}
	if err := refuseLive(p); err != nil {
		return nil, err
	}
	spec := kafka.AbortSpec{TP: p.tp, ProducerID: p.state.ProducerID, ProducerEpoch: st.ProducerEpoch, CoordinatorEpoch: coordEpoch}
	if err := s.cl.AbortTransaction(ctx, p.m, spec); err != nil {
		return nil, fmt.Errorf("ABORT TRANSACTION: nothing was aborted: %w", err)
	}
	lso, hw, err := s.stableOffsets(ctx, p.m, p.tp)
	if err != nil {
		return nil, fmt.Errorf("the abort marker was written, but the offsets could not be read again: %w", err)
	}
	outcome := fmt.Sprintf("aborted: the LSO moved from %d to %d (high watermark %d); read_committed consumers skip the aborted records", p.lso, lso, hw)
	res := result.NewSlice(abortTransactionCols, []result.Row{row(lso, true, outcome)})
	res.Warns = warn
	return res, nil
}

// refuseLive refuses to write an abort marker for a transaction whose
// coordinator still lists this partition: it will end the transaction
// itself, at the latest at its timeout, and a marker written beside it
// would abort this partition's records while the producer may still commit
// its other partitions (the transaction would no longer be atomic). A
// verdict kql could not reach (unsure) is left to the operator: the dry run
// and the question say why.
func refuseLive(p *abortPlan) error {
	if p.verdict.hanging || p.verdict.unsure {
		return nil
	}
	return fmt.Errorf("ABORT TRANSACTION refused, nothing was written: producer %d's transaction on %s is not hanging: %s; "+
		"aborting this partition alone would break the transaction's atomicity if the producer commits: wait for its timeout, or stop the producer and let its coordinator abort it",
		p.state.ProducerID, p.tp, p.verdict.reason)
}

// abortQuestion is the shell's question before ABORT TRANSACTION ...
// EXECUTE, with where the last stable offset moves.
// An abort kql will refuse asks nothing (ask is false): the statement runs
// straight into the refusal, which says why.
func (s *Session) abortQuestion(ctx context.Context, st *lang.AbortTransaction) (question string, ask bool) {
	q := fmt.Sprintf("abort producer %d's transaction on %s/%d", st.ProducerID, lang.QuoteName(st.Topic), st.Partition)
	p, err := s.planAbort(ctx, st)
	if err != nil {
		return q + "?", true
	}
	if refuseLive(p) != nil {
		return "", false
	}
	q += fmt.Sprintf(": its records from offset %d are dropped for read_committed consumers, the LSO moves %d -> %d", p.state.TxnStartOffset, p.lso, p.after)
	if p.verdict.unsure {
		q += " (maybe NOT hanging: " + p.verdict.reason + ")"
	}
	return q + "?", true
}
