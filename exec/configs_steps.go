package exec

import (
	"fmt"

	"github.com/kql-dev/kql/kafka"
)

// configStep is one config request about r, routed as kafka's sendConfig
// routes it (kafka.ConfigResource.OwnBroker), carrying r as it names it;
// again, if set, says when the request is repeated. A broker or topic m
// does not know is refused, as running the statement refuses it.
func configStep(api string, r kafka.ConfigResource, m *kafka.Metadata, again string) (adminStep, error) {
	if id, own := r.OwnBroker(); own {
		if _, ok := m.Broker(id); !ok {
			return adminStep{}, &kafka.UnknownBrokerError{ID: id, Known: brokerIDs(m)}
		}
		return adminStep{api: api, route: routeBroker, broker: id, label: r.Item() + again + " (only it answers for its own configs)"}, nil
	}
	if r.Kind == kafka.TopicResource {
		if _, ok := m.Topics[r.Topic]; !ok {
			return adminStep{}, &kafka.UnknownTopicError{Topic: r.Topic}
		}
	}
	return adminStep{api: api, route: routeAny, label: r.Item() + again}, nil
}

// showConfigsSteps are the requests of SHOW CONFIGS: one DescribeConfigs.
func showConfigsSteps(r kafka.ConfigResource, m *kafka.Metadata) ([]adminStep, error) {
	st, err := configStep("DescribeConfigs", r, m, "")
	return []adminStep{st}, err
}

// alterConfigsSteps are the requests of ALTER ... SET / UNSET, in the
// order alterConfigs sends them: the configs before, the change, then the
// configs again until the change reads back (readBack, at most
// configSettle).
func alterConfigsSteps(r kafka.ConfigResource, m *kafka.Metadata) ([]adminStep, error) {
	var steps []adminStep
	for _, s := range []struct{ api, again string }{
		{"DescribeConfigs", ""},
		{"IncrementalAlterConfigs", ""},
		{"DescribeConfigs", fmt.Sprintf(", again until the change reads back (at most %s)", configSettle)},
	} {
		st, err := configStep(s.api, r, m, s.again)
		if err != nil {
			return nil, err
		}
		steps = append(steps, st)
	}
	return steps, nil
}
