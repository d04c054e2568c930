package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// The .proto files (acme/order.proto imports acme/common/money.proto) and
// .avsc files of testdata/schemas.
var (
	localProtoDir = filepath.Join("..", "testdata", "schemas", "proto")
	localAvroDir  = filepath.Join("..", "testdata", "schemas", "avro")
)

// localTopic is createSpreadTopic's topic, its leaders checked to be on all
// three brokers (real Kafka places them itself), so that the produces and
// reads of a test go to every broker.
func localTopic(t *testing.T, b kafkatest.Backend) (string, *kgo.Client) {
	t.Helper()
	topic, cl, adm := createSpreadTopic(t, b)
	var leaders map[int32]int32
	require.Eventually(t, func() bool {
		td, err := adm.ListTopics(ctxT(t), topic)
		if err != nil || td[topic].Err != nil || len(td[topic].Partitions) != 6 {
			return false
		}
		leaders = map[int32]int32{}
		for _, p := range td[topic].Partitions {
			if p.Leader < 0 {
				return false
			}
			leaders[p.Partition] = p.Leader
		}
		return true
	}, 20*time.Second, 100*time.Millisecond)
	distinct := map[int32]bool{}
	for _, l := range leaders {
		distinct[l] = true
	}
	require.Len(t, distinct, 3, "leaders %v must cover all 3 brokers", leaders)
	return topic, cl
}

func localSession(t *testing.T, b kafkatest.Backend) (*Session, *tracer) {
	s, tr := session(t, b)
	s.Local = &LocalSchemas{Loader: schema.NewLocal(schema.LocalConfig{ProtoPaths: []string{localProtoDir}})}
	return s, tr
}

func orderText(i int) string {
	cur := []string{"EUR", "USD"}[i%2]
	return fmt.Sprintf(`{"id":%d,"customer":"c%d","total":{"currency":%q,"units":"%d"},"lines":[],"placed":null}`, i, i, cur, i*10)
}

// TestLocalProtobufAndAvroRoundTrip writes raw Protobuf values and raw Avro
// keys into every partition of a topic led by all three brokers, with
// PRODUCE ... AS and with a plain Kafka producer, and reads them back
// decoded, WHERE on a path of the decoded value.
func TestLocalProtobufAndAvroRoundTrip(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, cl := localTopic(t, b)
		s, _ := localSession(t, b)
		q := lang.QuoteName(topic)
		keyAvsc := filepath.Join(localAvroDir, "key.avsc")

		// Partitions 0-5 through kql; the records of 6-11 from a producer
		// that knows nothing of kql, in the same partitions.
		for i := 0; i < 6; i++ {
			rows, _, _ := query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 'k%d' KEY AS AVRO '%s' VALUE '%s' VALUE AS PROTOBUF 'acme.Order' PARTITION %d`,
				q, i, keyAvsc, orderText(i), i))
			require.EqualValues(t, i, rows[0][1])
		}
		val, err := s.Local.Loader.Codec(schema.LocalSpec{Format: schema.FormatProtobuf, Name: "acme.Order"})
		require.NoError(t, err)
		key, err := s.Local.Loader.Codec(schema.LocalSpec{Format: schema.FormatAvro, Name: keyAvsc})
		require.NoError(t, err)
		var recs []*kgo.Record
		for i := 6; i < 12; i++ {
			v, err := val.Encode([]byte(orderText(i)))
			require.NoError(t, err)
			k, err := key.Encode([]byte(fmt.Sprintf("k%d", i)))
			require.NoError(t, err)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % 6), Key: k, Value: v})
		}
		require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())

		// What kql wrote is the raw encoding, no wire-format header: the
		// bytes a plain Protobuf producer writes.
		raw, _, _ := query(t, s, fmt.Sprintf(`CONSUME %s PARTITION 3 LIMIT 1`, q))
		want, err := val.Encode([]byte(orderText(3)))
		require.NoError(t, err)
		require.Equal(t, want, raw[0][4], "kql's PRODUCE wrote raw Protobuf")

		rows, _, _ := query(t, s, fmt.Sprintf(`SELECT partition, key, value.id, value.total.units FROM %s WHERE value.total.currency = 'EUR' KEY AS AVRO '%s' VALUE AS PROTOBUF 'acme.Order' LIMIT ALL`, q, keyAvsc))
		var got []string
		parts := map[int64]bool{}
		for _, r := range rows {
			parts[r[0].(int64)] = true
			got = append(got, fmt.Sprintf("%s=%s/%s", r[1], r[2], r[3]))
		}
		sort.Strings(got)
		require.Equal(t, []string{"k0=0/0", "k10=10/100", "k2=2/20", "k4=4/40", "k6=6/60", "k8=8/80"}, got)
		require.Len(t, parts, 3, "even ids are in partitions 0, 2 and 4")

		// PARTITION FOR KEY hashes the key as its producers wrote it:
		// encoded with the key's local schema. Of the keys, one whose
		// encoded and bare forms hash to different partitions.
		pick := ""
		var wantP int32
		for i := 0; i < 12 && pick == ""; i++ {
			k := fmt.Sprintf("k%d", i)
			enc, err := key.Encode([]byte(k))
			require.NoError(t, err)
			if p := kafka.PartitionForKey(topic, enc, 6); p != kafka.PartitionForKey(topic, []byte(k), 6) {
				pick, wantP = k, p
			}
		}
		require.NotEmpty(t, pick, "no key whose encoded and bare forms are in different partitions")
		rows, _, _ = query(t, s, fmt.Sprintf(`SELECT partition, key FROM %s PARTITION FOR KEY '%s' KEY AS AVRO '%s' LIMIT ALL`, q, pick, keyAvsc))
		require.NotEmpty(t, rows)
		for _, r := range rows {
			require.EqualValues(t, wantP, r[0], "the partition of the encoded key %s", pick)
		}

		all, _, res := query(t, s, fmt.Sprintf(`CONSUME %s KEY AS AVRO '%s' VALUE AS PROTOBUF 'acme.Order' LIMIT ALL`, q, keyAvsc))
		require.Len(t, all, 12)
		require.Empty(t, res.Stats().Warnings())
		for _, r := range all {
			require.IsType(t, result.JSON{}, r[4])
			require.IsType(t, []byte{}, r[3], "a string key is its text")
		}
	})
}

// TestLocalSchemaPrecedence: a statement's AS wins over \set's mapping,
// which wins over the properties file's; and a mapped topic's PRODUCE
// encodes with the mapping.
func TestLocalSchemaPrecedence(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, _ := localTopic(t, b)
		s, _ := localSession(t, b)
		q := lang.QuoteName(topic)
		avro := schema.LocalSpec{Format: schema.FormatAvro, Name: filepath.Join(localAvroDir, "order.avsc")}
		proto := schema.LocalSpec{Format: schema.FormatProtobuf, Name: "acme.Order"}
		s.Local.File = map[string]schema.LocalSpec{MappingKey(topic, "value"): avro}
		s.Local.FileName = "dev.properties"

		// The file's Avro mapping encodes a PRODUCE without an AS clause.
		query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 'a' VALUE '{"id": 1, "customer": "ada", "total": {"currency": "EUR", "units": 5}}' PARTITION 1`, q))
		rows, _, _ := query(t, s, fmt.Sprintf(`SELECT value FROM %s`, q))
		require.Equal(t, `{"id":1,"customer":"ada","note":null,"total":{"currency":"EUR","units":5}}`, string(rows[0][0].(result.JSON)))

		// \set's Protobuf mapping wins over the file's: the Avro record
		// does not decode as an Order, stays raw, and says why once.
		s.Local.Session = map[string]schema.LocalSpec{MappingKey(topic, "value"): proto}
		rows, _, res := query(t, s, fmt.Sprintf(`CONSUME %s`, q))
		require.IsType(t, []byte{}, rows[0][4])
		w := res.Stats().Warnings()
		require.Len(t, w, 1)
		require.Contains(t, w[0], `value of partition 1 offset 0: PROTOBUF acme.Order (acme/order.proto): payload does not decode`)
		require.Contains(t, w[0], "1 record left as raw bytes")

		// The statement's AS wins over both.
		rows, _, _ = query(t, s, fmt.Sprintf(`SELECT value.customer FROM %s VALUE AS AVRO '%s'`, q, avro.Name))
		require.Equal(t, "ada", fmt.Sprintf("%s", rows[0][0]))

		// EXPLAIN says which schema decodes the value, and from where.
		rows, _, _ = query(t, s, fmt.Sprintf(`EXPLAIN CONSUME %s`, q))
		require.Contains(t, fmt.Sprint(rows), `decodes the value with the local schema PROTOBUF acme.Order (acme/order.proto), from \set schema.`+topic+`.value protobuf:acme.Order (no registry)`)
	})
}

// TestLocalSchemaErrors: a schema that does not load fails the statement
// before any request; a value that does not fit writes nothing.
func TestLocalSchemaErrors(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, _ := localTopic(t, b)
		s, tr := localSession(t, b)
		q := lang.QuoteName(topic)

		tr.reset()
		_, err := s.Execute(ctxT(t), parse(t, fmt.Sprintf(`CONSUME %s VALUE AS PROTOBUF 'acme.Ordr'`, q)))
		require.EqualError(t, err, fmt.Sprintf(`the value of topic %q (VALUE AS PROTOBUF 'acme.Ordr'): protobuf:acme.Ordr: no such message in the loaded .proto files; did you mean acme.Order?`, topic))
		require.Empty(t, tr.byAPI(), "nothing was sent")

		_, err = s.Execute(ctxT(t), parse(t, fmt.Sprintf(`PRODUCE INTO %s VALUE '{"id": "seven"}' VALUE AS PROTOBUF 'acme.Order'`, q)))
		require.ErrorContains(t, err, `the value (VALUE AS PROTOBUF 'acme.Order'): PROTOBUF acme.Order (acme/order.proto): does not fit acme.Order: (line 1:8): invalid value for int32 field id: "seven"; nothing was written`)
		_, err = s.Execute(ctxT(t), parse(t, fmt.Sprintf(`PRODUCE INTO %s KEY '{"id": 1}' KEY AS AVRO '%s' VALUE 'v'`, q, filepath.Join(localAvroDir, "order.avsc"))))
		require.ErrorContains(t, err, `the key (KEY AS AVRO`)
		require.ErrorContains(t, err, `nothing was written`)
		rows, _, _ := query(t, s, fmt.Sprintf(`CONSUME %s`, q))
		require.Empty(t, rows, "nothing was written")
	})
}

// TestLocalAvroAmbiguousHeader: an Avro payload that reads whole both as
// raw Avro and after a wire-format header is read as the side's records
// before it were (here: headered), and a warning says so, never a silent
// raw reading of the header's bytes as fields.
func TestLocalAvroAmbiguousHeader(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, cl := localTopic(t, b)
		s, _ := localSession(t, b)
		// Under this schema the header 0 0 0 0 22 is a..d = 0 and the
		// length (11) of e; the second payload reads whole both ways.
		avsc := filepath.Join(t.TempDir(), "r.avsc")
		require.NoError(t, os.WriteFile(avsc, []byte(`{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"int"},{"name":"c","type":"int"},{"name":"d","type":"int"},{"name":"e","type":"string"}]}`), 0o644))
		require.NoError(t, cl.ProduceSync(ctxT(t),
			&kgo.Record{Topic: topic, Partition: 2, Value: []byte{0, 0, 0, 0, 22, 2, 4, 6, 8, 4, 'h', 'i'}},
			&kgo.Record{Topic: topic, Partition: 2, Value: []byte{0, 0, 0, 0, 22, 2, 4, 6, 8, 12, 'h', 'e', 'l', 'l', 'o', '!'}},
		).FirstErr())

		rows, _, res := query(t, s, fmt.Sprintf(`SELECT value, value_schema_id FROM %s VALUE AS AVRO '%s' LIMIT ALL`, lang.QuoteName(topic), avsc))
		require.Len(t, rows, 2)
		require.Equal(t, `{"a":1,"b":2,"c":3,"d":4,"e":"hi"}`, string(rows[0][0].(result.JSON)))
		require.Equal(t, `{"a":1,"b":2,"c":3,"d":4,"e":"hello!"}`, string(rows[1][0].(result.JSON)))
		require.EqualValues(t, 22, rows[1][1])
		require.Equal(t, []string{"value of partition 2 offset 1: AVRO " + avsc + " (" + avsc + ") decodes both as raw Avro and after a wire-format header of schema id 22; " +
			"shown after the header, as the side's records before it were; 1 record read this way"}, res.Stats().Warnings())
	})
}
