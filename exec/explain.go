package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

var explainCols = []result.Column{
	col("step", result.Int), col("api", result.String), col("broker", result.Int),
	col("address", result.String), col("partitions_or_groups", result.String),
}

// planner collects the steps of an EXPLAIN. Steps are numbered by phase:
// requests of one step run concurrently (one per broker).
type planner struct {
	rows []result.Row
	step int64
}

func (p *planner) any(api, items string) {
	p.step++
	p.rows = append(p.rows, result.Row{p.step, api, nil, "any broker", items})
}

func (p *planner) perBroker(api string, m *kafka.Metadata, plan map[int32][]string) {
	p.step++
	ids := make([]int32, 0, len(plan))
	for id := range plan {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		p.rows = append(p.rows, result.Row{p.step, api, int64(id), m.Addr(id), strings.Join(plan[id], ", ")})
	}
}

func (p *planner) leaders(api string, m *kafka.Metadata, parts []kafka.TopicPartition) {
	plan, failed := kafka.PlanLeaders(api, m, parts)
	byBroker := map[int32][]string{}
	for id, tps := range plan {
		for _, tp := range tps {
			byBroker[id] = append(byBroker[id], tp.String())
		}
	}
	p.perBroker(api, m, byBroker)
	for _, pe := range kafka.SortedPartitionErrors(failed) {
		p.rows = append(p.rows, result.Row{p.step, api, nil, "no leader", fmt.Sprintf("%s/%d", pe.Topic, pe.Partition)})
	}
}

// leadersLabelled is leaders with each broker's partitions named after
// what is asked of them (one ListOffsets kind among several in a step).
func (p *planner) leadersLabelled(api, label string, m *kafka.Metadata, parts []kafka.TopicPartition, sameStep bool) {
	plan, failed := kafka.PlanLeaders(api, m, parts)
	if len(plan) == 0 && len(failed) == 0 {
		return
	}
	if sameStep {
		p.step--
	}
	byBroker := map[int32][]string{}
	for id, tps := range plan {
		byBroker[id] = []string{label + ": " + tpList(tps)}
	}
	p.perBroker(api, m, byBroker)
	for _, pe := range kafka.SortedPartitionErrors(failed) {
		p.rows = append(p.rows, result.Row{p.step, api, nil, "no leader", fmt.Sprintf("%s/%d", pe.Topic, pe.Partition)})
	}
}

// explainWriteRates lists the ListOffsets of records_last_minute and
// last_write; withLatest adds the latest offsets they count from.
func explainWriteRates(p *planner, m *kafka.Metadata, parts []kafka.TopicPartition, withLatest, sameStep bool) {
	if withLatest {
		p.leadersLabelled("ListOffsets", "latest offset", m, parts, sameStep)
		sameStep = true
	}
	p.leadersLabelled("ListOffsets", "offset at now-60s (records_last_minute)", m, parts, sameStep)
	p.leadersLabelled("ListOffsets", "max timestamp (last_write)", m, parts, true)
}

// explain prints the plan of a statement without running it: which request
// goes to which broker, carrying which partitions or groups. It reads
// metadata (and finds coordinators) to know the routes.
func (s *Session) explain(ctx context.Context, st *lang.Explain) (result.Result, error) {
	p := &planner{}
	m, err := s.cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	// topic looks name up, asking by name when the all-topics answer lacks
	// it (a topic created a moment ago), and keeps it in m for the plan.
	topic := func(name string) (*kafka.Topic, error) {
		with, err := s.cl.WithTopic(ctx, m, name)
		if err != nil {
			return nil, err
		}
		m = with
		return m.Topics[name], nil
	}
	if ok, err := s.explainMove(ctx, p, m, st.Stmt); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return result.NewSlice(explainCols, p.rows), nil
	}
	switch x := st.Stmt.(type) {
	case *lang.ShowTopics:
		p.any("Metadata", "all topics")
		match, err := likeMatcher(x.Like)
		if err != nil {
			return nil, err
		}
		var parts []kafka.TopicPartition
		for _, name := range m.TopicNames() {
			if match(name) {
				parts = append(parts, partitionsOf(m.Topics[name])...)
			}
		}
		explainWriteRates(p, m, parts, true, false)
		explainSizes(p, m, parts, len(parts) > 0) // concurrently with the write rates
	case *lang.ShowBrokers:
		p.any("Metadata", "brokers")
	case *lang.ShowCluster:
		p.any("Metadata", "all topics")
		p.any("DescribeQuorum", "__cluster_metadata/0")
	case *lang.ShowGroups:
		p.any("Metadata", "brokers")
		everyBroker(p, m, "ListGroups", "")
		p.step++
		p.rows = append(p.rows,
			result.Row{p.step, "Metadata", nil, "any broker", "all topics"},
			result.Row{p.step, "FindCoordinator", nil, "any broker", "the listed groups"},
			result.Row{p.step, "DescribeGroups", nil, "each group's coordinator", "its listed groups, one request per coordinator"},
			result.Row{p.step, "OffsetFetch", nil, "each group's coordinator", "its listed groups, one request per coordinator"})
		explainOffsetFetchNaming(p)
		p.step++
		p.rows = append(p.rows,
			result.Row{p.step, "ConsumerGroupDescribe", nil, "each group's coordinator", "groups of the new consumer protocol, if any"},
			result.Row{p.step, "ListOffsets", nil, "each committed partition's leader", "every committed partition, one request per leader broker"})
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "Fetch", nil, "each lagging partition's leader",
			"the record at every lagging committed offset (max_lag_ms), all groups at once: one request per leader broker, one more per further group at another offset of the same partition; again, per leader broker, for what a full response left out or a batch larger than its 64 KiB share"})
	case *lang.ShowPartitions:
		what := "all topics"
		if x.Topic != nil {
			what = *x.Topic
			if _, err := topic(*x.Topic); err != nil {
				return nil, err
			}
		}
		p.any("Metadata", what)
		match, err := likeMatcher(x.Like)
		if err != nil {
			return nil, err
		}
		_, parts := showPartitionsOf(m, x.Topic, match)
		p.leaders("ListOffsets", m, parts)
		p.step--
		p.leaders("ListOffsets", m, parts) // both bounds in the same step, concurrently
		explainSizes(p, m, parts, true)    // and the replicas' sizes
		explainWriteRates(p, m, parts, false, false)
	case *lang.DescribeTopic:
		t, err := topic(x.Topic)
		if err != nil {
			return nil, err
		}
		p.any("Metadata", x.Topic)
		p.leaders("ListOffsets", m, partitionsOf(t))
		p.step--
		p.leaders("ListOffsets", m, partitionsOf(t)) // read_committed, the last stable offset, with the earliest: before the latest
		p.leaders("ListOffsets", m, partitionsOf(t))
	case *lang.DescribeGroup:
		coords, cfail, err := s.cl.FindCoordinators(ctx, []string{x.Group})
		if err != nil {
			return nil, err
		}
		if ge := cfail[x.Group]; ge != nil {
			return nil, fmt.Errorf("EXPLAIN cannot route DESCRIBE GROUP: %w", ge)
		}
		p.any("FindCoordinator", x.Group)
		if id, ok := coords[x.Group]; ok {
			p.perBroker("DescribeGroups", m, map[int32][]string{id: {x.Group}})
			p.perBroker("OffsetFetch", m, map[int32][]string{id: {x.Group}})
			explainOffsetFetchNaming(p)
		}
		shareQuestion(p)
		p.any("Metadata", "all topics")
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "ListOffsets", nil, "each committed partition's leader", "the group's committed partitions"})
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "Fetch", nil, "each lagging partition's leader", "the record at the committed offset of each lagging partition (lag_ms), one request per leader broker; again, per leader broker, for what a full response left out or a batch larger than its 64 KiB share"})
	case *lang.Consume:
		t, err := topic(x.Topic)
		if err != nil {
			return nil, err
		}
		pl, _, err := s.planRecords(ctx, x, t)
		if err != nil {
			return nil, err
		}
		p.any("Metadata", x.Topic)
		if _, encoded := schema.HeaderID(x.PartitionForKey); s.Registry != nil && x.PartitionForKey != nil && !encoded {
			// partitionKey's lookup, made before the first ListOffsets
			// (EXPLAIN names every registry request a statement makes).
			k, _ := schema.TopicSubjects(x.Topic)
			p.registry(s.Registry, [2]string{fmt.Sprintf("GET /subjects/%s/versions/latest", k), "PARTITION FOR KEY: the key subject, if the topic has one"},
				[2]string{"GET /schemas/ids/{id}", "its schema and references (once per session)"})
		}
		explainReads(p, m, pl)
		if s.Registry != nil && !s.allLocal(x) {
			// Alongside the Fetches, not a step of its own: a schema id is
			// fetched when a record first carries it.
			p.rows = append(p.rows, result.Row{p.step, "Registry GET /schemas/ids/{id}", nil, s.Registry.URLs(),
				"each schema id a record carries, once per session (cached)"})
		}
		if pl.keyHow != "" {
			p.rows = append(p.rows, result.Row{nil, "Note", nil, "kql", "PARTITION FOR KEY hashes " + pl.keyHow})
		}
		if err := s.explainLocal(p, x.Topic, "decodes", x.KeyAs, x.ValueAs); err != nil {
			return nil, err
		}
		explainQuery(p, pl, func(key []byte) int32 {
			if b, _, _, err := s.consumePartitionKey(ctx, x, key); err == nil {
				key = b
			}
			return kafka.PartitionForKey(x.Topic, key, len(t.Partitions))
		})
	case *lang.Produce:
		t, err := topic(x.Topic)
		if err != nil {
			return nil, err
		}
		p.any("Metadata", x.Topic)
		p.registryLookup("key", x.KeySchema, s.Registry)
		p.registryLookup("value", x.ValueSchema, s.Registry)
		if err := s.explainLocal(p, x.Topic, "encodes", x.KeyAs, x.ValueAs, x.KeySchema, x.ValueSchema); err != nil {
			return nil, err
		}
		p.any("InitProducerID", "idempotent producer id (first PRODUCE of the session)")
		if x.Partition == nil && (x.Key == nil || x.Key.Null) && len(t.Partitions) > 0 {
			// Round robin: name the partition the next PRODUCE will take,
			// without taking it.
			p.leaders("Produce", m, []kafka.TopicPartition{{Topic: x.Topic, Partition: nextRoundRobin(t)}})
			break
		}
		// The partition of a key is the murmur2 of the bytes written: with
		// a KEY SCHEMA, the encoded key (the registry is read, nothing is
		// written).
		key, _, err := s.encodeSide(ctx, x.Topic, "key", x.Key, x.KeySchema, x.KeyAs)
		if err != nil {
			return nil, err
		}
		part, err := choosePartition(t, x, key)
		if err != nil {
			return nil, err
		}
		p.leaders("Produce", m, []kafka.TopicPartition{{Topic: x.Topic, Partition: part}})
	case *lang.ShowSubjects, *lang.DescribeSubject, *lang.ShowSchemas:
		if s.Registry == nil {
			return nil, errNoRegistry("EXPLAIN of a registry statement")
		}
		p.registry(s.Registry, registryRequests(x)...)
	case *lang.CreateTopic, *lang.DropTopic:
		name, api := "", "CreateTopics"
		if c, ok := x.(*lang.CreateTopic); ok {
			name = c.Topic
		} else {
			name, api = x.(*lang.DropTopic).Topic, "DeleteTopics"
		}
		p.any("Metadata", "controller id")
		p.perBroker(api, m, map[int32][]string{m.ControllerID: {name}})
	default:
		ok, err := s.explainAdmin(ctx, p, m, st.Stmt)
		if err == nil && !ok {
			ok, err = s.explainUsers(ctx, p, m, st.Stmt)
		}
		if err != nil {
			return nil, err
		}
		ok = ok || explainACL(p, m, st.Stmt)
		if !ok {
			if ok, err = s.explainOps(ctx, p, m, st.Stmt); err != nil {
				return nil, err
			}
		}
		if !ok {
			return nil, fmt.Errorf("EXPLAIN: cannot plan a %T", st.Stmt)
		}
	}
	if q, ok := st.Stmt.(lang.Queryable); ok {
		planMetaQuery(st.Stmt, q.MetaQuery()).explain(p) // WHERE / ORDER BY / LIMIT
	}
	return result.NewSlice(explainCols, p.rows), nil
}

// forwarded is how EXPLAIN names where a cluster-wide write goes (ACLs,
// SCRAM credentials, quotas): on KRaft any broker takes it and forwards it
// to the active controller, which writes it to the metadata log (KIP-590);
// kfake and older clusters want the controller itself.
const forwarded = " (a KRaft broker forwards it to the active controller)"

// shareQuestion is the request DESCRIBE GROUP and RESET GROUP send only
// for a name no consumer group has, to point to the share group statement
// if it is one.
func shareQuestion(p *planner) {
	p.step++
	p.rows = append(p.rows, result.Row{p.step, "ShareGroupDescribe", nil, "the group's coordinator", "only if no consumer group has that name (is it a share group?)"})
}
