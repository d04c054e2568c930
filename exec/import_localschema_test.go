package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// An import encodes each value with the topic's local schema, as PRODUCE
// encodes its literal: a topic read through a local Avro schema exports
// JSON text, and that export imports back as the same Avro bytes, given
// by the statement's VALUE AS or by the session's mapping. A value that
// does not fit the schema, on the file's last line, writes nothing and
// names line, column and field. (The import used to write the JSON text
// itself, silently.)
func TestImportEncodesWithTheLocalSchema(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		src, _ := localTopic(t, b)
		s, _ := localSession(t, b)
		avsc := filepath.Join(localAvroDir, "order.avsc")
		for i := range 12 {
			_, err := s.Execute(ctxT(t), parse(t, fmt.Sprintf(`PRODUCE INTO %s KEY 'k%d' VALUE '{"id": %d, "customer": "c%d", "total": {"currency": "EUR", "units": %d}}' VALUE AS AVRO '%s'`,
				lang.QuoteName(src), i, i, i, i*10, avsc)))
			require.NoError(t, err)
		}
		raw := func(topic string) map[string]string { // the bytes, decoded by no mapping
			mapped := s.Local.Session
			s.Local.Session = nil
			defer func() { s.Local.Session = mapped }()
			out := map[string]string{}
			// An import's last commit is visible once its markers are
			// written, a moment after EndTxn answered.
			for _, r := range committedEventually(t, s, topic, 12) {
				out[string(r[3].([]byte))] = string(r[4].([]byte))
			}
			return out
		}
		want := raw(src)
		require.Len(t, want, 12)

		export := filepath.Join(t.TempDir(), "orders.jsonl")
		f, err := os.Create(export)
		require.NoError(t, err)
		rows, _, _ := query(t, s, fmt.Sprintf(`CONSUME %s LIMIT ALL VALUE AS AVRO '%s'`, lang.QuoteName(src), avsc))
		for _, r := range rows {
			v := string(r[4].(result.JSON))
			require.True(t, strings.HasPrefix(v, `{"id":`), "exported decoded: %s", v)
			fmt.Fprintf(f, "{\"key\":%q,\"value\":%q}\n", r[3], v)
		}
		require.NoError(t, f.Close())

		byClause := kafkatest.TopicName(t) + "-clause"
		spreadDest(t, b, byClause, 3)
		_, _, err = run(t, s, parse(t, fmt.Sprintf(`PRODUCE INTO %s FROM FILE '%s' VALUE AS AVRO '%s'`, lang.QuoteName(byClause), export, avsc)))
		require.NoError(t, err)
		require.Equal(t, want, raw(byClause), "the same Avro bytes, key by key")

		byMapping := kafkatest.TopicName(t) + "-mapped"
		spreadDest(t, b, byMapping, 3)
		s.Local.Session = map[string]schema.LocalSpec{MappingKey(byMapping, "value"): {Format: schema.FormatAvro, Name: avsc}}
		_, _, err = run(t, s, parse(t, fmt.Sprintf(`PRODUCE INTO %s FROM FILE '%s'`, lang.QuoteName(byMapping), export)))
		require.NoError(t, err)
		require.Equal(t, want, raw(byMapping))

		bad := filepath.Join(t.TempDir(), "bad.jsonl")
		body, err := os.ReadFile(export)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(bad, append(body, []byte(`{"key":"k99","value":"{\"id\":\"ninety-nine\"}"}`+"\n")...), 0o644))
		before := raw(byMapping)
		_, _, err = run(t, s, parse(t, fmt.Sprintf(`PRODUCE INTO %s FROM FILE '%s'`, lang.QuoteName(byMapping), bad)))
		require.ErrorContains(t, err, "bad.jsonl:13:")
		require.ErrorContains(t, err, "value: does not fit the value's local schema (\\set schema."+byMapping+".value")
		require.ErrorContains(t, err, "nothing was written")
		require.Equal(t, before, raw(byMapping), "nothing of the file was written")
	})
}
