package exec

import (
	"context"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// openTxn is a transactional producer left open: it began a transaction,
// wrote one record to each of two partitions led by different brokers, and
// never ends it (its coordinator aborts it at its timeout; the test's
// cleanup aborts it first).
type openTxnProducer struct {
	id          string
	pid         int64
	epoch       int16
	coordinator int32
	parts       []int32 // the two partitions it wrote, led by different brokers
	timeout     time.Duration
}

const openTxnTimeout = 2 * time.Minute

func leaveTxnOpen(t *testing.T, b kafkatest.Backend, topic string, leaders map[int32]int32) openTxnProducer {
	t.Helper()
	ctx := ctxT(t)
	var parts []int32
	used := map[int32]bool{}
	for p := int32(0); p < 6 && len(parts) < 2; p++ {
		if !used[leaders[p]] {
			used[leaders[p]] = true
			parts = append(parts, p)
		}
	}
	require.Len(t, parts, 2, "two partitions led by different brokers, in %v", leaders)
	id := kafkatest.GroupName(t) + "-txn"
	cl := kafkatest.Client(t, b, kgo.TransactionalID(id), kgo.TransactionTimeout(openTxnTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	require.NoError(t, cl.BeginTransaction())
	for _, p := range parts {
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte("open")}).FirstErr())
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cl.EndTransaction(ctx, kgo.TryAbort) // leave nothing open for the next test
	})
	adm := kadm.NewClient(kafkatest.Client(t, b))
	described, err := adm.DescribeTransactions(ctx, id)
	require.NoError(t, err)
	d, ok := described[id]
	require.True(t, ok)
	require.NoError(t, d.Err)
	coords := adm.FindTxnCoordinators(ctx, id)
	require.NoError(t, coords[id].Err)
	return openTxnProducer{id: id, pid: d.ProducerID, epoch: d.ProducerEpoch, coordinator: coords[id].NodeID, parts: parts, timeout: openTxnTimeout}
}

// carrying returns how many requests of api that carried item went to each
// broker.
func (tr *tracer) carrying(api, item string) map[int32]int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	out := map[int32]int{}
	for _, e := range tr.events {
		if e.API == api && slices.Contains(e.Items, item) {
			out[e.Broker]++
		}
	}
	return out
}

func rowFor(rows []result.Row, col int, v any) (result.Row, bool) {
	for _, r := range rows {
		if r[col] == v {
			return r, true
		}
	}
	return nil, false
}

// TestOpenTransactionIsListedDescribedAndNotHanging: a live producer's open
// transaction shows in SHOW TRANSACTIONS and DESCRIBE TRANSACTION with both
// its partitions, holds back both partitions' last stable offset, and is
// not hanging: its coordinator still lists those partitions. Every request
// goes where Kafka answers it, which the trace checks broker by broker.
func TestOpenTransactionIsListedDescribedAndNotHanging(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic, leaders := spreadTopic(t, b, 3)
		txn := leaveTxnOpen(t, b, topic, leaders)
		brokers := map[int32]int{}
		for _, br := range b.Brokers() {
			brokers[br.ID] = 1
		}

		tr.reset()
		rows, _ := mustRun(t, s, &lang.ShowTransactions{})
		row, ok := rowFor(rows, 0, txn.id)
		require.True(t, ok, "SHOW TRANSACTIONS lists %s: %v", txn.id, rows)
		require.Equal(t, result.Row{txn.id, txn.pid, int64(txn.epoch), "Ongoing", txn.timeout.Milliseconds(), int64(txn.coordinator)}, row)
		require.Equal(t, brokers, tr.count("ListTransactions"), "one ListTransactions per broker: each lists only what it coordinates")
		require.Equal(t, map[int32]int{txn.coordinator: 1}, tr.carrying("DescribeTransactions", txn.id), "DescribeTransactions goes to the coordinator only")

		tr.reset()
		rows, _ = mustRun(t, s, &lang.DescribeTransaction{ID: txn.id})
		require.Len(t, rows, 2, "one row per partition in the transaction: %v", rows)
		wantLeaders := map[int32]int{}
		for i, p := range txn.parts {
			r := rows[i]
			require.Equal(t, result.Row{txn.id, int64(txn.coordinator), txn.pid, int64(txn.epoch), "Ongoing", txn.timeout.Milliseconds()}, r[:6])
			require.IsType(t, time.Time{}, r[6], "started")
			require.Equal(t, []any{topic, int64(p)}, []any(r[7:9]))
			require.IsType(t, time.Time{}, r[9], "last_update: the leader's last write of this producer")
			require.Equal(t, int64(3), r[10], "start_offset: the transaction's first record follows the 3 committed ones")
			wantLeaders[leaders[p]] = 1
		}
		require.Equal(t, map[int32]int{txn.coordinator: 1}, tr.count("DescribeTransactions"))
		require.Equal(t, wantLeaders, tr.count("DescribeProducers"), "DescribeProducers goes to the two partitions' leaders")

		rows, _ = mustRun(t, s, &lang.DescribeTopic{Topic: topic})
		for _, r := range rows {
			if slices.Contains(txn.parts, int32(r[0].(int64))) {
				require.Equal(t, []any{int64(4), int64(3), int64(1)}, []any{r[5], r[7], r[8]}, "latest_offset, lso, lso_lag of partition %v held by the open transaction", r[0])
			} else {
				require.Equal(t, []any{int64(3), int64(3), int64(0)}, []any{r[5], r[7], r[8]}, "latest_offset, lso, lso_lag of partition %v", r[0])
			}
		}

		time.Sleep(20 * time.Millisecond)
		tr.reset()
		older := time.Millisecond
		rows, res := mustRun(t, s, &lang.ShowHangingTransactions{Topic: &topic, OlderThan: &older})
		require.Empty(t, rows, "a transaction its coordinator still lists is not hanging")
		require.NoError(t, res.Err())
		require.Equal(t, brokers, tr.count("DescribeProducers"), "one DescribeProducers per leader broker (the topic has leaders on all)")
		require.Equal(t, brokers, tr.count("ListTransactions"))
		require.Equal(t, map[int32]int{txn.coordinator: 1}, tr.carrying("DescribeTransactions", txn.id))

		rows, _ = mustRun(t, s, &lang.Explain{Stmt: &lang.DescribeTransaction{ID: txn.id}})
		require.Contains(t, rows, result.Row{int64(2), "DescribeTransactions", int64(txn.coordinator), addrOf(b, txn.coordinator), txn.id})
		rows, _ = mustRun(t, s, &lang.Explain{Stmt: &lang.ShowTransactions{}})
		n := 0
		for _, r := range rows {
			if r[1] == "ListTransactions" {
				n++
			}
		}
		require.Equal(t, len(brokers), n, "EXPLAIN SHOW TRANSACTIONS names every broker")

		if r, ok := b.(*kafkatest.Real); ok {
			compareWithTransactionsCommand(t, r, s, txn, topic)
		}
	})
}

func addrOf(b kafkatest.Backend, id int32) string {
	for _, br := range b.Brokers() {
		if br.ID == id {
			return br.Addr
		}
	}
	return ""
}

// toolRows parses TransactionsCommand's table (a header line, then one
// line per row, columns separated by tabs and padded with spaces).
func toolRows(t *testing.T, out string) []map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.NotEmpty(t, lines, "no header in %q", out)
	split := func(l string) []string {
		var cells []string
		for _, c := range strings.Split(strings.TrimRight(l, "\t"), "\t") {
			cells = append(cells, strings.TrimSpace(c))
		}
		return cells
	}
	head := split(lines[0])
	var rows []map[string]string
	for _, l := range lines[1:] {
		cells := split(l)
		require.Len(t, cells, len(head), "row %q against header %q", l, lines[0])
		row := map[string]string{}
		for i, h := range head {
			row[h] = cells[i]
		}
		rows = append(rows, row)
	}
	return rows
}

const transactionsCommand = "org.apache.kafka.tools.TransactionsCommand"

func runTransactionsCommand(t *testing.T, r *kafkatest.Real, args ...string) []map[string]string {
	t.Helper()
	out, err := r.RunTool(ctxT(t), transactionsCommand, append([]string{"--bootstrap-server", strings.Join(r.Bootstrap(), ",")}, args...)...)
	require.NoError(t, err)
	return toolRows(t, out)
}

// compareWithTransactionsCommand: kql's answers for the open transaction
// equal kafka-transactions.sh list, describe and find-hanging on the same
// cluster.
func compareWithTransactionsCommand(t *testing.T, r *kafkatest.Real, s *Session, txn openTxnProducer, topic string) {
	ours, _ := mustRun(t, s, &lang.ShowTransactions{})
	listed := runTransactionsCommand(t, r, "list")
	var theirs []string
	for _, l := range listed {
		if strings.HasPrefix(l["TransactionalId"], txn.id) {
			theirs = append(theirs, fmt.Sprintf("%s %s %s %s", l["TransactionalId"], l["Coordinator"], l["ProducerId"], l["TransactionState"]))
		}
	}
	var mine []string
	for _, row := range ours {
		if strings.HasPrefix(row[0].(string), txn.id) {
			mine = append(mine, fmt.Sprintf("%s %d %d %s", row[0], row[5], row[1], row[3]))
		}
	}
	require.NotEmpty(t, mine)
	require.Equal(t, theirs, mine, "SHOW TRANSACTIONS = kafka-transactions.sh list")

	described := runTransactionsCommand(t, r, "describe", "--transactional-id", txn.id)
	require.Len(t, described, 1)
	d := described[0]
	rows, _ := mustRun(t, s, &lang.DescribeTransaction{ID: txn.id})
	var parts []string
	for _, row := range rows {
		parts = append(parts, fmt.Sprintf("%s-%d", row[7], row[8]))
	}
	theirParts := strings.Split(d["TopicPartitions"], ",")
	slices.Sort(theirParts)
	require.Equal(t, theirParts, parts, "DESCRIBE TRANSACTION's partitions = kafka-transactions.sh describe's")
	row := rows[0]
	require.Equal(t,
		[]string{d["CoordinatorId"], d["ProducerId"], d["ProducerEpoch"], d["TransactionState"], d["TransactionTimeoutMs"], d["CurrentTransactionStartTimeMs"]},
		[]string{fmt.Sprint(row[1]), fmt.Sprint(row[2]), fmt.Sprint(row[3]), row[4].(string), fmt.Sprint(row[5]), fmt.Sprint(row[6].(time.Time).UnixMilli())},
		"DESCRIBE TRANSACTION = kafka-transactions.sh describe")

	hanging := runTransactionsCommand(t, r, "find-hanging", "--topic", topic, "--max-transaction-timeout", "0")
	require.Empty(t, hanging, "kafka-transactions.sh find-hanging does not call it hanging either")
}

// TestHangingWhenTheCoordinatorDescribesTheTransactionWithoutThePartition
// holds kfake's DescribeTransactions answer (the coordinator forgot the
// partitions) and then its ListTransactions answer (no coordinator knows
// the producer): the open transaction is then hanging, for the reason each
// row gives. A broker that does not answer ListTransactions leaves the
// verdict open and the result partial, never a guess.
func TestHangingWhenTheCoordinatorForgotThePartition(t *testing.T) {
	f := kafkatest.NewFake(t)
	s, _ := session(t, f)
	topic, leaders := spreadTopic(t, f, 1)
	txn := leaveTxnOpen(t, f, topic, leaders)
	older := time.Millisecond
	time.Sleep(20 * time.Millisecond)
	hanging := &lang.ShowHangingTransactions{Topic: &topic, OlderThan: &older}

	// One control per API for the whole test (DropControl only works from
	// inside a control function): mode says which answer kfake gives.
	var mode atomic.Int32
	const forgotPartitions, listsNothing, brokerOneSilent = 1, 2, 3
	f.ControlKey(int16(kmsg.DescribeTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if mode.Load() != forgotPartitions {
			return nil, nil, false
		}
		resp := req.(*kmsg.DescribeTransactionsRequest).ResponseKind().(*kmsg.DescribeTransactionsResponse)
		for _, id := range req.(*kmsg.DescribeTransactionsRequest).TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID, st.State, st.ProducerID, st.ProducerEpoch = id, "Empty", txn.pid, txn.epoch
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
	f.ControlKey(int16(kmsg.ListTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		switch mode.Load() {
		case listsNothing:
			return req.ResponseKind(), nil, true
		case brokerOneSilent:
			resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
			if f.CurrentNode() == 1 {
				resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
			return resp, nil, true
		}
		return nil, nil, false
	})

	mode.Store(forgotPartitions)
	rows, res := mustRun(t, s, hanging)
	require.NoError(t, res.Err())
	require.Len(t, rows, 2, "both partitions of the transaction hang: %v", rows)
	for i, p := range txn.parts {
		require.Equal(t, []any{topic, int64(p), txn.pid, int64(txn.epoch)}, []any(rows[i][:4]))
		require.Equal(t, int64(1), rows[i][5], "start_offset")
		require.Equal(t, txn.id, rows[i][8])
		require.Contains(t, rows[i][9], fmt.Sprintf("without %s/%d: it will never write this partition's marker", topic, p))
	}

	mode.Store(listsNothing)
	rows, _ = mustRun(t, s, hanging)
	require.Len(t, rows, 2)
	require.Nil(t, rows[0][8], "no transactional id")
	require.Contains(t, rows[0][9], fmt.Sprintf("no coordinator lists producer %d", txn.pid))

	// Broker 1 does not answer; the others do not list the producer (as
	// real Kafka's other brokers would not, were broker 1 its coordinator).
	mode.Store(brokerOneSilent)
	rows, res, _ = run(t, s, hanging)
	require.Len(t, rows, 2)
	require.Contains(t, rows[0][9], "cannot tell", "an unanswered broker might coordinate it")
	require.Contains(t, rows[0][9], "broker 1 did not answer ListTransactions")
	require.True(t, result.IsPartial(res.Err()), "the result is partial: %v", res.Err())
	require.ErrorContains(t, res.Err(), "ListTransactions to broker 1")

	// ABORT's dry run then warns that kql cannot tell, not that it is not
	// hanging, and leaves EXECUTE to the operator.
	rows, res = mustRun(t, s, &lang.AbortTransaction{Topic: topic, Partition: txn.parts[0], ProducerID: txn.pid, ProducerEpoch: txn.epoch})
	warns := strings.Join(res.Stats().Warnings(), "\n")
	require.Contains(t, warns, "broker 1 did not answer ListTransactions")
	require.False(t, strings.HasPrefix(warns, "not hanging"), "kql does not know it is not hanging: %s", warns)
	require.Contains(t, warns, "maybe not hanging")
	require.Contains(t, rows[0][10], "add EXECUTE to abort")

	// SHOW TRANSACTIONS without broker 1's answer is partial and names it.
	rows, res, _ = run(t, s, &lang.ShowTransactions{})
	require.Empty(t, rows)
	require.True(t, result.IsPartial(res.Err()), "the result is partial: %v", res.Err())
	require.ErrorContains(t, res.Err(), "ListTransactions to broker 1")
	require.ErrorContains(t, res.Err(), "each broker lists only the transactional ids it coordinates")
}

// TestAbortTransactionDryRunAndExecute on kfake: the dry run says where the
// last stable offset goes and warns that this one is not hanging; EXECUTE
// of it is refused while its coordinator lists the partition, and once none
// does, writes the marker on the partition's leader and the LSO moves there.
func TestAbortTransactionDryRunAndExecute(t *testing.T) {
	f := kafkatest.NewFake(t)
	s, tr := session(t, f)
	topic, leaders := spreadTopic(t, f, 2)
	txn := leaveTxnOpen(t, f, topic, leaders)
	p := txn.parts[1]
	abort := &lang.AbortTransaction{Topic: topic, Partition: p, ProducerID: txn.pid, ProducerEpoch: txn.epoch}

	require.False(t, NeedsConfirmation(abort), "a dry run never asks")
	rows, res := mustRun(t, s, abort)
	require.Equal(t, result.Row{topic, int64(p), txn.pid, int64(txn.epoch), int64(0), int64(2), int64(2), int64(3), int64(4), false}, rows[0][:10])
	require.Contains(t, rows[0][10], "read_committed consumers stop at offset 2")
	require.Contains(t, rows[0][10], "read on to offset 4")
	require.Contains(t, strings.Join(res.Stats().Warnings(), "\n"), "not hanging: its coordinator")
	require.Empty(t, tr.count("WriteTxnMarkers"), "a dry run writes nothing")

	exec := *abort
	exec.Execute = true
	require.True(t, NeedsConfirmation(&exec))
	// Its coordinator still lists the partition: a marker written now
	// would abort this partition's records while the producer may still
	// commit the others, so EXECUTE is refused and nothing is written.
	_, ask := s.Confirmation(ctxT(t), &exec)
	require.False(t, ask, "nothing to ask: kql refuses it")
	tr.reset()
	_, _, err := run(t, s, &exec)
	require.ErrorContains(t, err, "refused")
	require.ErrorContains(t, err, fmt.Sprintf("its coordinator (broker %d)", txn.coordinator))
	require.Empty(t, tr.count("WriteTxnMarkers"), "a refused abort writes nothing")

	// Once no coordinator lists the producer, it is hanging and EXECUTE
	// writes the marker.
	f.ControlKey(int16(kmsg.ListTransactions), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		return req.ResponseKind(), nil, true
	})
	q, ask := s.Confirmation(ctxT(t), &exec)
	require.True(t, ask)
	require.Contains(t, q, "the LSO moves 2 -> 4")
	require.NotContains(t, q, "NOT hanging")
	tr.reset()
	rows, _ = mustRun(t, s, &exec)
	require.Equal(t, map[int32]int{leaders[p]: 1}, tr.count("WriteTxnMarkers"), "the marker goes to the partition's leader")
	require.Equal(t, []any{int64(4), true}, []any{rows[0][8], rows[0][9]}, "lso_after, executed")
	drows, _ := mustRun(t, s, &lang.DescribeTopic{Topic: topic})
	require.Equal(t, []any{int64(4), int64(4), int64(0)}, []any{drows[p][5], drows[p][7], drows[p][8]}, "latest_offset, lso, lso_lag after the abort")

	plan, _ := mustRun(t, s, &lang.Explain{Stmt: &exec})
	var routed []string
	for _, r := range plan {
		if r[1] == "WriteTxnMarkers" || r[1] == "DescribeProducers" {
			routed = append(routed, fmt.Sprintf("%v %v %v", r[1], r[2], r[4]))
		}
	}
	require.Equal(t, []string{
		fmt.Sprintf("DescribeProducers %d %s/%d", leaders[p], topic, p),
		fmt.Sprintf("WriteTxnMarkers %d %s/%d", leaders[p], topic, p),
	}, routed, "EXPLAIN names the partition's leader for both")

	_, _, err = run(t, s, &lang.AbortTransaction{Topic: topic, Partition: p, ProducerID: txn.pid, ProducerEpoch: txn.epoch + 1})
	require.ErrorContains(t, err, fmt.Sprintf("has epoch %d, not %d", txn.epoch, txn.epoch+1))
	_, _, err = run(t, s, &lang.AbortTransaction{Topic: topic, Partition: txn.parts[0], ProducerID: txn.pid + 100, ProducerEpoch: 0})
	require.ErrorContains(t, err, fmt.Sprintf("has no active producer %d", txn.pid+100))
	_, _, err = run(t, s, &lang.AbortTransaction{Topic: topic, Partition: 9, ProducerID: txn.pid, ProducerEpoch: 0})
	require.ErrorContains(t, err, "has no partition 9")
}

// hangingBatch is one transactional record batch of pid/epoch, built with
// kmsg's types: the length and CRC-32C (over everything after the CRC
// field) are what kgo computes for every batch it sends.
func hangingBatch(pid int64, epoch int16, ts time.Time, value string) []byte {
	rec := kmsg.Record{Value: []byte(value)}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // less the 1-byte varint of Length 0
	records := rec.AppendTo(nil)
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2,
		Attributes:     0x10, // transactional
		FirstTimestamp: ts.UnixMilli(), MaxTimestamp: ts.UnixMilli(),
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: 0,
		NumRecords: 1, Records: records,
	}
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12) // less FirstOffset and Length
	raw = b.AppendTo(nil)
	b.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b.AppendTo(nil)
}

// makeHanging writes what a hanging transaction is: a producer id and
// epoch from InitProducerID, then a transactional batch written to the
// partition's leader with no AddPartitionsToTxn first, so the coordinator
// never hears of the partition. Brokers refuse that by default
// (transaction.partition.verification.enable, KIP-890), so the test turns
// the check off as a dynamic cluster default for its duration; Produce v11
// is the last version without the implicit add of KIP-890's part 2. The
// record is backdated an hour, past find-hanging's 15 minutes.
func makeHanging(t *testing.T, r *kafkatest.Real, s *Session, topic string, p, leader int32) (id string, pid int64, epoch int16, written time.Time) {
	t.Helper()
	ctx := ctxT(t)
	cluster := lang.ConfigResource{Kind: lang.ResourceCluster}
	const verification = "transaction.partition.verification.enable"
	mustRun(t, s, &lang.AlterConfigs{Resource: cluster, Set: []lang.TopicConfig{{Name: verification, Value: "false"}}})
	t.Cleanup(func() {
		if _, err := s.Execute(context.Background(), &lang.AlterConfigs{Resource: cluster, Unset: []string{verification}}); err != nil {
			t.Errorf("putting back %s: %v", verification, err)
		}
	})

	id = kafkatest.GroupName(t) + "-hanging"
	cl := kafkatest.Client(t, r)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID = &id
	init.TransactionTimeoutMillis = 60000
	init.ProducerID, init.ProducerEpoch = -1, -1
	var iresp *kmsg.InitProducerIDResponse
	require.Eventually(t, func() bool { // the coordinator may still be loading
		var err error
		iresp, err = init.RequestWith(ctx, cl) // kgo sends it to the transaction coordinator
		return err == nil && iresp.ErrorCode == 0
	}, 20*time.Second, 200*time.Millisecond)
	pid, epoch = iresp.ProducerID, iresp.ProducerEpoch

	versions := kversion.Stable()
	versions.SetMaxKeyVersion(int16(kmsg.Produce), 11)
	v11 := kafkatest.Client(t, r, kgo.MaxVersions(versions))
	written = time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID = &id
	req.Acks = -1
	req.TimeoutMillis = 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = p
	rp.Records = hangingBatch(pid, epoch, written, "hanging")
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	var last string
	ok := assertEventually(20*time.Second, func() bool { // until every broker has the new default
		raw, err := v11.Broker(int(leader)).Request(ctx, req)
		if err != nil {
			last = err.Error()
			return false
		}
		resp := raw.(*kmsg.ProduceResponse)
		if resp.Version != 11 {
			last = fmt.Sprintf("Produce went as v%d", resp.Version)
			return false
		}
		code := resp.Topics[0].Partitions[0].ErrorCode
		last = fmt.Sprint(kerr.ErrorForCode(code))
		return code == 0
	})
	require.True(t, ok, "the hanging write was refused: %s", last)
	return id, pid, epoch, written
}

func assertEventually(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestHangingTransactionIsFoundAndAbortedOnRealKafka: a write no
// coordinator heard of holds the partition's last stable offset for good,
// so read_committed readers stop before it. SHOW HANGING TRANSACTIONS
// finds it as kafka-transactions.sh find-hanging does, and ABORT ...
// EXECUTE moves the LSO to the high watermark: CONSUME (read_committed)
// then reads the records committed after it.
func TestHangingTransactionIsFoundAndAbortedOnRealKafka(t *testing.T) {
	r := kafkatest.Shared(t)
	s, tr := session(t, r)
	topic, leaders := spreadTopic(t, r, 2)
	const p = int32(1)
	id, pid, epoch, written := makeHanging(t, r, s, topic, p, leaders[p])
	prod := kafkatest.Client(t, r, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	for i := range 3 {
		require.NoError(t, prod.ProduceSync(ctxT(t), &kgo.Record{Partition: p, Value: []byte(fmt.Sprintf("after-%d", i))}).FirstErr())
	}
	readCommitted := func() []string {
		var vals []string
		for _, row := range consumeAll(t, s, &lang.Consume{Topic: topic, Partitions: []int32{p}}) {
			vals = append(vals, string(row[4].([]byte)))
		}
		return vals
	}
	require.Equal(t, []string{"1-0", "1-1"}, readCommitted(), "a read_committed reader stops at the hanging transaction")
	rows, _ := mustRun(t, s, &lang.DescribeTopic{Topic: topic})
	require.Equal(t, []any{int64(6), int64(2), int64(4)}, []any{rows[p][5], rows[p][7], rows[p][8]}, "latest_offset, lso, lso_lag: the LSO is stuck at the hanging write")

	tr.reset()
	rows, res := mustRun(t, s, &lang.ShowHangingTransactions{Topic: &topic})
	require.NoError(t, res.Err())
	require.Len(t, rows, 1, "%v", rows)
	h := rows[0]
	require.Equal(t, result.Row{topic, int64(p), pid, int64(epoch), int64(-1), int64(2), written, int64(60), id}, h[:9])
	require.Contains(t, h[9], fmt.Sprintf("has transactional id %q (state Empty", id))
	require.Contains(t, h[9], fmt.Sprintf("without %s/%d", topic, p))
	require.Len(t, tr.count("DescribeProducers"), 3, "DescribeProducers went to each leader broker")

	found := runTransactionsCommand(t, r, "find-hanging", "--topic", topic)
	require.Len(t, found, 1, "kafka-transactions.sh find-hanging finds the same one")
	f := found[0]
	require.Equal(t,
		[]string{f["Topic"], f["Partition"], f["ProducerId"], f["ProducerEpoch"], f["CoordinatorEpoch"], f["StartOffset"], f["LastTimestamp"], f["Duration(min)"]},
		[]string{topic, fmt.Sprint(p), fmt.Sprint(pid), fmt.Sprint(epoch), "-1", "2", fmt.Sprint(written.UnixMilli()), "60"},
		"SHOW HANGING TRANSACTIONS = kafka-transactions.sh find-hanging")

	abort := &lang.AbortTransaction{Topic: topic, Partition: p, ProducerID: pid, ProducerEpoch: epoch}
	rows, res = mustRun(t, s, abort)
	require.Equal(t, result.Row{topic, int64(p), pid, int64(epoch), int64(0), int64(2), int64(2), int64(6), int64(7), false}, rows[0][:10])
	require.Empty(t, res.Stats().Warnings(), "no warning: it is hanging")
	require.Equal(t, []string{"1-0", "1-1"}, readCommitted(), "the dry run changed nothing")

	tr.reset()
	abort.Execute = true
	rows, _ = mustRun(t, s, abort)
	require.Equal(t, map[int32]int{leaders[p]: 1}, tr.count("WriteTxnMarkers"), "the abort marker goes to the partition's leader")
	require.Equal(t, []any{int64(7), true}, []any{rows[0][8], rows[0][9]})
	rows, _ = mustRun(t, s, &lang.DescribeTopic{Topic: topic})
	require.Equal(t, []any{int64(7), int64(7), int64(0)}, []any{rows[p][5], rows[p][7], rows[p][8]}, "the LSO is the high watermark again")
	require.Equal(t, []string{"1-0", "1-1", "after-0", "after-1", "after-2"}, readCommitted(),
		"read_committed reads past the aborted record to the end")
	rows, _ = mustRun(t, s, &lang.ShowHangingTransactions{Topic: &topic})
	require.Empty(t, rows)
	require.Empty(t, runTransactionsCommand(t, r, "find-hanging", "--topic", topic))
}

// TestDescribeTransactionWithNothingOpen: a committed transactional id is
// one row with NULL partition columns (its state, epoch and timeout are
// still the coordinator's; Kafka keeps the last start time), never an
// empty grid; an id no coordinator knows is an error that says so.
func TestDescribeTransactionWithNothingOpen(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		topic := kafkatest.TopicName(t)
		kafkatest.CreateTopic(t, b, topic, 1, 3, nil)
		id := kafkatest.GroupName(t) + "-done"
		cl := kafkatest.Client(t, b, kgo.TransactionalID(id), kgo.DefaultProduceTopic(topic))
		require.NoError(t, cl.BeginTransaction())
		require.NoError(t, cl.ProduceSync(ctxT(t), &kgo.Record{Value: []byte("v")}).FirstErr())
		require.NoError(t, cl.EndTransaction(ctxT(t), kgo.TryCommit))

		var rows []result.Row
		require.Eventually(t, func() bool { // the coordinator completes the commit after answering EndTxn
			rows, _ = mustRun(t, s, &lang.DescribeTransaction{ID: id})
			return len(rows) == 1 && (rows[0][4] == "Empty" || rows[0][4] == "CompleteCommit") // kfake, Kafka
		}, 10*time.Second, 100*time.Millisecond, "one row, the transaction complete: %v", rows)
		require.Nil(t, rows[0][7], "topic")
		require.Equal(t, []any{nil, nil, nil}, []any(rows[0][8:]))

		_, _, err := run(t, s, &lang.DescribeTransaction{ID: id + "-never"})
		require.ErrorContains(t, err, fmt.Sprintf("no transactional id %q", id+"-never"))
	})
}

// TestShowHangingAsksEachLeaderInBatches: DescribeProducers carries at most
// 500 partitions, as find-hanging's batches, and still one request per
// leader broker per batch, never one per partition.
func TestShowHangingAsksEachLeaderInBatches(t *testing.T) {
	f := newFake(t)
	f.spread(t, "wide", 600)
	f.trace.reset()
	topic := "wide"
	rows, _ := mustRun(t, f.sess, &lang.ShowHangingTransactions{Topic: &topic})
	require.Empty(t, rows)
	require.Equal(t, map[int32]int{0: 2, 1: 2, 2: 2}, f.trace.count("DescribeProducers"))
	plan, _ := mustRun(t, f.sess, &lang.Explain{Stmt: &lang.ShowHangingTransactions{Topic: &topic}})
	steps := map[any]int{}
	for _, r := range plan {
		if r[1] == "DescribeProducers" {
			steps[r[0]]++
		}
	}
	require.Equal(t, map[any]int{int64(2): 3, int64(3): 3}, steps, "EXPLAIN shows the two rounds, one request per leader each")
	f.trace.mu.Lock()
	defer f.trace.mu.Unlock()
	for _, e := range f.trace.events {
		if e.API == "DescribeProducers" {
			require.LessOrEqual(t, len(e.Items), 500)
		}
	}
}

// TestDescribeTopicLSOWithNoAnswerIsNull: when only the read_committed
// ListOffsets fails (kfake's answer held for broker 1), that partition's
// lso and lso_lag are NULL, never 0 or a lag made up from the high
// watermark alone; its other offsets stay and the result is partial.
func TestDescribeTopicLSOWithNoAnswerIsNull(t *testing.T) {
	f := kafkatest.NewFake(t)
	s, _ := session(t, f)
	topic, leaders := spreadTopic(t, f, 2)
	f.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		r := req.(*kmsg.ListOffsetsRequest)
		if r.IsolationLevel != 1 || f.CurrentNode() != 1 {
			return nil, nil, false
		}
		return kafkatest.ListOffsetsFailing(r, kerr.UnknownServerError.Code), nil, true
	})
	rows, _, err := run(t, s, &lang.DescribeTopic{Topic: topic})
	require.True(t, result.IsPartial(err), "partial: %v", err)
	require.ErrorContains(t, err, "on broker 1 (")
	require.Len(t, rows, 6)
	for _, r := range rows {
		if leaders[int32(r[0].(int64))] == 1 {
			require.Equal(t, []any{int64(2), nil, nil}, []any{r[5], r[7], r[8]}, "latest_offset kept, lso and lso_lag NULL: partition %v", r[0])
		} else {
			require.Equal(t, []any{int64(2), int64(2), int64(0)}, []any{r[5], r[7], r[8]}, "partition %v", r[0])
		}
	}
}

// TestDescribeTopicLSOLagIsNeverNegative: DESCRIBE TOPIC reads the last
// stable offset before the high watermark, so records produced between the
// two answers can never make lso_lag negative (the LSO is at most the high
// watermark). kfake holds broker 1's read_committed ListOffsets until its
// latest ListOffsets has been taken, and produces a record while holding it;
// read in the other order the lag would be -1. (When the LSO is asked first,
// the latest one never comes while it is held, and the hold ends after 1 s.)
func TestDescribeTopicLSOLagIsNeverNegative(t *testing.T) {
	f := kafkatest.NewFake(t)
	s, _ := session(t, f)
	topic, leaders := spreadTopic(t, f, 2)
	var p1 int32 = -1
	for p, l := range leaders {
		if l == 1 && (p1 < 0 || p < p1) {
			p1 = p
		}
	}
	prod := kafkatest.Client(t, f, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	latestSeen := make(chan struct{})
	var seen, held atomic.Bool
	f.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		r := req.(*kmsg.ListOffsetsRequest)
		if f.CurrentNode() != 1 || len(r.Topics) == 0 || r.Topics[0].Topic != topic || r.Topics[0].Partitions[0].Timestamp != -1 {
			return nil, nil, false
		}
		if r.IsolationLevel == 0 {
			if seen.CompareAndSwap(false, true) {
				close(latestSeen)
			}
			return nil, nil, false
		}
		if held.CompareAndSwap(false, true) {
			f.SleepControl(func() {
				select {
				case <-latestSeen:
					prod.ProduceSync(context.Background(), &kgo.Record{Partition: p1, Value: []byte("between")})
				case <-time.After(time.Second):
				}
			})
		}
		return nil, nil, false
	})
	rows, _ := mustRun(t, s, &lang.DescribeTopic{Topic: topic})
	for _, r := range rows {
		require.GreaterOrEqual(t, r[8].(int64), int64(0), "lso_lag of partition %v: latest_offset %v, lso %v", r[0], r[5], r[7])
	}
}
