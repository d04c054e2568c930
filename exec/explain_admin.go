package exec

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// explainAdmin plans the administration statements. It reports false for a
// statement it does not know.
func (s *Session) explainAdmin(ctx context.Context, p *planner, m *kafka.Metadata, stmt lang.Statement) (bool, error) {
	var err error
	// A config resource's topic is looked up by name when the all-topics
	// answer lacks it (a topic created a moment ago).
	topicOf := func(r lang.ConfigResource) error {
		if r.Kind == lang.ResourceTopic {
			m, err = s.cl.WithTopic(ctx, m, r.Topic)
		}
		return err
	}
	switch x := stmt.(type) {
	case *lang.ShowConfigs:
		if err := topicOf(x.Resource); err != nil {
			return true, err
		}
		if err := configRoute(p, m, "DescribeConfigs", x.Resource); err != nil {
			return true, err
		}
	case *lang.AlterConfigs:
		if err := topicOf(x.Resource); err != nil {
			return true, err
		}
		for _, api := range []string{"DescribeConfigs", "IncrementalAlterConfigs", "DescribeConfigs"} {
			if err := configRoute(p, m, api, x.Resource); err != nil {
				return true, err
			}
		}
	case *lang.AlterPartitions:
		if m, err = s.cl.WithTopic(ctx, m, x.Topic); err != nil {
			return true, err
		}
		p.any("Metadata", x.Topic)
		p.perBroker("CreatePartitions", m, map[int32][]string{m.ControllerID: {x.Topic + " to " + strconv.Itoa(int(x.Count))}})
		everyBroker(p, m, "Metadata", x.Topic+" (until every broker shows the new partitions)")
	case *lang.DeleteGroup:
		id, err := s.explainCoordinator(ctx, p, x.Group)
		if err != nil {
			return true, err
		}
		p.perBroker("ShareGroupDescribe", m, map[int32][]string{id: {x.Group + " (a share group is refused)"}})
		p.any("FindCoordinator", x.Group)
		p.perBroker("DeleteGroups", m, map[int32][]string{id: {x.Group}})
	case *lang.ResetGroup:
		id, err := s.explainCoordinator(ctx, p, x.Group)
		if err != nil {
			return true, err
		}
		p.perBroker("DescribeGroups", m, map[int32][]string{id: {x.Group}})
		shareQuestion(p)
		p.any("Metadata", "all topics")
		p.perBroker("OffsetFetch", m, map[int32][]string{id: {x.Group}})
		if x.Topic == nil {
			for range 2 {
				p.step++
				p.rows = append(p.rows, result.Row{p.step, "ListOffsets", nil, "each committed partition's leader", "the group's committed partitions"})
			}
			if x.To.Kind == lang.ResetTimestamp || x.To.Kind == lang.ResetAgo {
				p.step++
				p.rows = append(p.rows, result.Row{p.step, "ListOffsets", nil, "each committed partition's leader", "the group's committed partitions, by time"})
			}
		} else {
			if m, err = s.cl.WithTopic(ctx, m, *x.Topic); err != nil {
				return true, err
			}
			parts, err := pickPartitions(m.Topics[*x.Topic], x.Partitions, "PARTITION")
			if err != nil {
				return true, err
			}
			p.leaders("ListOffsets", m, parts)
			p.leaders("ListOffsets", m, parts)
			if x.To.Kind == lang.ResetTimestamp || x.To.Kind == lang.ResetAgo {
				p.leaders("ListOffsets", m, parts)
			}
		}
		if x.Execute {
			p.any("FindCoordinator", x.Group)
			p.perBroker("OffsetCommit", m, map[int32][]string{id: {x.Group}})
		}
	case *lang.DeleteRecords:
		if m, err = s.cl.WithTopic(ctx, m, x.Topic); err != nil {
			return true, err
		}
		t := m.Topics[x.Topic]
		want := x.Partitions
		if x.BeforeOffset == nil {
			want = make([]int32, len(x.Before))
			for i, po := range x.Before {
				want[i] = po.Partition
			}
		}
		parts, err := pickPartitions(t, want, "BEFORE")
		if err != nil {
			return true, err
		}
		p.any("Metadata", x.Topic)
		p.leaders("ListOffsets", m, parts)
		p.leaders("ListOffsets", m, parts)
		if x.Execute {
			p.leaders("DeleteRecords", m, parts)
		}
	case *lang.ShowTransactions, *lang.DescribeTransaction, *lang.ShowHangingTransactions, *lang.AbortTransaction:
		return true, s.explainTxn(ctx, p, m, stmt)
	default:
		return s.explainShare(ctx, p, m, stmt)
	}
	return true, nil
}

// configRoute is one config request's route: a broker's own configs to
// that broker, the rest to any broker.
func configRoute(p *planner, m *kafka.Metadata, api string, r lang.ConfigResource) error {
	switch r.Kind {
	case lang.ResourceBroker:
		if _, ok := m.Broker(r.Broker); !ok {
			return &kafka.UnknownBrokerError{ID: r.Broker, Known: brokerIDs(m)}
		}
		p.perBroker(api, m, map[int32][]string{r.Broker: {resourceLabel(r) + " (only it answers for its own configs)"}})
	case lang.ResourceTopic:
		if _, ok := m.Topics[r.Topic]; !ok {
			return &kafka.UnknownTopicError{Topic: r.Topic}
		}
		p.any(api, resourceLabel(r))
	default:
		p.any(api, "cluster defaults")
	}
	return nil
}

func brokerIDs(m *kafka.Metadata) []string {
	out := make([]string, len(m.Brokers))
	for i, b := range m.Brokers {
		out[i] = strconv.Itoa(int(b.ID))
	}
	return out
}

func everyBroker(p *planner, m *kafka.Metadata, api, items string) {
	plan := map[int32][]string{}
	for _, b := range m.Brokers {
		plan[b.ID] = []string{items}
	}
	p.perBroker(api, m, plan)
}

func (s *Session) explainCoordinator(ctx context.Context, p *planner, group string) (int32, error) {
	coords, cfail, err := s.cl.FindCoordinators(ctx, []string{group})
	if err != nil {
		return -1, err
	}
	if ge := cfail[group]; ge != nil {
		return -1, fmt.Errorf("EXPLAIN cannot route to the coordinator of group %q: %w", group, ge)
	}
	p.any("FindCoordinator", group)
	return coords[group], nil
}
