package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ResourceKind is the kind of a config resource.
type ResourceKind int

const (
	TopicResource   ResourceKind = iota + 1
	BrokerResource               // one broker's own configs: only that broker answers
	ClusterResource              // the dynamic defaults of every broker (BROKER resource "")
)

// ConfigResource names a config resource.
type ConfigResource struct {
	Kind   ResourceKind
	Topic  string
	Broker int32
}

// String names the resource in messages and traces: topic "orders",
// broker 1, cluster.
func (r ConfigResource) String() string {
	switch r.Kind {
	case TopicResource:
		return strconv.Quote(r.Topic)
	case BrokerResource:
		return "broker " + strconv.Itoa(int(r.Broker))
	}
	return "cluster (every broker's dynamic defaults)"
}

// OwnBroker is the one broker a config request about r goes to: a
// broker's own configs only that broker answers for; false: any broker
// answers (KRaft brokers forward alters to the controller). sendConfig
// routes by it and EXPLAIN names the route by it.
func (r ConfigResource) OwnBroker() (int32, bool) { return r.Broker, r.Kind == BrokerResource }

// Item is what a config request about r carries, as the trace and EXPLAIN
// name it: topic orders, broker 1, cluster defaults.
func (r ConfigResource) Item() string { return r.item() }

func (r ConfigResource) item() string {
	switch r.Kind {
	case TopicResource:
		return "topic " + r.Topic
	case BrokerResource:
		return "broker " + strconv.Itoa(int(r.Broker))
	}
	return "cluster defaults"
}

func (r ConfigResource) wire() (kmsg.ConfigResourceType, string) {
	switch r.Kind {
	case TopicResource:
		return kmsg.ConfigResourceTypeTopic, r.Topic
	case BrokerResource:
		return kmsg.ConfigResourceTypeBroker, strconv.Itoa(int(r.Broker))
	}
	return kmsg.ConfigResourceTypeBroker, ""
}

// ConfigSource is where a config's value comes from, as DescribeConfigs
// says (its config_source).
type ConfigSource int8

const (
	SourceUnknown                    ConfigSource = ConfigSource(kmsg.ConfigSourceUnknown)
	SourceDynamicTopicConfig         ConfigSource = ConfigSource(kmsg.ConfigSourceDynamicTopicConfig)         // set on the topic
	SourceDynamicBrokerConfig        ConfigSource = ConfigSource(kmsg.ConfigSourceDynamicBrokerConfig)        // set on one broker
	SourceDynamicDefaultBrokerConfig ConfigSource = ConfigSource(kmsg.ConfigSourceDynamicDefaultBrokerConfig) // set for every broker (the cluster)
	SourceStaticBrokerConfig         ConfigSource = ConfigSource(kmsg.ConfigSourceStaticBrokerConfig)         // server.properties
	SourceDefaultConfig              ConfigSource = ConfigSource(kmsg.ConfigSourceDefaultConfig)              // Kafka's built-in default
)

// String is Kafka's name of the source (DYNAMIC_TOPIC_CONFIG, ...), what
// SHOW CONFIGS prints.
func (s ConfigSource) String() string { return kmsg.ConfigSource(s).String() }

// ConfigEntry is one config as a broker describes it.
type ConfigEntry struct {
	Name      string
	Value     *string // nil: no value, or a sensitive one the broker does not send
	Source    ConfigSource
	Sensitive bool
	ReadOnly  bool
}

// sendConfig routes a config request: a broker's own configs to that
// broker, everything else to any broker (KRaft brokers forward alters to
// the controller, KIP-590). It returns the id of the broker that answered.
//
// A topic's configs come from any broker; one that does not know the topic
// yet (created a moment ago: brokers learn of it one after the other)
// answers UNKNOWN_TOPIC_OR_PARTITION, so before that answer stands the
// topic is looked up as Metadata does (asking the other brokers), and the
// request goes again to a broker that knows it.
func (c *Cluster) sendConfig(ctx context.Context, api string, r ConfigResource, build func() kmsg.Request, unknownTopic func(kmsg.Response) bool) (kmsg.Response, int32, error) {
	items := []string{r.item()}
	if id, own := r.OwnBroker(); own {
		resp, err := c.ToBroker(ctx, api, id, items, build())
		return resp, id, err
	}
	resp, by, err := c.AnyBroker(ctx, api, items, build())
	if err != nil || r.Kind != TopicResource || !unknownTopic(resp) {
		return resp, by, err
	}
	m, merr := c.Metadata(ctx, []string{r.Topic})
	if merr != nil {
		return resp, by, nil // the first answer stands
	}
	again, err := c.send(ctx, api, m.AnsweredBy, items, build())
	if err != nil {
		return nil, m.AnsweredBy, err
	}
	return again, m.AnsweredBy, nil
}

// ConfigError is a broker's refusal of a config request for one resource.
type ConfigError struct {
	API      string
	Resource ConfigResource
	Broker   int32
	Addr     string
	Err      error
	Message  string // the broker's own explanation, often naming the config
}

func (e *ConfigError) Error() string {
	where := fmt.Sprintf("broker %d (%s)", e.Broker, e.Addr)
	if e.Broker < 0 {
		where = "bootstrap address " + e.Addr
	}
	msg := fmt.Sprintf("%s of %s on %s: %s", e.API, e.Resource.item(), where, describe(e.Err))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}
func (e *ConfigError) Unwrap() error { return e.Err }

// DescribeConfigs reads every config of r, with its source and flags.
func (c *Cluster) DescribeConfigs(ctx context.Context, r ConfigResource) ([]ConfigEntry, error) {
	const api = "DescribeConfigs"
	build := func() kmsg.Request {
		req := kmsg.NewPtrDescribeConfigsRequest()
		rr := kmsg.NewDescribeConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.wire()
		req.Resources = append(req.Resources, rr)
		return req
	}
	raw, by, err := c.sendConfig(ctx, api, r, build, func(resp kmsg.Response) bool {
		rs := resp.(*kmsg.DescribeConfigsResponse).Resources
		return len(rs) == 1 && rs[0].ErrorCode == kerr.UnknownTopicOrPartition.Code
	})
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.DescribeConfigsResponse)
	if len(resp.Resources) != 1 {
		return nil, &ConfigError{API: api, Resource: r, Broker: by, Addr: c.addr(by), Err: fmt.Errorf("the broker answered for %d resources, not 1", len(resp.Resources))}
	}
	res := resp.Resources[0]
	if res.ErrorCode != 0 {
		if res.ErrorCode == kerr.UnknownTopicOrPartition.Code && r.Kind == TopicResource {
			return nil, &UnknownTopicError{Topic: r.Topic}
		}
		return nil, &ConfigError{API: api, Resource: r, Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(res.ErrorCode), Message: deref(res.ErrorMessage)}
	}
	out := make([]ConfigEntry, 0, len(res.Configs))
	for _, e := range res.Configs {
		out = append(out, ConfigEntry{Name: e.Name, Value: e.Value, Source: ConfigSource(e.Source), Sensitive: e.IsSensitive, ReadOnly: e.ReadOnly})
	}
	return out, nil
}

// AlterOp is one change of IncrementalAlterConfigs: a SET with a value, or
// a DELETE (back to the default) with Value nil.
type AlterOp struct {
	Name  string
	Value *string // nil: delete (UNSET)
}

// AlterConfigs applies ops to r with IncrementalAlterConfigs, which changes
// only the configs named (the legacy AlterConfigs replaces the whole set and
// silently drops every config not named, so kql never sends it).
func (c *Cluster) AlterConfigs(ctx context.Context, r ConfigResource, ops []AlterOp) error {
	const api = "IncrementalAlterConfigs"
	build := func() kmsg.Request {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = r.wire()
		for _, op := range ops {
			rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			rc.Name = op.Name
			rc.Value = op.Value
			rc.Op = kmsg.IncrementalAlterConfigOpSet
			if op.Value == nil {
				rc.Op = kmsg.IncrementalAlterConfigOpDelete
			}
			rr.Configs = append(rr.Configs, rc)
		}
		req.Resources = append(req.Resources, rr)
		return req
	}
	// Setting a config again to the same value is harmless, so the request
	// may go twice (sendConfig).
	raw, by, err := c.sendConfig(ctx, api, r, build, func(resp kmsg.Response) bool {
		rs := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources
		return len(rs) == 1 && rs[0].ErrorCode == kerr.UnknownTopicOrPartition.Code
	})
	if err != nil {
		return err
	}
	resp := raw.(*kmsg.IncrementalAlterConfigsResponse)
	if len(resp.Resources) != 1 {
		return &ConfigError{API: api, Resource: r, Broker: by, Addr: c.addr(by), Err: fmt.Errorf("the broker answered for %d resources, not 1", len(resp.Resources))}
	}
	res := resp.Resources[0]
	if res.ErrorCode != 0 {
		if res.ErrorCode == kerr.UnknownTopicOrPartition.Code && r.Kind == TopicResource {
			return &UnknownTopicError{Topic: r.Topic}
		}
		return &ConfigError{API: api, Resource: r, Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(res.ErrorCode), Message: deref(res.ErrorMessage)}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// CreatePartitions raises topic's partition count to count. It goes where
// admin requests are accepted (see Controller): any broker on KRaft, which
// forwards it; the controller on kfake. It returns the broker that answered.
func (c *Cluster) CreatePartitions(ctx context.Context, topic string, count int32) (int32, error) {
	const api = "CreatePartitions"
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic = topic
	rt.Count = count
	req.Topics = append(req.Topics, rt)
	raw, by, err := c.Controller(ctx, api, []string{topic}, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.CreatePartitionsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if err != nil {
		return -1, err
	}
	for _, t := range raw.(*kmsg.CreatePartitionsResponse).Topics {
		if t.ErrorCode != 0 {
			if t.ErrorCode == kerr.UnknownTopicOrPartition.Code {
				return by, &UnknownTopicError{Topic: topic}
			}
			msg := describe(kerr.ErrorForCode(t.ErrorCode))
			if m := deref(t.ErrorMessage); m != "" {
				msg += ": " + m
			}
			return by, fmt.Errorf("%s of topic %q on broker %d (%s): %s", api, topic, by, c.addr(by), msg)
		}
	}
	return by, nil
}

// WaitPartitions waits (up to bound, or ctx) until every broker's metadata
// shows topic with count partitions, each with a leader. It reports whether
// they agreed in time.
func (c *Cluster) WaitPartitions(ctx context.Context, topic string, count int, bound time.Duration) bool {
	return c.waitEveryBroker(ctx, topic, bound, func(t *kmsg.MetadataResponseTopic) bool {
		return t.ErrorCode == 0 && len(t.Partitions) == count && allLed(t)
	})
}

// DeleteRecords moves each partition's log start offset up to the given
// offset, with one DeleteRecords per leader broker. It returns each
// partition's new low watermark. Asking again is harmless (the log start
// only moves up), so the Leaders retry is safe.
func (c *Cluster) DeleteRecords(ctx context.Context, m *Metadata, before map[TopicPartition]int64) (map[TopicPartition]int64, map[TopicPartition]*PartitionError, error) {
	parts := make([]TopicPartition, 0, len(before))
	for tp := range before {
		parts = append(parts, tp)
	}
	return Leaders(ctx, c, m, parts, LeaderRequest[int64]{
		API: "DeleteRecords",
		Build: func(bparts []TopicPartition) kmsg.Request {
			req := kmsg.NewPtrDeleteRecordsRequest()
			req.TimeoutMillis = 30000
			for _, tps := range byTopic(bparts) {
				rt := kmsg.NewDeleteRecordsRequestTopic()
				rt.Topic = tps.topic
				for _, p := range tps.partitions {
					rp := kmsg.NewDeleteRecordsRequestTopicPartition()
					rp.Partition = p
					rp.Offset = before[TopicPartition{tps.topic, p}]
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []PartAnswer[int64] {
			var out []PartAnswer[int64]
			for _, t := range raw.(*kmsg.DeleteRecordsResponse).Topics {
				for _, p := range t.Partitions {
					out = append(out, PartAnswer[int64]{TP: TopicPartition{t.Topic, p.Partition}, Code: p.ErrorCode, Value: p.LowWatermark})
				}
			}
			return out
		},
	})
}

// CommitOffsets commits offsets for group as an admin would (no member id,
// generation -1: the coordinator accepts it only while the group has no
// active members), at the group's coordinator, found again if it moved.
// The answer is per partition: failed holds the partitions the coordinator
// refused, each naming the broker that answered.
// m gives the topic ids that OffsetCommit v10+ carries instead of names.
func (c *Cluster) CommitOffsets(ctx context.Context, m *Metadata, group string, offsets map[TopicPartition]int64) (map[TopicPartition]*PartitionError, error) {
	const api = "OffsetCommit"
	parts := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		parts = append(parts, tp)
	}
	type answer = map[TopicPartition]int16
	idNames := make(map[[16]byte]string, len(m.Topics))
	for name, t := range m.Topics {
		idNames[t.ID] = name
	}
	var coordinator int32 = -1
	got, gfail, err := Coordinators(ctx, c, []string{group}, GroupRequest[answer]{
		API: api,
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrOffsetCommitRequest()
			req.Group = group
			req.Generation = -1
			for _, tps := range byTopic(parts) {
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = tps.topic
				if t, ok := m.Topics[tps.topic]; ok {
					rt.TopicID = t.ID
				}
				for _, p := range tps.partitions {
					rp := kmsg.NewOffsetCommitRequestTopicPartition()
					rp.Partition = p
					rp.Offset = offsets[TopicPartition{tps.topic, p}]
					rp.LeaderEpoch = -1
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[answer] {
			codes := answer{}
			var groupCode int16
			for _, t := range raw.(*kmsg.OffsetCommitResponse).Topics {
				name := t.Topic
				if name == "" {
					name = idNames[t.TopicID]
				}
				for _, p := range t.Partitions {
					codes[TopicPartition{name, p.Partition}] = p.ErrorCode
					// OffsetCommit has no group-level error: a moved
					// or loading coordinator answers it per partition.
					if Classify(p.ErrorCode) == MovedCoordinator {
						groupCode = p.ErrorCode
					}
				}
			}
			return []GroupAnswer[answer]{{Group: group, Value: codes, Code: groupCode}}
		},
		// Called under Coordinators' lock; the answer read below is after it returns.
		Answered: func(_ string, broker int32) { coordinator = broker },
	})
	if err != nil {
		return nil, err
	}
	if ge := gfail[group]; ge != nil {
		return nil, ge
	}
	codes := got[group]
	failed := map[TopicPartition]*PartitionError{}
	for _, tp := range parts {
		code, ok := codes[tp]
		switch {
		case !ok:
			failed[tp] = &PartitionError{API: api, Topic: tp.Topic, Partition: tp.Partition, Broker: coordinator, Addr: c.addr(coordinator),
				Err: errors.New("the coordinator's response did not mention this partition")}
		case code != 0:
			failed[tp] = &PartitionError{API: api, Topic: tp.Topic, Partition: tp.Partition, Broker: coordinator, Addr: c.addr(coordinator), Err: kerr.ErrorForCode(code)}
		}
	}
	if len(failed) == 0 {
		failed = nil
	}
	return failed, nil
}

// DeleteGroups deletes a group at its coordinator.
func (c *Cluster) DeleteGroup(ctx context.Context, group string) error {
	_, failed, err := Coordinators(ctx, c, []string{group}, GroupRequest[struct{}]{
		API: "DeleteGroups",
		Build: func(groups []string) kmsg.Request {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = groups
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[struct{}] {
			var out []GroupAnswer[struct{}]
			for _, g := range raw.(*kmsg.DeleteGroupsResponse).Groups {
				out = append(out, GroupAnswer[struct{}]{Group: g.Group, Code: g.ErrorCode})
			}
			return out
		},
	})
	if err != nil {
		return err
	}
	if ge := failed[group]; ge != nil {
		return ge
	}
	return nil
}
