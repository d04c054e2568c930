package main

import (
	"strings"
	"testing"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// An import that fails while it writes names its statement once: the
// shell's prefix, not the shell's and then the import's own
// ("-e:1: PRODUCE INTO t ...: PRODUCE INTO t FROM stdin: ...").
func TestImportErrorNamesTheStatementOnce(t *testing.T) {
	f := kafkatest.NewFake(t)
	topic := kafkatest.TopicName(t)
	kafkatest.CreateTopic(t, f, topic, 1, 3, nil)
	var out, errOut strings.Builder
	code := Main([]string{"-b", strings.Join(f.Bootstrap(), ","), "-q", "-e",
		"PRODUCE INTO " + topic + " FROM STDIN FORMAT jsonl"}, strings.NewReader("{\"value\":\"a\"}\nnot json\n"), &out, &errOut)
	msg := errOut.String()
	if code == 0 {
		t.Fatalf("exit 0 for a bad line:\n%s", msg)
	}
	if n := strings.Count(msg, "PRODUCE INTO "+topic); n != 1 {
		t.Errorf("the statement is named %d times, want once:\n%s", n, msg)
	}
	if !strings.Contains(msg, "stdin:2:") {
		t.Errorf("the error does not name the input line:\n%s", msg)
	}
}
