package exec

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

func TestCreateTopicErrorsAreClear(t *testing.T) {
	f := newFake(t)
	_, _, err := run(t, f.sess, &lang.CreateTopic{Topic: "t", Partitions: i32(1), Replication: i16(5)})
	require.ErrorContains(t, err, `CREATE TOPIC "t"`)
	require.ErrorContains(t, err, "INVALID_REPLICATION_FACTOR")
	_, _, err = run(t, f.sess, &lang.DropTopic{Topic: "nope"})
	require.EqualError(t, err, `no topic named "nope" (SHOW TOPICS lists the topics)`)
	rows, _ := mustRun(t, f.sess, &lang.DropTopic{Topic: "nope", IfExists: true})
	require.Equal(t, []result.Row{{"nope", "did not exist"}}, rows)
}

// A bad topic config is an error that names the config. Real Kafka only:
// kfake accepts any config, so there is nothing to check there.
func TestCreateTopicBadConfigNamesIt(t *testing.T) {
	func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		name := kafkatest.TopicName(t)
		_, _, err := run(t, s, &lang.CreateTopic{Topic: name, Configs: []lang.TopicConfig{{Name: "retention.ms", Value: "soon"}}})
		require.ErrorContains(t, err, fmt.Sprintf("CREATE TOPIC %q", name))
		require.ErrorContains(t, err, "retention.ms")
		_, _, err = run(t, s, &lang.CreateTopic{Topic: name, Configs: []lang.TopicConfig{{Name: "no.such.config", Value: "1"}}})
		require.ErrorContains(t, err, "no.such.config")
		_, _, err = run(t, s, &lang.CreateTopic{Topic: name, Replication: i16(4)})
		require.ErrorContains(t, err, "INVALID_REPLICATION_FACTOR")
		require.ErrorContains(t, err, "3 broker")
	}(t, kafkatest.Shared(t))
}

// CREATE TOPIC, then at once the statements a user types next. The next
// Metadata goes to another broker (round robin), which may not have the new
// topic yet.
func TestStatementsRightAfterCreateTopic(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		for i := 0; i < 8; i++ {
			name := kafkatest.TopicName(t)
			mustRun(t, s, &lang.CreateTopic{Topic: name, Partitions: i32(3), Replication: i16(3)})
			_, _, err := run(t, s, &lang.Produce{Topic: name, Partition: i32(int32(i % 3)), Value: &lang.Literal{Bytes: []byte("v")}})
			require.NoError(t, err, "PRODUCE right after CREATE TOPIC (round %d)", i)
			rows, _, err := run(t, s, &lang.DescribeTopic{Topic: name})
			require.NoError(t, err, "DESCRIBE TOPIC right after CREATE TOPIC (round %d)", i)
			require.Len(t, rows, 3)
			mustRun(t, s, &lang.DropTopic{Topic: name})
			_, _, err = run(t, s, &lang.DescribeTopic{Topic: name})
			require.Error(t, err, "DESCRIBE TOPIC right after DROP TOPIC (round %d)", i)
		}
	})
}
