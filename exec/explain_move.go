package exec

import (
	"context"
	"fmt"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// explainMove plans the statements that move records: PRODUCE ... FROM
// FILE/STDIN and INSERT ... SELECT. Both end with the writer's requests:
// FindCoordinator for the transactional id, InitProducerId, then per
// transaction Produce to each partition's leader (batched per broker),
// AddPartitionsToTxn (brokers before KIP-890's transaction version 2) and
// EndTxn to the transaction coordinator, and after the last commit
// ListOffsets until what it wrote is readable (move_readable.go). An
// INSERT's source side is the plan of its SELECT.
func (s *Session) explainMove(ctx context.Context, p *planner, m *kafka.Metadata, stmt lang.Statement) (bool, error) {
	var parts []kafka.TopicPartition
	var kind, what string
	bounds := kafka.WriterConfig{MaxTxnRecords: insertTxnRecords}
	switch x := stmt.(type) {
	case *lang.Produce:
		if x.From == nil {
			return false, nil
		}
		with, err := s.cl.WithTopic(ctx, m, x.Topic)
		if err != nil {
			return true, err
		}
		m = with
		p.any("Metadata", x.Topic)
		p.registryLookup("key", x.KeySchema, s.Registry)
		p.registryLookup("value", x.ValueSchema, s.Registry)
		// What the PRODUCE does with it (import.go, importspill.go): one
		// decode, kept in a spill between the check and the write.
		src := "FILE " + x.From.File + " (read once: every record checked first and kept in a spill, then written; read again only if the spill fails)"
		switch {
		case x.From.Stdin:
			src = "STDIN (written as it is read)"
		case isStream(x.From.File):
			// What the PRODUCE does with it (importstream.go): one pass.
			src = "FILE " + x.From.File + " (not a regular file: read once, written as it is read)"
		}
		p.rows = append(p.rows, result.Row{p.step, "Read " + src, nil, "kql", "format " + x.From.Format})
		parts = partitionsOf(m.Topics[x.Topic])
		kind, what = "import", "the partitions the records go to"
		bounds = importWriterConfig(x.From.Stdin || isStream(x.From.File))
	case *lang.Insert:
		src, err := insertSource(x)
		if err != nil {
			return true, err
		}
		res, err := s.explain(ctx, &lang.Explain{Stmt: src})
		if err != nil {
			return true, err
		}
		for {
			row, ok := res.Next()
			if !ok {
				break
			}
			if st, ok := row[0].(int64); ok { // operator and note rows have no step
				p.step = st
			}
			p.rows = append(p.rows, row)
		}
		if x.TopicExpr != nil {
			p.rows = append(p.rows, result.Row{p.step, "Evaluate " + lang.FormatExpr(x.TopicExpr), nil, "kql", "each record's destination topic; its Metadata on first sight"})
			if x.Execute {
				p.rows = append(p.rows, result.Row{p.step, "Note", nil, "kql", "EXECUTE reads the source twice: every destination checked, then written"})
			}
			what = "each destination topic's partitions"
		} else {
			with, err := s.cl.WithTopic(ctx, m, x.Topic)
			if err != nil {
				return true, err
			}
			m = with
			p.any("Metadata", x.Topic)
			parts = partitionsOf(m.Topics[x.Topic])
			what = "the partitions the records go to"
			checkEach, err := s.insertPartitionCheck(ctx, x, m.Topics[x.Topic])
			if err != nil {
				return true, err
			}
			if checkEach && x.Execute {
				p.rows = append(p.rows, result.Row{p.step, "Note", nil, "kql", "EXECUTE reads the source twice: every record's partition checked, then written"})
			}
		}
		if !x.Execute {
			p.note("dry run: no request writes; add EXECUTE to write")
			return true, nil
		}
		kind = "insert"
	default:
		return false, nil
	}
	id := kafka.PeekTransactionalID(kind)
	coords, cfail, err := s.cl.FindTxnCoordinators(ctx, []string{id})
	if err != nil {
		return true, err
	}
	p.any("FindCoordinator", id+" (key type transaction)")
	// A cluster that never ran a transaction creates __transaction_state
	// on the first FindCoordinator: the plan then names the rule, not yet
	// the broker.
	coordRow := func(api, items string) {
		if ge := cfail[id]; ge != nil {
			p.rows = append(p.rows, result.Row{p.step, api, nil, "the transaction coordinator", items + " (not known yet: " + ge.Error() + ")"})
			return
		}
		p.rows = append(p.rows, result.Row{p.step, api, int64(coords[id]), m.Addr(coords[id]), items})
	}
	p.step++
	coordRow("InitProducerId", id)
	if parts != nil {
		p.leaders("Produce", m, parts)
	} else {
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "Produce", nil, "each partition's leader", what + ", one request per leader broker"})
	}
	coordRow("AddPartitionsToTxn", "only if the brokers lack transaction version 2 (KIP-890; there the Produce adds the partition): each partition new to the transaction")
	p.step++
	coordRow("EndTxn", fmt.Sprintf("%s, once per transaction of %s", id, txnBoundsText(bounds)))
	explainReadable(p, m, parts, what)
	return true, nil
}

// txnBoundsText says when a writer of cfg commits: "at most 200,000
// records, 32 MiB or 10s".
func txnBoundsText(cfg kafka.WriterConfig) string {
	bytes := cfg.MaxTxnBytes
	if bytes <= 0 {
		bytes = kafka.DefaultMaxTxnBytes
	}
	if cfg.MaxTxnAge > 0 {
		return fmt.Sprintf("at most %s records, %d MiB or %s", thousands(int64(cfg.MaxTxnRecords)), bytes>>20, cfg.MaxTxnAge)
	}
	return fmt.Sprintf("at most %s records or %d MiB", thousands(int64(cfg.MaxTxnRecords)), bytes>>20)
}
