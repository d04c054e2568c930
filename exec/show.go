package exec

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

func col(name string, t result.Type) result.Column { return result.Column{Name: name, Type: t} }

// keyCol is a column that identifies the row (see result.Column.Key).
func keyCol(name string, t result.Type) result.Column {
	return result.Column{Name: name, Type: t, Key: true}
}

var showTopicsCols = []result.Column{
	keyCol("topic", result.String), col("partitions", result.Int), col("replication_factor", result.Int),
	col("internal", result.Bool), col("under_replicated", result.Int), col("offline", result.Int),
	col("size_bytes", result.Int), col("replicas_size_bytes", result.Int),
	col("records_last_minute", result.Int), col("last_write", result.Time),
}

func (s *Session) showTopics(ctx context.Context, st *lang.ShowTopics) (result.Result, error) {
	match, err := likeMatcher(st.Like)
	if err != nil {
		return nil, err
	}
	m, err := s.cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	// The sizes: DescribeLogDirs to each broker holding a replica of the
	// listed topics (see sizeReplicas).
	var parts []kafka.TopicPartition
	for _, name := range m.TopicNames() {
		if match(name) {
			parts = append(parts, partitionsOf(m.Topics[name])...)
		}
	}
	// And the write rates: three ListOffsets per leader broker (the
	// latest offset, the offset at now-60s, the max timestamp), all
	// concurrently with the sizes.
	var (
		sizes      replicaSizes
		rates      *writeRates
		serr, rerr error
		wg         sync.WaitGroup
	)
	wg.Go(func() { sizes, serr = s.sizeReplicas(ctx, m, parts) })
	wg.Go(func() { rates, rerr = s.readWriteRates(ctx, m, parts, nil) })
	wg.Wait()
	if err := errors.Join(serr, rerr); err != nil {
		return nil, err
	}
	var rows []result.Row
	for _, name := range m.TopicNames() {
		if !match(name) {
			continue
		}
		t := m.Topics[name]
		size, total := topicSizes(t, sizes)
		var under, offline int64
		rf := 0
		for _, p := range t.Partitions {
			rf = max(rf, len(p.Replicas))
			if p.Leader < 0 {
				offline++
			}
			if len(p.ISR) < len(p.Replicas) {
				under++
			}
		}
		n, last := rates.topic(partitionsOf(t))
		rows = append(rows, result.Row{name, int64(len(t.Partitions)), int64(rf), t.Internal, under, offline, size, total, n, last})
	}
	res := result.NewSlice(showTopicsCols, rows)
	res.Notes = append(sizes.offlineNote(), rates.notes()...)
	res.Warns = append(sizes.warnings(), rates.warning()...)
	return res, nil
}

var showBrokersCols = []result.Column{keyCol("node_id", result.Int), col("host", result.String), col("port", result.Int), col("rack", result.String)}

func (s *Session) showBrokers(ctx context.Context) (result.Result, error) {
	m, err := s.cl.Metadata(ctx, []string{})
	if err != nil {
		return nil, err
	}
	rows := make([]result.Row, 0, len(m.Brokers))
	for _, b := range m.Brokers {
		var rack any
		if b.Rack != nil {
			rack = *b.Rack
		}
		rows = append(rows, result.Row{int64(b.ID), b.Host, int64(b.Port), rack})
	}
	return result.NewSlice(showBrokersCols, rows), nil
}

var showClusterCols = []result.Column{col("property", result.String), col("value", result.String)}

func (s *Session) showCluster(ctx context.Context) (result.Result, error) {
	m, err := s.cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	rows := []result.Row{
		{"cluster_id", m.ClusterID},
		{"brokers", strconv.Itoa(len(m.Brokers))},
		{"topics", strconv.Itoa(len(m.Topics))},
		{"controller", s.quorumLeader(ctx, m)},
		{"bootstrap", strings.Join(s.cl.Bootstrap(), ",")},
	}
	return result.NewSlice(showClusterCols, rows), nil
}

// quorumLeader names the active KRaft controller: the leader of the
// __cluster_metadata quorum, from DescribeQuorum. Metadata's controller_id
// is not it (KRaft fills it with a random live broker), so when the quorum
// cannot be asked the row says so rather than guessing.
func (s *Session) quorumLeader(ctx context.Context, m *kafka.Metadata) string {
	q, err := s.cl.DescribeQuorum(ctx)
	unknown := func(why string) string {
		return fmt.Sprintf("unknown: %s (Metadata's controller_id is %d, but under KRaft that is a random live broker, not the active controller)", why, m.ControllerID)
	}
	var qe *kafka.QuorumError
	switch {
	case errors.As(err, &qe) && kafka.IsClusterAuthorization(qe.Err):
		return "unknown: not authorized for DescribeQuorum (needs DESCRIBE on the cluster)"
	case errors.As(err, &qe):
		return unknown("DescribeQuorum failed: " + qe.Err.Error())
	case err != nil:
		// Name the brokers' own reason once, not each broker's attempt.
		var be *kafka.BrokerError
		if errors.As(err, &be) {
			err = be.Err
		}
		return unknown("the cluster did not answer DescribeQuorum: " + oneLine(err))
	case q.LeaderID < 0:
		return unknown("the metadata quorum has no leader right now")
	}
	addr := "a controller-only node"
	if b, ok := m.Broker(q.LeaderID); ok {
		addr = b.Addr()
	} else if l, ok := q.Listeners[q.LeaderID]; ok {
		addr = "controller listener " + l
	}
	return fmt.Sprintf("%d (%s; metadata quorum leader, epoch %d)", q.LeaderID, addr, q.LeaderEpoch)
}

var showGroupsCols = []result.Column{
	keyCol("group", result.String), col("state", result.String), col("protocol_type", result.String), col("coordinator", result.Int),
	col("members", result.Int), col("topics", result.String), col("lag", result.Int), col("max_lag_ms", result.Int),
}

type listedGroup struct {
	name, state, protocolType string
	groupType                 string // ListGroups v5+: classic, consumer, share, streams
	coordinator               int32
}

// listGroups unions ListGroups over every broker: each broker lists only the
// groups it coordinates. Brokers that could not be asked are returned.
func (s *Session) listGroups(ctx context.Context) ([]listedGroup, []error, error) {
	listed, missing, err := s.cl.ListGroups(ctx)
	if err != nil {
		return nil, nil, err
	}
	var groups []listedGroup
	for _, g := range listed {
		groups = append(groups, listedGroup{name: g.Group, state: g.State, protocolType: g.ProtocolType, groupType: g.Type, coordinator: g.Coordinator})
	}
	return groups, missing, nil
}

// oneLine flattens a joined, multi-line error into one line for a cell.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}
