package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

var showLogDirsCols = []result.Column{
	keyCol("broker", result.Int), keyCol("dir", result.String), col("total_bytes", result.Int),
	col("usable_bytes", result.Int), col("error", result.String),
}

// showLogDirs is one row per log directory of every broker (or of one):
// DescribeLogDirs to each broker, since a broker describes only its own
// disks. A broker that does not answer, or that the controller has fenced
// (DescribeCluster names those; Metadata leaves them out), is a row with
// its error and NULL sizes, and the result is partial; a directory the broker reports as
// failed (offline disk) is a row with that error, which is an answer.
func (s *Session) showLogDirs(ctx context.Context, st *lang.ShowLogDirs) (result.Result, error) {
	var brokers []int32
	if st.Broker != nil {
		brokers = []int32{*st.Broker}
	}
	// Metadata leaves fenced brokers out: ask the controller's view first,
	// so that a broker that is down is a row, not silently missing.
	fenced, _, ferr := s.cl.FencedBrokers(ctx)
	var warns []string
	if ferr != nil {
		warns = append(warns, "could not list fenced brokers (DescribeCluster): "+oneLine(ferr)+"; a broker that is down may be missing from the rows")
	}
	answers, failed, err := s.cl.DescribeLogDirs(ctx, nil, brokers, nil)
	if err != nil {
		return nil, err
	}
	var unknown *kafka.UnknownBrokerError
	if st.Broker != nil && len(failed) == 1 && errors.As(failed[0].Err, &unknown) {
		for _, b := range fenced {
			if b.ID == *st.Broker {
				failed[0] = &kafka.BrokerError{API: "DescribeLogDirs", ID: b.ID, Addr: b.Addr(), Err: &kafka.FencedError{Broker: b}}
			}
		}
		if errors.As(failed[0].Err, &unknown) {
			return nil, unknown
		}
	} else if st.Broker == nil {
		seen := map[int32]bool{}
		for _, a := range answers {
			seen[a.Broker] = true
		}
		for _, f := range failed {
			seen[f.ID] = true
		}
		for _, b := range fenced {
			if !seen[b.ID] {
				failed = append(failed, &kafka.BrokerError{API: "DescribeLogDirs", ID: b.ID, Addr: b.Addr(), Err: &kafka.FencedError{Broker: b}})
			}
		}
	}
	slices.SortFunc(failed, func(a, b *kafka.BrokerError) int { return int(a.ID) - int(b.ID) })
	type brokerRow struct {
		id  int32
		row result.Row
	}
	var rows []brokerRow
	for _, a := range answers {
		for _, d := range a.Dirs {
			var total, usable, derr any
			if d.TotalBytes >= 0 {
				total = d.TotalBytes
			}
			if d.UsableBytes >= 0 {
				usable = d.UsableBytes
			}
			if d.Err != nil {
				derr = d.Err.Error()
			}
			rows = append(rows, brokerRow{a.Broker, result.Row{int64(a.Broker), d.Dir, total, usable, derr}})
		}
	}
	var missing []error
	for _, f := range failed {
		rows = append(rows, brokerRow{f.ID, result.Row{int64(f.ID), nil, nil, nil, oneLine(f)}})
		missing = append(missing, f)
	}
	slices.SortStableFunc(rows, func(a, b brokerRow) int { return int(a.id) - int(b.id) })
	out := make([]result.Row, len(rows))
	for i, r := range rows {
		out[i] = r.row
	}
	res := result.NewSlice(showLogDirsCols, out)
	res.Warns = warns
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: "SHOW LOG DIRS", Missing: missing}
	}
	return res, nil
}

// replicaSizes is what DescribeLogDirs says of each partition's replicas.
type replicaSizes struct {
	leader map[kafka.TopicPartition]int64 // the leader replica's size; absent: unknown
	total  map[kafka.TopicPartition]int64 // the sum over every replica; absent: some replica unknown
	// offline counts replicas on brokers the cluster does not list (down
	// or fenced): no broker can size them, so their partitions' totals are
	// NULL, without a failure (see offlineNote).
	offline int
	// denied is a broker's refusal to describe its disks to this user
	// (CLUSTER_AUTHORIZATION_FAILED): sizes NULL, the result not partial.
	denied *kafka.BrokerError
	// unsized is what could not be sized: a broker that did not answer, a
	// replica its broker did not report. The sizes are NULL there, with a
	// warning naming each (see unsizedWarning), and the result is not
	// partial: the rows are the metadata, complete without the sizes.
	unsized []error
}

// unsizedWarning says which replicas could not be sized and why.
func (r replicaSizes) unsizedWarning() []string {
	if len(r.unsized) == 0 {
		return nil
	}
	const shown = 3
	why := make([]string, 0, shown)
	for i, e := range r.unsized {
		if i == shown {
			why = append(why, fmt.Sprintf("and %d more", len(r.unsized)-shown))
			break
		}
		why = append(why, oneLine(e))
	}
	return []string{"size_bytes and replicas_size_bytes are NULL where a replica could not be sized (SHOW LOG DIRS shows each broker's disks): " + strings.Join(why, "; ")}
}

// warnings is every reason some sizes are NULL.
func (r replicaSizes) warnings() []string {
	return append(r.deniedWarning(), r.unsizedWarning()...)
}

// deniedWarning says why the sizes are NULL when the user may not describe
// the brokers' disks.
func (r replicaSizes) deniedWarning() []string {
	if r.denied == nil {
		return nil
	}
	return []string{"size_bytes and replicas_size_bytes are NULL where a broker refused DescribeLogDirs (it needs DESCRIBE on the cluster): " + oneLine(r.denied)}
}

// offlineNote says why some replicas_size_bytes are NULL without the
// result being partial.
func (r replicaSizes) offlineNote() []string {
	if r.offline == 0 {
		return nil
	}
	return []string{fmt.Sprintf("replicas_size_bytes is NULL where a replica is offline (%d %s on brokers the cluster does not list)",
		r.offline, plural(r.offline, "replica", "replicas"))}
}

// sizeReplicas sizes every replica of parts: DescribeLogDirs to each
// broker that holds one (and only to those), asking each for just its own
// replicas of parts. What could not be sized is in unsized, one error per
// broker that did not answer and one per replica its broker did not report:
// the caller's size columns are NULL there, with a warning, and its result
// stays complete (a broker down must not fail SHOW TOPICS, which never
// needed that broker before it showed sizes). A replica on a broker the
// cluster does not list is offline, a note.
func (s *Session) sizeReplicas(ctx context.Context, m *kafka.Metadata, parts []kafka.TopicPartition) (replicaSizes, error) {
	sizes := replicaSizes{leader: map[kafka.TopicPartition]int64{}, total: map[kafka.TopicPartition]int64{}}
	plan := sizePlan(m, parts)
	if len(plan) == 0 {
		return sizes, nil
	}
	brokers := make([]int32, 0, len(plan))
	for id := range plan {
		brokers = append(brokers, id)
	}
	slices.Sort(brokers)
	answers, failed, err := s.cl.DescribeLogDirs(ctx, m, brokers, plan)
	if err != nil {
		return sizes, err
	}
	byBroker := map[int32]*kafka.BrokerLogDirs{}
	for i := range answers {
		byBroker[answers[i].Broker] = &answers[i]
	}
	var missing []error
	for _, f := range failed {
		if kafka.IsAuthorization(f.Err) {
			// DescribeLogDirs needs DESCRIBE on the cluster: a user allowed
			// to see topics but not the brokers' disks still gets the
			// statement, sizes NULL, with a warning (see deniedWarning).
			if sizes.denied == nil {
				sizes.denied = f
			}
			continue
		}
		missing = append(missing, f)
	}
	for _, tp := range parts {
		p, ok := partitionOf(m, tp)
		if !ok {
			continue
		}
		var sum int64
		known := len(p.Replicas) > 0
		for _, r := range p.Replicas {
			a := byBroker[r]
			if a == nil {
				// Its broker did not answer (in missing already), or the
				// cluster does not list it: an offline replica, which the
				// row's offline and under_replicated columns already say,
				// and which no broker can size.
				known = false
				if _, listed := m.Broker(r); !listed {
					sizes.offline++
				}
				continue
			}
			n, ok := a.Size(tp)
			if !ok {
				known = false
				missing = append(missing, &kafka.PartitionError{API: "DescribeLogDirs", Topic: tp.Topic, Partition: tp.Partition, Broker: r, Addr: a.Addr,
					Err: fmt.Errorf("broker %d is a replica in the metadata but reported no log of it (offline or not yet created)", r)})
				continue
			}
			sum += n
			if r == p.Leader {
				sizes.leader[tp] = n
			}
		}
		if known {
			sizes.total[tp] = sum
		}
	}
	sizes.unsized = missing
	return sizes, nil
}

// sizePlan lists, for each broker the metadata lists, its replicas among
// parts. A replica on a broker the metadata does not list is left out (and
// so is unknown to sizeReplicas).
func sizePlan(m *kafka.Metadata, parts []kafka.TopicPartition) map[int32][]kafka.TopicPartition {
	plan := map[int32][]kafka.TopicPartition{}
	for _, tp := range parts {
		p, ok := partitionOf(m, tp)
		if !ok {
			continue
		}
		for _, r := range p.Replicas {
			if _, listed := m.Broker(r); listed {
				plan[r] = append(plan[r], tp)
			}
		}
	}
	return plan
}

func partitionOf(m *kafka.Metadata, tp kafka.TopicPartition) (kafka.Partition, bool) {
	t := m.Topics[tp.Topic]
	if t == nil {
		return kafka.Partition{}, false
	}
	i, ok := slices.BinarySearchFunc(t.Partitions, tp.Partition, func(p kafka.Partition, id int32) int { return int(p.ID) - int(id) })
	if !ok {
		return kafka.Partition{}, false
	}
	return t.Partitions[i], true
}

// topicSizes sums a topic's leader replicas and all its replicas; either
// is NULL (nil) when some partition's size is unknown.
func topicSizes(t *kafka.Topic, sizes replicaSizes) (leader, total any) {
	var l, a int64
	lok, aok := true, true
	for _, p := range t.Partitions {
		tp := kafka.TopicPartition{Topic: t.Name, Partition: p.ID}
		if v, ok := sizes.leader[tp]; ok {
			l += v
		} else {
			lok = false
		}
		if v, ok := sizes.total[tp]; ok {
			a += v
		} else {
			aok = false
		}
	}
	if lok {
		leader = l
	}
	if aok {
		total = a
	}
	return leader, total
}
