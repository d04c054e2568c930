package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// topicSettle bounds the wait for every broker to agree on a created or
// dropped topic.
const topicSettle = 10 * time.Second

var adminCols = []result.Column{col("topic", result.String), col("result", result.String)}

// authzError is a denied admin request; errors.Is finds the Kafka error.
type authzError struct {
	msg string
	err error
}

func (e *authzError) Error() string { return e.msg }
func (e *authzError) Unwrap() error { return e.err }

func topicErr(verb, topic string, code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	if kafka.IsAuthorization(err) {
		// The broker's message ("Authorization failed.") adds nothing to
		// what was denied and what to ask for.
		return &authzError{fmt.Sprintf("%s %q: %s", verb, topic, kafka.Describe(err)), err}
	}
	detail := err.Error()
	if msg != nil && *msg != "" {
		detail += ": " + *msg
	}
	return fmt.Errorf("%s %q: %s", verb, topic, detail)
}

func (s *Session) createTopic(ctx context.Context, st *lang.CreateTopic) (result.Result, error) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = st.Topic
	rt.NumPartitions = -1 // the broker's num.partitions
	rt.ReplicationFactor = -1
	if st.Partitions != nil {
		rt.NumPartitions = *st.Partitions
	}
	if st.Replication != nil {
		rt.ReplicationFactor = *st.Replication
	}
	for _, c := range st.Configs {
		rc := kmsg.NewCreateTopicsRequestTopicConfig()
		rc.Name = c.Name
		rc.Value = kmsg.StringPtr(c.Value)
		rt.Configs = append(rt.Configs, rc)
	}
	req.Topics = append(req.Topics, rt)
	raw, _, err := s.cl.Controller(ctx, "CreateTopics", []string{st.Topic}, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("CREATE TOPIC %q: %w", st.Topic, err)
	}
	for _, t := range raw.(*kmsg.CreateTopicsResponse).Topics {
		if t.ErrorCode == kerr.TopicAlreadyExists.Code {
			return nil, fmt.Errorf("CREATE TOPIC %q: the topic already exists (DROP TOPIC it first, or pick another name)", st.Topic)
		}
		if err := topicErr("CREATE TOPIC", st.Topic, t.ErrorCode, t.ErrorMessage); err != nil {
			return nil, err
		}
	}
	s.forgetNames()
	res := result.NewSlice(adminCols, []result.Row{{st.Topic, "created"}})
	if !s.cl.WaitTopic(ctx, st.Topic, true, topicSettle) {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: topic %q was created, but not every broker knew it after %s; a statement right now may not see it yet", st.Topic, topicSettle))
	}
	return res, nil
}

func (s *Session) dropTopic(ctx context.Context, st *lang.DropTopic) (result.Result, error) {
	// Ask first, so that DROP TOPIC IF EXISTS can say what happened and a
	// plain DROP of a missing topic gets the usual unknown-topic error.
	if _, err := s.cl.Metadata(ctx, []string{st.Topic}); err != nil {
		var ut *kafka.UnknownTopicError
		if errors.As(err, &ut) && st.IfExists {
			return result.NewSlice(adminCols, []result.Row{{st.Topic, "did not exist"}}), nil
		}
		return nil, err
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 30000
	req.TopicNames = []string{st.Topic}
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(st.Topic)
	req.Topics = append(req.Topics, rt)
	raw, _, err := s.cl.Controller(ctx, "DeleteTopics", []string{st.Topic}, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.DeleteTopicsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("DROP TOPIC %q: %w", st.Topic, err)
	}
	for _, t := range raw.(*kmsg.DeleteTopicsResponse).Topics {
		if t.ErrorCode == kerr.UnknownTopicOrPartition.Code && st.IfExists {
			return result.NewSlice(adminCols, []result.Row{{st.Topic, "did not exist"}}), nil
		}
		if err := topicErr("DROP TOPIC", st.Topic, t.ErrorCode, t.ErrorMessage); err != nil {
			return nil, err
		}
	}
	s.forgetNames()
	res := result.NewSlice(adminCols, []result.Row{{st.Topic, "dropped"}})
	if !s.cl.WaitTopic(ctx, st.Topic, false, topicSettle) {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: topic %q was dropped, but not every broker had forgotten it after %s", st.Topic, topicSettle))
	}
	return res, nil
}
