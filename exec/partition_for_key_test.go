package exec

import (
	"fmt"
	"testing"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/schema"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
)

// PARTITION FOR KEY x'...' with the bytes a producer wrote (a wire-format
// header and all) hashes those bytes: encoding them again with the key
// subject failed for an Avro long ("not JSON: invalid character '\x00'")
// and, for a string schema, hashed them wrapped in a second header (the
// wrong partition, without a word).
func TestPartitionForKeyOfEncodedBytes(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		upstream := testRegistryURL(t, b)
		cl, err := sr.NewClient(sr.URLs(upstream))
		require.NoError(t, err)
		s, _ := session(t, b)
		s.Registry, err = schema.Open(schema.Config{URLs: []string{upstream}})
		require.NoError(t, err)
		for _, keySchema := range []string{`{"type":"long"}`, `{"type":"string"}`} {
			topic, _, _ := createSpreadTopic(t, b)
			q := lang.QuoteName(topic)
			_, err := cl.CreateSchema(ctxT(t), topic+"-key", sr.Schema{Schema: keySchema, Type: sr.TypeAvro})
			require.NoError(t, err)
			text := "42"
			if keySchema == `{"type":"string"}` {
				text = "cust-7"
			}
			enc, err := s.Registry.Encode(ctxT(t), schema.Ref{Subject: topic + "-key"}, []byte(text))
			require.NoError(t, err)
			want := kafka.PartitionForKey(topic, enc.Bytes, 6)
			for _, key := range []string{lang.Quote([]byte(text)), fmt.Sprintf("x'%x'", enc.Bytes)} {
				rows, _, _ := query(t, s, fmt.Sprintf("EXPLAIN CONSUME %s PARTITION FOR KEY %s", q, key))
				var parts, apis []string
				for _, r := range rows {
					if r[1] == "Fetch" {
						parts = append(parts, fmt.Sprint(r[4]))
					}
					apis = append(apis, fmt.Sprint(r[1]))
				}
				// EXPLAIN names the key subject's lookup PARTITION FOR KEY
				// makes; not for bytes it hashes as they are.
				lookup := fmt.Sprintf("Registry GET /subjects/%s-key/versions/latest", topic)
				if key[0] == 'x' {
					require.NotContains(t, apis, lookup)
				} else {
					require.Contains(t, apis, lookup)
				}
				require.Equal(t, []string{fmt.Sprintf("%s/%d", topic, want)}, parts, "%s %s", keySchema, key)
			}
		}
	})
}
