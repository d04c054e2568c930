package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// topicErr is a topic the controller refused, as CREATE and DROP TOPIC say it.
func topicErr(verb string, te *kafka.TopicError) error {
	if kafka.IsAuthorization(te.Err) {
		// The broker's message ("Authorization failed.") adds nothing to
		// what was denied and what to ask for.
		return &authzError{fmt.Sprintf("%s %q: %s", verb, te.Topic, kafka.Describe(te.Err)), te.Err}
	}
	detail := te.Err.Error()
	if te.Message != "" {
		detail += ": " + te.Message
	}
	return fmt.Errorf("%s %q: %s", verb, te.Topic, detail)
}

func (s *Session) createTopic(ctx context.Context, st *lang.CreateTopic) (result.Result, error) {
	t := kafka.NewTopic{Name: st.Topic, Partitions: -1, Replication: -1} // -1: the broker's num.partitions, default.replication.factor
	if st.Partitions != nil {
		t.Partitions = *st.Partitions
	}
	if st.Replication != nil {
		t.Replication = *st.Replication
	}
	for _, c := range st.Configs {
		t.Configs = append(t.Configs, kafka.TopicConfig{Name: c.Name, Value: c.Value})
	}
	if err := s.cl.CreateTopic(ctx, t); err != nil {
		var te *kafka.TopicError
		switch {
		case !errors.As(err, &te):
			return nil, fmt.Errorf("CREATE TOPIC %q: %w", st.Topic, err)
		case kafka.IsTopicExists(te.Err):
			return nil, fmt.Errorf("CREATE TOPIC %q: the topic already exists (DROP TOPIC it first, or pick another name)", st.Topic)
		}
		return nil, topicErr("CREATE TOPIC", te)
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
	if err := s.cl.DeleteTopic(ctx, st.Topic); err != nil {
		var te *kafka.TopicError
		switch {
		case !errors.As(err, &te):
			return nil, fmt.Errorf("DROP TOPIC %q: %w", st.Topic, err)
		case kafka.IsUnknownTopicOrPartition(te.Err) && st.IfExists:
			return result.NewSlice(adminCols, []result.Row{{st.Topic, "did not exist"}}), nil
		}
		return nil, topicErr("DROP TOPIC", te)
	}
	s.forgetNames()
	res := result.NewSlice(adminCols, []result.Row{{st.Topic, "dropped"}})
	if !s.cl.WaitTopic(ctx, st.Topic, false, topicSettle) {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: topic %q was dropped, but not every broker had forgotten it after %s", st.Topic, topicSettle))
	}
	return res, nil
}
