package exec

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// A record whose destination expression is an empty string is refused
// with a hint that narrows the SELECT to what has a destination, and the
// statement the hint gives (it is run here, as a user would paste it)
// leaves out that record and the NULL ones too, and copies the rest.
func TestInsertToTopicEmptyDestinationHintWorks(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		src, cl, _ := createSpreadTopic(t, b)
		to := kafkatest.TopicName(t) + "-to"
		spreadDest(t, b, to, 3)
		h := func(v string) []kgo.RecordHeader { return []kgo.RecordHeader{{Key: "to", Value: []byte(v)}} }
		require.NoError(t, cl.ProduceSync(ctxT(t),
			&kgo.Record{Topic: src, Partition: 0, Key: []byte("a"), Value: []byte("v"), Headers: h(to)},
			&kgo.Record{Topic: src, Partition: 1, Key: []byte("empty"), Value: []byte("v"), Headers: h("")},
			&kgo.Record{Topic: src, Partition: 2, Key: []byte("none"), Value: []byte("v")},
			&kgo.Record{Topic: src, Partition: 3, Key: []byte("b"), Value: []byte("v"), Headers: h(to)},
		).FirstErr())

		for _, c := range []struct{ stmt, where string }{
			{"INSERT INTO TOPIC header('to') SELECT * FROM %q EXECUTE", "WHERE "},
			{"INSERT INTO TOPIC header('to') SELECT * FROM %q WHERE key <> 'b' EXECUTE", "AND "},
		} {
			_, _, err := run(t, s, parse(t, fmt.Sprintf(c.stmt, src)))
			require.Error(t, err)
			msg := err.Error()
			require.Regexp(t, `the record at [12]:0 has no destination: header\('to'\) is (NULL|empty); nothing was written`, msg)
			m := regexp.MustCompile(`narrow the SELECT(?:'s WHERE)? with (.*)\)$`).FindStringSubmatch(msg)
			require.NotNil(t, m, "a hint in %q", msg)
			require.True(t, strings.HasPrefix(m[1], c.where), "the hint %q starts with %q", m[1], c.where)
			require.Equal(t, "header('to') IS NOT NULL AND header('to') <> ''", strings.TrimPrefix(m[1], c.where))
		}

		hinted := fmt.Sprintf("INSERT INTO TOPIC header('to') SELECT * FROM %q WHERE header('to') IS NOT NULL AND header('to') <> '' EXECUTE", src)
		rows, _ := mustRun(t, s, parse(t, hinted))
		require.Equal(t, int64(2), sumRecords(rows), "the two records with a destination: %v", rows)
		var keys []string
		for _, r := range committedEventually(t, s, to, 2) {
			keys = append(keys, string(r[3].([]byte)))
		}
		require.ElementsMatch(t, []string{"a", "b"}, keys)
	})
}

// A destination expression that gives no text names no topic: one whose
// type is known (a number, a boolean, a timestamp, headers, NULL) is
// refused before anything is read; one whose value is not text only for
// some records (a JSON path) names the record and what it gave.
func TestInsertToTopicDestinationMustBeText(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 2)
	f.produce(t, "src", 2, 2)
	for expr, kind := range map[string]string{
		"42":            "a number",
		"partition":     "a number",
		"1.5":           "a number",
		"offset + 1":    "a number",
		"key = 'a'":     "TRUE or FALSE",
		"timestamp":     "a timestamp",
		"headers":       "headers",
		"NULL":          "NULL for every record",
		"''":            "an empty text for every record",
		"length(value)": "a number",
	} {
		f.trace.reset()
		_, _, err := run(t, f.sess, parse(t, "INSERT INTO TOPIC "+expr+" SELECT * FROM src EXECUTE"))
		require.Error(t, err, expr)
		require.Contains(t, err.Error(), fmt.Sprintf("the destination TOPIC %s gives %s, not a topic name; nothing was read or written", expr, kind))
		require.NotContains(t, err.Error(), "is NULL or empty")
		require.Empty(t, f.trace.count("Fetch"), "%s: refused before reading", expr)
	}

	// A JSON path's type is known only per record.
	_, err := f.kcl.ProduceSync(ctxT(t), &kgo.Record{Topic: "src", Key: []byte("j"), Value: []byte(`{"to": 7}`)}).First()
	require.NoError(t, err)
	_, _, err = run(t, f.sess, parse(t, "INSERT INTO TOPIC value.to SELECT * FROM src WHERE key = 'j' EXECUTE"))
	require.Error(t, err)
	require.Regexp(t, `^the record at \d:\d+ has no destination: value.to gives 7, not text; nothing was written$`, err.Error())
}
