package exec

import (
	"context"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// executeOps runs the cluster operation statements (disks, replica moves,
// leader elections, the quorum, features). It reports false for a
// statement it does not know.
func (s *Session) executeOps(ctx context.Context, stmt lang.Statement) (result.Result, bool, error) {
	var res result.Result
	var err error
	switch st := stmt.(type) {
	case *lang.ShowLogDirs:
		res, err = s.showLogDirs(ctx, st)
	case *lang.ShowQuorum:
		res, err = s.showQuorum(ctx)
	case *lang.ShowFeatures:
		res, err = s.showFeatures(ctx)
	case *lang.ShowReassignments:
		res, err = s.showReassignments(ctx)
	case *lang.AlterReplicas:
		res, err = s.alterReplicas(ctx, st)
	case *lang.CancelReassignment:
		res, err = s.cancelReassignment(ctx, st)
	case *lang.ElectLeaders:
		res, err = s.electLeaders(ctx, st)
	default:
		return nil, false, nil
	}
	return res, true, err
}

var showQuorumCols = []result.Column{
	col("node", result.Int), col("role", result.String), col("log_end_offset", result.Int),
	col("lag", result.Int), col("last_fetch", result.Time), col("last_caught_up", result.Time),
}

// showQuorum is one row per voter and observer of the KRaft metadata
// quorum, as the active controller sees them (DescribeQuorum, forwarded to
// it by whichever broker is asked): how far each has fetched and how far it
// trails the leader's log end, as kafka-metadata-quorum.sh describe
// --replication prints.
func (s *Session) showQuorum(ctx context.Context) (result.Result, error) {
	q, err := s.cl.DescribeQuorum(ctx)
	if err != nil {
		return nil, err
	}
	leaderEnd := int64(-1)
	for _, r := range q.Replicas {
		if r.Role == "leader" {
			leaderEnd = r.LogEndOffset
		}
	}
	rows := make([]result.Row, 0, len(q.Replicas))
	for _, r := range q.Replicas {
		var end, lag, fetch, caught any
		if r.LogEndOffset >= 0 {
			end = r.LogEndOffset
			if leaderEnd >= 0 {
				lag = leaderEnd - r.LogEndOffset
			}
		}
		if r.LastFetch >= 0 {
			fetch = time.UnixMilli(r.LastFetch).UTC()
		}
		if r.LastCaughtUp >= 0 {
			caught = time.UnixMilli(r.LastCaughtUp).UTC()
		}
		rows = append(rows, result.Row{int64(r.Node), r.Role, end, lag, fetch, caught})
	}
	res := result.NewSlice(showQuorumCols, rows)
	if q.LeaderID < 0 {
		res.Notes = append(res.Notes, "the metadata quorum has no leader right now (an election is under way)")
	}
	return res, nil
}

var showFeaturesCols = []result.Column{
	col("feature", result.String), col("finalized_version", result.Int),
	col("supported_min", result.Int), col("supported_max", result.Int),
}

// showFeatures lists the cluster's feature flags: the finalized level
// (0: off) and the range the answering broker supports, from
// one ApiVersions to any broker, as kafka-features.sh describe does.
func (s *Session) showFeatures(ctx context.Context) (result.Result, error) {
	fs, _, err := s.cl.Features(ctx)
	if err != nil {
		return nil, err
	}
	level := func(v *int16) any {
		if v == nil {
			return nil
		}
		return int64(*v)
	}
	rows := make([]result.Row, 0, len(fs))
	for _, f := range fs {
		rows = append(rows, result.Row{f.Name, level(f.Finalized), level(f.SupportedMin), level(f.SupportedMax)})
	}
	return result.NewSlice(showFeaturesCols, rows), nil
}

// explainOps plans the cluster operation statements. It reports false for
// a statement it does not know.
func (s *Session) explainOps(ctx context.Context, p *planner, m *kafka.Metadata, stmt lang.Statement) (bool, error) {
	const forwarded = " (KRaft: the broker forwards it to the active controller)"
	switch x := stmt.(type) {
	case *lang.ShowLogDirs:
		p.any("DescribeCluster", "fenced brokers (Metadata leaves them out; each is a row with its error)")
		p.any("Metadata", "brokers")
		if x.Broker != nil {
			if _, ok := m.Broker(*x.Broker); !ok {
				// A fenced broker is a row with its error, asked nothing
				// (it cannot answer); only one neither listed nor fenced
				// is refused, as the statement refuses it.
				fenced, _, _ := s.cl.FencedBrokers(ctx)
				for _, b := range fenced {
					if b.ID == *x.Broker {
						return true, nil
					}
				}
				return true, &kafka.UnknownBrokerError{ID: *x.Broker, Known: brokerIDs(m)}
			}
			p.perBroker("DescribeLogDirs", m, map[int32][]string{*x.Broker: {"its own log dirs (only it can describe them)"}})
			break
		}
		everyBroker(p, m, "DescribeLogDirs", "its own log dirs (each broker describes only its own)")
	case *lang.ShowQuorum:
		p.any("DescribeQuorum", "__cluster_metadata/0"+forwarded)
	case *lang.ShowFeatures:
		p.any("ApiVersions", "finalized and supported features")
	case *lang.ShowReassignments:
		p.any("ListPartitionReassignments", "every partition"+forwarded)
	case *lang.AlterReplicas:
		with, err := s.cl.WithTopic(ctx, m, x.Topic)
		if err != nil {
			return true, err
		}
		if _, err := s.planReplicas(ctx, with, x); err != nil {
			return true, err
		}
		p.any("Metadata", x.Topic)
		if x.Execute {
			p.any("AlterPartitionReassignments", kafka.TopicPartition{Topic: x.Topic, Partition: x.Partition}.String()+" to "+replicaList(x.Replicas)+forwarded)
		}
	case *lang.CancelReassignment:
		tp := kafka.TopicPartition{Topic: x.Topic, Partition: x.Partition}.String()
		p.any("Metadata", x.Topic)
		p.any("ListPartitionReassignments", tp+forwarded)
		if x.Execute {
			p.any("AlterPartitionReassignments", tp+" cancel (null replicas)"+forwarded)
		}
	case *lang.ElectLeaders:
		what := "all topics"
		if x.Topic != nil {
			what = *x.Topic
		}
		p.any("Metadata", what)
		if x.Execute {
			items := "every partition"
			if x.Topic != nil {
				with, err := s.cl.WithTopic(ctx, m, *x.Topic)
				if err != nil {
					return true, err
				}
				parts, err := pickPartitions(with.Topics[*x.Topic], x.Partitions, "PARTITION")
				if err != nil {
					return true, err
				}
				items = tpList(parts)
			}
			p.any("ElectLeaders", electionName(x)+": "+items+forwarded)
			if x.Unclean {
				p.any("Metadata", what+" (who won the unclean elections)")
			}
		}
	default:
		return false, nil
	}
	return true, nil
}

// explainSizes is the DescribeLogDirs step of SHOW TOPICS and SHOW
// PARTITIONS: one request to each broker holding a replica of parts, for
// just those replicas.
func explainSizes(p *planner, m *kafka.Metadata, parts []kafka.TopicPartition, sameStep bool) {
	plan := sizePlan(m, parts)
	if len(plan) == 0 {
		return
	}
	items := map[int32][]string{}
	for id, tps := range plan {
		items[id] = []string{"sizes of its replicas: " + tpList(tps)}
	}
	if sameStep {
		p.step--
	}
	p.perBroker("DescribeLogDirs", m, items)
}
