package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// explainShare plans the share group statements: every request they send,
// and to which broker. It reports false for a statement it does not know.
func (s *Session) explainShare(ctx context.Context, p *planner, m *kafka.Metadata, stmt lang.Statement) (bool, error) {
	switch x := stmt.(type) {
	case *lang.ShowShareGroups:
		p.any("Metadata", "brokers")
		everyBroker(p, m, "ListGroups", "its share groups (type filter \"share\")")
		p.step++
		p.rows = append(p.rows,
			result.Row{p.step, "FindCoordinator", nil, "any broker", "the listed groups"},
			result.Row{p.step, "ShareGroupDescribe", nil, "each group's coordinator", "its listed groups, one request per coordinator"},
			result.Row{p.step, "DescribeShareGroupOffsets", nil, "each group's coordinator", "its listed groups, one request per coordinator"})
		p.step++
		p.rows = append(p.rows,
			result.Row{p.step, "Metadata", nil, "any broker", "the groups' topics, if a broker does not give a lag"},
			result.Row{p.step, "ListOffsets", nil, "each partition's leader", "partitions whose lag the broker does not give (before Kafka 4.2), if any"})
	case *lang.DescribeShareGroup:
		id, err := s.explainCoordinator(ctx, p, x.Group)
		if err != nil {
			return true, err
		}
		p.perBroker("ShareGroupDescribe", m, map[int32][]string{id: {x.Group}})
		p.any("FindCoordinator", x.Group)
		p.perBroker("DescribeShareGroupOffsets", m, map[int32][]string{id: {x.Group + " (all topics)"}})
		p.any("Metadata", "all topics")
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "ListOffsets", nil, "each partition's leader", "the group's partitions (with share state or assigned), one request per leader broker"})
	case *lang.ResetShareGroup:
		id, err := s.explainCoordinator(ctx, p, x.Group)
		if err != nil {
			return true, err
		}
		p.perBroker("ShareGroupDescribe", m, map[int32][]string{id: {x.Group}})
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "DescribeGroups", nil, "the group's coordinator", "only if no share group has that name (is it a consumer group?)"})
		p.any("Metadata", "all topics")
		p.any("FindCoordinator", x.Group)
		p.perBroker("DescribeShareGroupOffsets", m, map[int32][]string{id: {x.Group + " (all topics)"}})
		if m, err = s.explainResetReads(ctx, p, m, x.Topic, x.Partitions, x.To, "each partition's leader", "the group's partitions"); err != nil {
			return true, err
		}
		if x.Execute {
			p.any("FindCoordinator", x.Group)
			p.perBroker("AlterShareGroupOffsets", m, map[int32][]string{id: {x.Group}})
		}
	case *lang.DeleteShareGroup:
		id, err := s.explainCoordinator(ctx, p, x.Group)
		if err != nil {
			return true, err
		}
		p.perBroker("ShareGroupDescribe", m, map[int32][]string{id: {x.Group}})
		p.any("FindCoordinator", x.Group)
		if x.Topics == nil {
			p.perBroker("DeleteGroups", m, map[int32][]string{id: {x.Group}})
		} else {
			p.perBroker("DeleteShareGroupOffsets", m, map[int32][]string{id: {x.Group + ": " + strings.Join(x.Topics, ", ")}})
		}
	default:
		return false, nil
	}
	return true, nil
}

// shareConfirmation is the shell's question before DELETE SHARE GROUP and
// RESET SHARE GROUP ... EXECUTE, with what they change counted from the
// cluster; without the counts when the cluster cannot say.
func (s *Session) shareConfirmation(ctx context.Context, stmt lang.Statement) (string, bool) {
	switch st := stmt.(type) {
	case *lang.DeleteShareGroup:
		q := "delete share group " + lang.QuoteName(st.Group)
		offs, failed, err := s.cl.ShareGroupOffsets(ctx, []string{st.Group})
		if err != nil || failed[st.Group] != nil {
			return q + "?", true
		}
		topics := map[string]bool{}
		n := 0
		for _, so := range offs[st.Group] {
			if st.Topics == nil || slices.Contains(st.Topics, so.TP.Topic) {
				topics[so.TP.Topic] = true
				n++
			}
		}
		if st.Topics != nil {
			q += "'s start offsets for " + strings.Join(st.Topics, ", ")
			return q + fmt.Sprintf(" (%d %s)?", n, plural(n, "partition", "partitions")), true
		}
		return q + fmt.Sprintf(": its start offsets for %d %s of %d %s?", n, plural(n, "partition", "partitions"),
			len(topics), plural(len(topics), "topic", "topics")), true
	case *lang.ResetShareGroup:
		q := "reset share group " + lang.QuoteName(st.Group)
		plan, err := s.planShareReset(ctx, st)
		if err != nil {
			return q + "?", true
		}
		var before, after int64
		unknown, known := false, false
		var topics []string
		for _, r := range plan.rows {
			if l, ok := plan.lagBefore(r).(int64); ok {
				before += l
				known = true
			} else {
				unknown = true
			}
			after += r.latest - r.target
			if !slices.Contains(topics, r.tp.Topic) {
				topics = append(topics, r.tp.Topic)
			}
		}
		lag := thousands(before)
		switch {
		case !known:
			lag = "unknown" // no partition has a start offset yet
		case unknown:
			lag += " (+ uninitialized partitions)"
		}
		return q + fmt.Sprintf(": move the start offsets of %d %s of %s, lag %s -> %s?", len(plan.rows), plural(len(plan.rows), "partition", "partitions"),
			strings.Join(topics, ", "), lag, thousands(after)), true
	}
	return "", false
}
