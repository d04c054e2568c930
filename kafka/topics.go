package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// NewTopic is a topic to create. Partitions and Replication of -1 take the
// broker's defaults (num.partitions, default.replication.factor).
type NewTopic struct {
	Name        string
	Partitions  int32
	Replication int16
	Configs     []TopicConfig
}

// TopicConfig is one config a topic is created with.
type TopicConfig struct{ Name, Value string }

// TopicError is the refusal of one topic in CreateTopics or DeleteTopics:
// the request was answered, this topic was not created or deleted.
type TopicError struct {
	API     string
	Topic   string
	Broker  int32
	Addr    string
	Err     error  // the Kafka error
	Message string // the broker's own explanation, if it sent one
}

func (e *TopicError) Error() string {
	msg := fmt.Sprintf("%s of topic %q on broker %d (%s): %s", e.API, e.Topic, e.Broker, e.Addr, describe(e.Err))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}
func (e *TopicError) Unwrap() error { return e.Err }

// IsTopicExists reports TOPIC_ALREADY_EXISTS.
func IsTopicExists(err error) bool { return errors.Is(err, kerr.TopicAlreadyExists) }

// IsUnknownTopicOrPartition reports UNKNOWN_TOPIC_OR_PARTITION.
func IsUnknownTopicOrPartition(err error) bool { return errors.Is(err, kerr.UnknownTopicOrPartition) }

// CreateTopic creates t where admin requests are accepted (Controller: the
// controller, or any broker on KRaft, which forwards it). A refusal is a
// *TopicError naming the broker that answered.
func (c *Cluster) CreateTopic(ctx context.Context, t NewTopic) error {
	const api = "CreateTopics"
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = adminTimeoutMillis
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = t.Name
	rt.NumPartitions = t.Partitions
	rt.ReplicationFactor = t.Replication
	for _, cfg := range t.Configs {
		rc := kmsg.NewCreateTopicsRequestTopicConfig()
		rc.Name = cfg.Name
		rc.Value = kmsg.StringPtr(cfg.Value)
		rt.Configs = append(rt.Configs, rc)
	}
	req.Topics = append(req.Topics, rt)
	raw, by, err := c.Controller(ctx, api, []string{t.Name}, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	for _, rt := range raw.(*kmsg.CreateTopicsResponse).Topics {
		if rt.Topic == t.Name {
			return c.topicError(api, t.Name, by, rt.ErrorCode, rt.ErrorMessage)
		}
	}
	return &TopicError{API: api, Topic: t.Name, Broker: by, Addr: c.addr(by), Err: errTopicNotMentioned}
}

// DeleteTopic deletes topic where admin requests are accepted (see
// CreateTopic). A refusal is a *TopicError.
func (c *Cluster) DeleteTopic(ctx context.Context, topic string) error {
	const api = "DeleteTopics"
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = adminTimeoutMillis
	req.TopicNames = []string{topic}
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	raw, by, err := c.Controller(ctx, api, []string{topic}, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.DeleteTopicsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	for _, rt := range raw.(*kmsg.DeleteTopicsResponse).Topics {
		// v6+ may name the topic by id only; one topic was asked.
		if rt.Topic == nil || *rt.Topic == topic {
			return c.topicError(api, topic, by, rt.ErrorCode, rt.ErrorMessage)
		}
	}
	return &TopicError{API: api, Topic: topic, Broker: by, Addr: c.addr(by), Err: errTopicNotMentioned}
}

// errTopicNotMentioned is an answer that left out the one topic asked: it
// says nothing of whether the topic was created or deleted.
var errTopicNotMentioned = errors.New("the broker's response did not mention this topic: whether the change was made is unknown (SHOW TOPICS tells)")

func (c *Cluster) topicError(api, topic string, by int32, code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	return &TopicError{API: api, Topic: topic, Broker: by, Addr: c.addr(by), Err: err, Message: deref(msg)}
}
