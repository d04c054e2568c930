package main

import (
	"strings"
	"testing"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// TestTraceNamesBootstrapRequestsAsSuch: --trace of an import shows the
// requests its producer sends to a seed before it knows the broker (its
// FindCoordinator, ApiVersions, Metadata) as sent to a bootstrap address,
// not as "broker -2147483647", kgo's internal number for a seed, which is
// no broker a user can look up.
func TestTraceNamesBootstrapRequestsAsSuch(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic := kafkatest.TopicName(t)
		kafkatest.CreateTopic(t, b, topic, 3, 3, nil)
		var out, errOut strings.Builder
		code := Main([]string{"-b", strings.Join(b.Bootstrap(), ","), "--trace", "-q", "-e",
			"PRODUCE INTO " + topic + " FROM STDIN FORMAT lines"}, strings.NewReader("a\nb\nc\n"), &out, &errOut)
		trace := errOut.String()
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, trace)
		}
		if !strings.Contains(trace, "trace: Produce -> broker ") {
			t.Fatalf("no Produce in the trace:\n%s", trace)
		}
		if strings.Contains(trace, "-> broker -") {
			t.Errorf("the trace names a negative broker id:\n%s", trace)
		}
		if !strings.Contains(trace, "-> bootstrap address (") {
			t.Errorf("the trace shows no request to a bootstrap address (the producer's first requests go to one):\n%s", trace)
		}
	})
}
