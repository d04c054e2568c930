package exec

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// A JSON path that gives a number, a boolean or an object copies its JSON
// text into the new record, as jsonl writes it; a string, its text.
func TestInsertCopiesAJSONPathsValue(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		src, cl, _ := createSpreadTopic(t, b)
		to := kafkatest.TopicName(t) + "-to"
		spreadDest(t, b, to, 3)
		require.NoError(t, cl.ProduceSync(ctxT(t),
			&kgo.Record{Topic: src, Partition: 0, Key: []byte("n"), Value: []byte(`{"v": 9.50}`)},
			&kgo.Record{Topic: src, Partition: 1, Key: []byte("o"), Value: []byte(`{"v": {"a": [1, true]}}`)},
			&kgo.Record{Topic: src, Partition: 2, Key: []byte("b"), Value: []byte(`{"v": false}`)},
			&kgo.Record{Topic: src, Partition: 3, Key: []byte("s"), Value: []byte(`{"v": "text"}`)},
		).FirstErr())

		mustRun(t, s, parse(t, fmt.Sprintf("INSERT INTO %q SELECT key, value.v AS value FROM %q EXECUTE", to, src)))
		got := map[string]string{}
		for _, r := range committedEventually(t, s, to, 4) {
			got[string(r[3].([]byte))] = string(r[4].([]byte))
		}
		require.Equal(t, map[string]string{"n": "9.50", "o": `{"a":[1,true]}`, "b": "false", "s": "text"}, got)
	})
}
