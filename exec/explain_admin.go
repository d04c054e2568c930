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
		steps, err := showConfigsSteps(configResource(x.Resource), m)
		if err != nil {
			return true, err
		}
		p.explainSteps(m, steps)
	case *lang.AlterConfigs:
		if err := topicOf(x.Resource); err != nil {
			return true, err
		}
		steps, err := alterConfigsSteps(configResource(x.Resource), m)
		if err != nil {
			return true, err
		}
		p.explainSteps(m, steps)
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
		p.explainSteps(m, deleteGroupSteps(id, x.Group))
	case *lang.ResetGroup:
		id, err := s.explainCoordinator(ctx, p, x.Group)
		if err != nil {
			return true, err
		}
		explainGroupStatus(p, m, id, x.Group)
		shareQuestion(p)
		p.any("Metadata", "all topics")
		p.perBroker("OffsetFetch", m, map[int32][]string{id: {x.Group + " (require_stable: the coordinator's newest commits)"}})
		explainOffsetFetchNaming(p)
		if m, err = s.explainResetReads(ctx, p, m, x.Topic, x.Partitions, x.To, "each committed partition's leader", "the group's committed partitions"); err != nil {
			return true, err
		}
		if x.Execute {
			p.any("FindCoordinator", x.Group)
			p.perBroker("OffsetCommit", m, map[int32][]string{id: {x.Group}})
		}
	case *lang.DeleteRecords:
		if m, err = s.cl.WithTopic(ctx, m, x.Topic); err != nil {
			return true, err
		}
		route, err := routeDeleteRecords(x, m.Topics[x.Topic])
		if err != nil {
			return true, err
		}
		p.any("Metadata", x.Topic)
		p.explainSteps(m, route.steps(x.Execute))
	case *lang.ShowTransactions, *lang.DescribeTransaction, *lang.ShowHangingTransactions, *lang.AbortTransaction:
		return true, s.explainTxn(ctx, p, m, stmt)
	default:
		return s.explainShare(ctx, p, m, stmt)
	}
	return true, nil
}

// explainResetReads plans what RESET GROUP and RESET SHARE GROUP read of
// the log: each partition's earliest and latest offsets and, TO TIMESTAMP
// or d AGO, its offset by time, at its leader. With TOPIC the partitions
// and their leaders are known; else they are the group's (what), at
// leaders known only when it runs (leader says which). It returns the
// metadata, which knows the topic.
func (s *Session) explainResetReads(ctx context.Context, p *planner, m *kafka.Metadata, topic *string, partitions []int32, to lang.ResetTarget, leader, what string) (*kafka.Metadata, error) {
	reads := 2
	if to.Kind == lang.ResetTimestamp || to.Kind == lang.ResetAgo {
		reads = 3
	}
	if topic == nil {
		for i := range reads {
			items := what
			if i == 2 {
				items += ", by time"
			}
			p.step++
			p.rows = append(p.rows, result.Row{p.step, "ListOffsets", nil, leader, items})
		}
		return m, nil
	}
	m, err := s.cl.WithTopic(ctx, m, *topic)
	if err != nil {
		return nil, err
	}
	parts, err := pickPartitions(m.Topics[*topic], partitions, "PARTITION")
	if err != nil {
		return nil, err
	}
	steps := logRangeSteps(parts) // resolveReset's logRange, then its offsets by time
	if reads == 3 {
		steps = append(steps, adminStep{api: "ListOffsets", route: routeLeaders, parts: parts, label: "offset by time"})
	}
	p.explainSteps(m, steps)
	return m, nil
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
