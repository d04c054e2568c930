package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// Replica moves and leader elections. Every request here is the
// controller's business and goes to any broker, which forwards it to the
// active controller on KRaft (see kafka/reassign.go).

var showReassignmentsCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("replicas", result.Ints),
	col("adding", result.Ints), col("removing", result.Ints),
}

// showReassignments lists the replica moves in progress
// (ListPartitionReassignments for every partition).
func (s *Session) showReassignments(ctx context.Context) (result.Result, error) {
	rs, err := s.cl.ListReassignments(ctx, nil)
	if err != nil {
		return nil, err
	}
	rows := make([]result.Row, 0, len(rs))
	for _, r := range rs {
		rows = append(rows, result.Row{r.TP.Topic, int64(r.TP.Partition), ints(r.Replicas), ints(r.Adding), ints(r.Removing)})
	}
	return result.NewSlice(showReassignmentsCols, rows), nil
}

// ints keeps a replica list non-nil, so an empty list shows as [] rather
// than NULL: "no replica being added" is an answer.
func ints(v []int32) []int32 {
	if v == nil {
		return []int32{}
	}
	return slices.Clone(v)
}

var alterReplicasCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("replicas", result.Ints),
	col("new_replicas", result.Ints), col("leader", result.Int), col("new_leader", result.Int), col("result", result.String),
}

// replicaPlan is one partition's move, checked against the metadata.
type replicaPlan struct {
	tp        kafka.TopicPartition
	current   []int32
	leader    int32 // -1: none
	newLeader int32 // the leader once the move is done
}

// planReplicas checks an assignment before anything is sent: the topic
// and partition exist and every broker is one the cluster lists (the
// parser already refused an empty list and a broker named twice). A
// broker the cluster does not list would leave the move hanging until
// someone cancels it; so would one the controller has fenced (registered
// but down), which Metadata leaves out too, so the error asks
// DescribeCluster which of the two it is rather than calling a broker that
// is down one that does not exist.
func (s *Session) planReplicas(ctx context.Context, m *kafka.Metadata, st *lang.AlterReplicas) (replicaPlan, error) {
	t := m.Topics[st.Topic]
	if t == nil {
		return replicaPlan{}, &kafka.UnknownTopicError{Topic: st.Topic}
	}
	tp := kafka.TopicPartition{Topic: st.Topic, Partition: st.Partition}
	p, ok := partitionOf(m, tp)
	if !ok {
		return replicaPlan{}, fmt.Errorf("topic %q has no partition %d; its partitions are 0-%d", st.Topic, st.Partition, len(t.Partitions)-1)
	}
	for _, b := range st.Replicas {
		if _, ok := m.Broker(b); !ok {
			fenced, _, _ := s.cl.FencedBrokers(ctx) // unknown on failure: the broker is then called unknown
			for _, fb := range fenced {
				if fb.ID == b {
					return replicaPlan{}, fmt.Errorf("cannot move %s to %s: broker %d (%s) is registered but fenced by the controller (stopped, crashed or not heartbeating): its replica could not catch up and the move would hang until cancelled; start it, or name a live broker (SHOW BROKERS lists them)",
						tp, replicaList(st.Replicas), b, fb.Addr())
				}
			}
			return replicaPlan{}, fmt.Errorf("cannot move %s to %s: %w", tp, replicaList(st.Replicas), &kafka.UnknownBrokerError{ID: b, Known: brokerIDs(m)})
		}
	}
	// Kafka keeps the leader when it is among the new replicas, and
	// otherwise elects the first new replica that is in sync once the
	// move completes: the first of the list, the preferred leader.
	newLeader := st.Replicas[0]
	if slices.Contains(st.Replicas, p.Leader) {
		newLeader = p.Leader
	}
	return replicaPlan{tp: tp, current: slices.Clone(p.Replicas), leader: p.Leader, newLeader: newLeader}, nil
}

// alterReplicas moves a partition's replicas (ALTER TOPIC t PARTITION p
// REPLICAS (...)): a dry run shows the current and new replicas and
// leader; EXECUTE sends AlterPartitionReassignments, which starts the move
// and returns: SHOW REASSIGNMENTS follows it.
func (s *Session) alterReplicas(ctx context.Context, st *lang.AlterReplicas) (result.Result, error) {
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	plan, err := s.planReplicas(ctx, m, st)
	if err != nil {
		return nil, err
	}
	var leader any
	if plan.leader >= 0 {
		leader = int64(plan.leader)
	}
	outcome := "dry run: add EXECUTE to start the move"
	if slices.Equal(plan.current, st.Replicas) {
		outcome = "nothing to move: these are the partition's replicas already"
	}
	if st.Execute && !slices.Equal(plan.current, st.Replicas) {
		failed, err := s.cl.AlterReassignments(ctx, map[kafka.TopicPartition][]int32{plan.tp: slices.Clone(st.Replicas)})
		if err != nil {
			return nil, err
		}
		if pe := failed[plan.tp]; pe != nil {
			return nil, fmt.Errorf("moving %s to %s: %w", plan.tp, replicaList(st.Replicas), pe)
		}
		outcome = "move started: SHOW REASSIGNMENTS follows it until the new replicas are in sync"
		if plan.newLeader != plan.leader {
			outcome += fmt.Sprintf("; then broker %d leads", plan.newLeader)
		}
	}
	if !st.Execute && plan.newLeader != st.Replicas[0] {
		outcome += fmt.Sprintf("; broker %d keeps the lead (ELECT LEADERS moves it to the preferred broker %d after the move)", plan.newLeader, st.Replicas[0])
	}
	row := result.Row{st.Topic, int64(st.Partition), plan.current, slices.Clone(st.Replicas), leader, int64(plan.newLeader), outcome}
	return result.NewSlice(alterReplicasCols, []result.Row{row}), nil
}

var cancelReassignmentCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("replicas", result.Ints),
	col("adding", result.Ints), col("removing", result.Ints), col("result", result.String),
}

// cancelReassignment stops a partition's move in progress: a dry run shows
// the move; EXECUTE sends AlterPartitionReassignments with null replicas,
// and the partition goes back to its replicas before the move.
func (s *Session) cancelReassignment(ctx context.Context, st *lang.CancelReassignment) (result.Result, error) {
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	tp := kafka.TopicPartition{Topic: st.Topic, Partition: st.Partition}
	if _, ok := partitionOf(m, tp); !ok {
		return nil, fmt.Errorf("topic %q has no partition %d; its partitions are 0-%d", st.Topic, st.Partition, len(m.Topics[st.Topic].Partitions)-1)
	}
	rs, err := s.cl.ListReassignments(ctx, []kafka.TopicPartition{tp})
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%s has no reassignment in progress: nothing to cancel (SHOW REASSIGNMENTS lists the moves in progress)", tp)
	}
	r := rs[0]
	back := slices.DeleteFunc(slices.Clone(r.Replicas), func(b int32) bool { return slices.Contains(r.Adding, b) })
	outcome := "dry run: add EXECUTE to cancel; the replicas go back to " + replicaList(back)
	if st.Execute {
		failed, err := s.cl.AlterReassignments(ctx, map[kafka.TopicPartition][]int32{tp: nil})
		if err != nil {
			return nil, err
		}
		if pe := failed[tp]; pe != nil {
			if kafka.IsNoReassignmentInProgress(pe) {
				return nil, fmt.Errorf("%s: the move finished before it could be cancelled (%w)", tp, pe)
			}
			return nil, fmt.Errorf("cancelling the move of %s: %w", tp, pe)
		}
		outcome = "cancelled: the replicas go back to " + replicaList(back)
	}
	row := result.Row{tp.Topic, int64(tp.Partition), ints(r.Replicas), ints(r.Adding), ints(r.Removing), outcome}
	return result.NewSlice(cancelReassignmentCols, []result.Row{row}), nil
}

var electLeadersCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("leader", result.Int),
	col("new_leader", result.Int), col("result", result.String),
}

func electionName(st *lang.ElectLeaders) string {
	if st.Unclean {
		return "unclean"
	}
	return "preferred"
}

// electScope is the partitions an ELECT LEADERS names: those of its topic
// (or the listed ones), or every partition of the cluster (nil).
func (s *Session) electScope(ctx context.Context, st *lang.ElectLeaders) (*kafka.Metadata, []kafka.TopicPartition, error) {
	var topics []string
	if st.Topic != nil {
		topics = []string{*st.Topic}
	}
	m, err := s.cl.Metadata(ctx, topics)
	if err != nil {
		return nil, nil, err
	}
	if st.Topic == nil {
		var all []kafka.TopicPartition
		for _, name := range m.TopicNames() {
			all = append(all, partitionsOf(m.Topics[name])...)
		}
		return m, all, nil
	}
	parts, err := pickPartitions(m.Topics[*st.Topic], st.Partitions, "PARTITION")
	return m, parts, err
}

// electLeaders: a dry run lists the partitions the election would change
// (PREFERRED: led by another replica than the first; UNCLEAN: without a
// leader) with their current and would-be leader; EXECUTE sends
// ElectLeaders and reports each partition the controller answered for,
// ELECTION_NOT_NEEDED as an answer (the right replica already leads), not
// an error.
func (s *Session) electLeaders(ctx context.Context, st *lang.ElectLeaders) (result.Result, error) {
	m, parts, err := s.electScope(ctx, st)
	if err != nil {
		return nil, err
	}
	if !st.Execute {
		return electDryRun(m, parts, st), nil
	}
	ask := parts
	if st.Topic == nil {
		ask = nil // every partition, as kafka-leader-election.sh --all-topic-partitions asks
	}
	how := kafka.ElectPreferred
	if st.Unclean {
		how = kafka.ElectUnclean
	}
	answers, err := s.cl.ElectLeaders(ctx, how, ask)
	if err != nil {
		return nil, err
	}
	var after *kafka.Metadata
	if st.Unclean {
		// Who won an unclean election is only in the metadata.
		after, _ = s.cl.Metadata(ctx, topicNames(parts))
	}
	tps := make([]kafka.TopicPartition, 0, len(answers))
	for tp := range answers {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b kafka.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	rows := make([]result.Row, 0, len(tps))
	var failures []string
	for _, tp := range tps {
		p, _ := partitionOf(m, tp)
		var leader, newLeader any
		if p.Leader >= 0 {
			leader = int64(p.Leader)
		}
		var outcome string
		switch aerr := answers[tp]; {
		case aerr == nil:
			outcome = "elected"
			if !st.Unclean && len(p.Replicas) > 0 {
				newLeader = int64(p.Replicas[0])
			} else if after != nil {
				if q, ok := partitionOf(after, tp); ok && q.Leader >= 0 {
					newLeader = int64(q.Leader)
				}
			}
		case kafka.IsElectionNotNeeded(aerr):
			outcome = "not needed: the preferred replica already leads"
			if st.Unclean {
				outcome = "not needed: the partition has a leader"
			}
			newLeader = leader
		default:
			outcome = "failed: " + oneLine(aerr)
			failures = append(failures, fmt.Sprintf("%s: %s", tp, oneLine(aerr)))
		}
		rows = append(rows, result.Row{tp.Topic, int64(tp.Partition), leader, newLeader, outcome})
	}
	res := result.NewSlice(electLeadersCols, rows)
	if len(rows) == 0 {
		// Asked for every partition, the controller answers only for
		// those it elected or could not elect.
		res.Notes = append(res.Notes, "nothing to elect: the controller found every partition led as asked")
	}
	if len(failures) > 0 {
		missing := make([]error, len(failures))
		for i, f := range failures {
			missing[i] = errors.New(f)
		}
		res.Failure = &result.PartialError{What: "ELECT LEADERS (some partitions were not elected)", Missing: missing}
	}
	return res, nil
}

func electDryRun(m *kafka.Metadata, parts []kafka.TopicPartition, st *lang.ElectLeaders) *result.Slice {
	var rows []result.Row
	for _, tp := range parts {
		p, ok := partitionOf(m, tp)
		if !ok || len(p.Replicas) == 0 {
			continue
		}
		var leader any
		if p.Leader >= 0 {
			leader = int64(p.Leader)
		}
		if st.Unclean {
			if p.Leader >= 0 {
				continue
			}
			var down []string
			for _, r := range p.Replicas {
				if _, alive := m.Broker(r); !alive {
					down = append(down, strconv.Itoa(int(r)))
				}
			}
			if len(down) == len(p.Replicas) {
				rows = append(rows, result.Row{tp.Topic, int64(tp.Partition), nil, nil,
					fmt.Sprintf("would fail: no replica of %s is alive (brokers %s are down or fenced): bring one back", tp, strings.Join(down, ", "))})
				continue
			}
			rows = append(rows, result.Row{tp.Topic, int64(tp.Partition), nil, nil,
				"dry run: the controller would pick a live replica outside the in-sync set; records only the lost leader had are gone"})
			continue
		}
		preferred := p.Replicas[0]
		if p.Leader == preferred {
			continue
		}
		outcome := "dry run: add EXECUTE to elect the preferred replica"
		if _, alive := m.Broker(preferred); !alive {
			// KRaft keeps the last replica standing in the ISR of a
			// leaderless partition: in sync, but down.
			outcome = fmt.Sprintf("would fail: the preferred replica %d is not alive (the cluster does not list broker %d: down or fenced) (PREFERRED_LEADER_NOT_AVAILABLE)", preferred, preferred)
		} else if !slices.Contains(p.ISR, preferred) {
			outcome = fmt.Sprintf("would fail: the preferred replica %d is not in sync (PREFERRED_LEADER_NOT_AVAILABLE)", preferred)
		}
		rows = append(rows, result.Row{tp.Topic, int64(tp.Partition), leader, int64(preferred), outcome})
	}
	res := result.NewSlice(electLeadersCols, rows)
	if len(rows) == 0 {
		note := "every partition is led by its preferred replica: nothing to elect"
		if st.Unclean {
			note = "every partition has a leader: nothing to elect"
		}
		res.Notes = append(res.Notes, note)
	}
	return res
}

func topicNames(parts []kafka.TopicPartition) []string {
	var out []string
	for _, tp := range parts {
		if len(out) == 0 || out[len(out)-1] != tp.Topic {
			out = append(out, tp.Topic)
		}
	}
	return out
}

// replicaList prints brokers as the statement wrote them: (1, 2, 3).
func replicaList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func tpList(parts []kafka.TopicPartition) string {
	s := make([]string, len(parts))
	for i, tp := range parts {
		s[i] = tp.String()
	}
	return strings.Join(s, ", ")
}

// opsExecute says whether a replica move, cancel or election is the
// EXECUTE form, which the interactive shell confirms first.
func opsExecute(stmt lang.Statement) bool {
	switch st := stmt.(type) {
	case *lang.AlterReplicas:
		return st.Execute
	case *lang.CancelReassignment:
		return st.Execute
	case *lang.ElectLeaders:
		return st.Execute
	}
	return false
}

// confirmOps is the shell's question before a replica move, cancel or
// election, with what the dry run sees; when the cluster cannot say, the
// question is asked without it and the statement reports what went wrong.
func (s *Session) confirmOps(ctx context.Context, stmt lang.Statement) string {
	switch st := stmt.(type) {
	case *lang.AlterReplicas:
		tp := kafka.TopicPartition{Topic: st.Topic, Partition: st.Partition}
		q := fmt.Sprintf("move the replicas of %s", tp)
		m, err := s.cl.Metadata(ctx, []string{st.Topic})
		if err != nil {
			return q + " to " + replicaList(st.Replicas) + "?"
		}
		plan, err := s.planReplicas(ctx, m, st)
		if err != nil {
			return q + " to " + replicaList(st.Replicas) + "?"
		}
		return fmt.Sprintf("%s from %s to %s (copies the partition to each new broker)?", q, replicaList(plan.current), replicaList(st.Replicas))
	case *lang.CancelReassignment:
		return fmt.Sprintf("cancel the replica move of %s (its replicas go back to the old set)?", kafka.TopicPartition{Topic: st.Topic, Partition: st.Partition})
	case *lang.ElectLeaders:
		scope := "every partition"
		if st.Topic != nil {
			scope = "topic " + lang.QuoteName(*st.Topic)
		}
		q := fmt.Sprintf("elect %s leaders for %s", electionName(st), scope)
		if st.Unclean {
			q += " (a replica outside the in-sync set may lead: records may be lost)"
		} else if m, parts, err := s.electScope(ctx, st); err == nil {
			n := len(electDryRun(m, parts, st).Rows)
			q += fmt.Sprintf(": %d %s not led by the preferred replica", n, plural(n, "partition", "partitions"))
		}
		return q + "?"
	}
	return ""
}
