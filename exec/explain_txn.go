package exec

import (
	"context"
	"fmt"
	"slices"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// explainTxn plans the transaction statements: exactly the requests they
// send, to the brokers they go to. Routes EXPLAIN can know from metadata
// (every broker, each partition's leader) and a FindCoordinator (one
// transactional id's coordinator) are named; routes that depend on what
// an earlier step answers (the coordinators of the listed ids) say so.
func (s *Session) explainTxn(ctx context.Context, p *planner, m *kafka.Metadata, stmt lang.Statement) error {
	// judge's steps: who lists the producers, then their coordinators.
	judgeSteps := func(what string) {
		p.any("Metadata", "brokers")
		everyBroker(p, m, "ListTransactions", what+" (each broker lists only the transactional ids it coordinates)")
		p.any("FindCoordinator", "their transactional ids, if any (key type transaction)")
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "DescribeTransactions", nil, "each transactional id's coordinator", "its transactional ids, if any, one request per coordinator"})
	}
	switch x := stmt.(type) {
	case *lang.ShowTransactions:
		p.any("Metadata", "brokers")
		everyBroker(p, m, "ListTransactions", "the transactional ids it coordinates")
		p.any("FindCoordinator", "the listed transactional ids (key type transaction)")
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "DescribeTransactions", nil, "each transactional id's coordinator", "its listed ids, one request per coordinator"})
	case *lang.DescribeTransaction:
		coords, cfail, err := s.cl.FindTxnCoordinators(ctx, []string{x.ID})
		if err != nil {
			return err
		}
		if ge := cfail[x.ID]; ge != nil {
			return fmt.Errorf("EXPLAIN cannot route DESCRIBE TRANSACTION: %w", ge)
		}
		p.any("FindCoordinator", x.ID+" (key type transaction)")
		p.perBroker("DescribeTransactions", m, map[int32][]string{coords[x.ID]: {x.ID}})
		p.any("Metadata", "the transaction's topics")
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "DescribeProducers", nil, "each partition's leader", "the transaction's partitions, one request per leader broker"})
	case *lang.ShowHangingTransactions:
		what := "all topics"
		var parts []kafka.TopicPartition
		if x.Topic != nil {
			what = *x.Topic
			with, err := s.cl.WithTopic(ctx, m, *x.Topic)
			if err != nil {
				return err
			}
			m = with
		}
		for _, name := range m.TopicNames() {
			if x.Topic == nil || name == *x.Topic {
				parts = append(parts, partitionsOf(m.Topics[name])...)
			}
		}
		p.any("Metadata", what)
		for batch := range slices.Chunk(parts, 500) { // kafka.DescribeProducers' rounds
			p.leaders("DescribeProducers", m, batch)
		}
		judgeSteps("the producers of open transactions older than the threshold, if any")
	case *lang.AbortTransaction:
		with, err := s.cl.WithTopic(ctx, m, x.Topic)
		if err != nil {
			return err
		}
		m = with
		parts, err := pickPartitions(m.Topics[x.Topic], []int32{x.Partition}, "PARTITION")
		if err != nil {
			return err
		}
		p.any("Metadata", x.Topic)
		p.leaders("DescribeProducers", m, parts)
		p.leaders("ListOffsets", m, parts)
		p.step--
		p.leaders("ListOffsets", m, parts) // read_committed and read_uncommitted, concurrently
		judgeSteps(fmt.Sprintf("producer %d", x.ProducerID))
		if x.Execute {
			p.leaders("WriteTxnMarkers", m, parts)
			p.leaders("ListOffsets", m, parts)
			p.step--
			p.leaders("ListOffsets", m, parts)
		}
	}
	return nil
}
