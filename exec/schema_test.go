package exec

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// countingRegistry puts a proxy in front of a registry that counts the
// requests kql makes, so tests can assert "once per schema id".
type countingRegistry struct {
	url      string
	requests atomic.Int64
	paths    chan string
}

func newCountingRegistry(t *testing.T, target string) *countingRegistry {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	c := &countingRegistry{paths: make(chan string, 10000)}
	// The proxy forwards paths as they come: kql's requests already carry
	// the registry's base path (Apicurio's /apis/ccompat/v7).
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		select {
		case c.paths <- r.Method + " " + r.URL.Path:
		default:
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL + u.Path
	return c
}

const paymentV1 = `{"type":"record","name":"Payment","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["PAID","FAILED"]}}
]}`

// v2 adds a field with a default: a BACKWARD-compatible change.
const paymentV2 = `{"type":"record","name":"Payment","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["PAID","FAILED"]}},
 {"name":"note","type":["null","string"],"default":null}
]}`

const shipmentProto = `syntax = "proto3";
package acme.ship;
import "acme/address.proto";
message Trace { string id = 1; }
message Shipment {
  int32 id = 1;
  acme.Address to = 2;
  message Parcel { string sku = 1; int32 grams = 2; }
  repeated Parcel parcels = 3;
}`

const addressProto = `syntax = "proto3";
package acme;
message Address { string city = 1; string zip = 2; }`

// schemaFixture registers the schemas of one test under unique subjects.
type schemaFixture struct {
	reg                    *schema.Registry
	avroV1, avroV2, protoI int
	avroSubject            string
	protoSubject           string
}

func registerSchemas(t *testing.T, registryURL, topic string) schemaFixture {
	t.Helper()
	ctx := ctxT(t)
	cl, err := sr.NewClient(sr.URLs(registryURL))
	require.NoError(t, err)
	f := schemaFixture{avroSubject: topic + "-value", protoSubject: topic + "-proto-value"}
	ss, err := cl.CreateSchema(ctx, f.avroSubject, sr.Schema{Schema: paymentV1, Type: sr.TypeAvro})
	require.NoError(t, err)
	f.avroV1 = ss.ID
	ss, err = cl.CreateSchema(ctx, f.avroSubject, sr.Schema{Schema: paymentV2, Type: sr.TypeAvro})
	require.NoError(t, err)
	f.avroV2 = ss.ID
	require.NotEqual(t, f.avroV1, f.avroV2)
	addrSubject := topic + "-address"
	_, err = cl.CreateSchema(ctx, addrSubject, sr.Schema{Schema: addressProto, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	ss, err = cl.CreateSchema(ctx, f.protoSubject, sr.Schema{Schema: shipmentProto, Type: sr.TypeProtobuf,
		References: []sr.SchemaReference{{Name: "acme/address.proto", Subject: addrSubject, Version: 1}}})
	require.NoError(t, err)
	f.protoI = ss.ID
	f.reg, err = schema.Open(schema.Config{URLs: []string{registryURL}})
	require.NoError(t, err)
	return f
}

func (f schemaFixture) encode(t *testing.T, ref schema.Ref, text string) []byte {
	t.Helper()
	enc, err := f.reg.Encode(ctxT(t), ref, []byte(text))
	require.NoError(t, err, text)
	return enc.Bytes
}

func TestSchemaRegistryDecodingOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, cl, _ := createSpreadTopic(t, b)
		upstream := testRegistryURL(t, b)
		counting := newCountingRegistry(t, upstream)
		fx := registerSchemas(t, upstream, topic)

		// 60 payments over 6 partitions led by all 3 brokers: even ones
		// written with v1, odd ones with v2 (schema evolution in one topic).
		type payment struct {
			id     int
			amount string
			status string
			p      int32
		}
		var want []payment
		var recs []*kgo.Record
		for i := 0; i < 60; i++ {
			pay := payment{id: i, amount: fmt.Sprintf("%d.%02d", i*3, i%100), status: []string{"PAID", "FAILED"}[i%2], p: int32(i % 6)}
			text := fmt.Sprintf(`{"id":%d,"amount":%s,"at":"2026-11-30T12:00:%02d.000Z","status":%q}`, pay.id, pay.amount, i%60, pay.status)
			ref := schema.Ref{ID: fx.avroV1}
			if i%2 == 1 {
				ref = schema.Ref{Subject: fx.avroSubject} // latest: v2
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: pay.p, Key: []byte(fmt.Sprintf("k%02d", i)), Value: fx.encode(t, ref, text)})
			want = append(want, pay)
		}
		// One record whose schema id the registry does not know, and one
		// that is not in the wire format at all.
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Key: []byte("unknown"), Value: []byte{0, 0x7f, 0xff, 0xff, 0xf0, 1, 2}})
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 1, Key: []byte("plain"), Value: []byte(`{"id": -1}`)})
		require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())

		s, _ := session(t, b)
		reg, err := schema.Open(schema.Config{URLs: []string{counting.url}})
		require.NoError(t, err)
		s.Registry = reg

		t.Run("values decode to JSON in schema field order; both versions; raw bytes and a warning for the unknown id", func(t *testing.T) {
			rows, _, res := query(t, s, fmt.Sprintf("CONSUME %s LIMIT ALL", lang.QuoteName(topic)))
			require.Len(t, rows, 62)
			byKey := map[string]result.Row{}
			for _, r := range rows {
				byKey[string(r[3].([]byte))] = r
			}
			for _, pay := range want {
				r := byKey[fmt.Sprintf("k%02d", pay.id)]
				require.NotNil(t, r)
				v, ok := r[4].(result.JSON)
				require.True(t, ok, "a decoded value is JSON, not bytes: %T %q", r[4], r[4])
				wantText := fmt.Sprintf(`{"id":%d,"amount":%s,"at":"2026-11-30T12:00:%02d.000Z","status":%q`, pay.id, pay.amount, pay.id%60, pay.status)
				if pay.id%2 == 1 {
					wantText += `,"note":null`
				}
				require.Equal(t, wantText+"}", string(v))
			}
			require.Equal(t, []byte{0, 0x7f, 0xff, 0xff, 0xf0, 1, 2}, byKey["unknown"][4], "an unknown id shows its raw bytes")
			require.Equal(t, []byte(`{"id": -1}`), byKey["plain"][4], "a value not in the wire format is as it was")
			warnings := res.Stats().Warnings()
			require.Len(t, warnings, 1, "%q", warnings)
			require.Contains(t, warnings[0], "schema id 2147483632")
			require.Contains(t, warnings[0], "partition 0 offset")
			require.Contains(t, warnings[0], "does not know this schema id")
			require.Contains(t, warnings[0], "1 record left as raw bytes")
		})

		t.Run("paths in WHERE and SELECT work on decoded values", func(t *testing.T) {
			rows, _, _ := query(t, s, fmt.Sprintf("SELECT key, value.amount, value.status FROM %s WHERE value.status = 'FAILED' AND value.amount > 100 LIMIT ALL", lang.QuoteName(topic)))
			var got []string
			for _, r := range rows {
				got = append(got, fmt.Sprintf("%s %s %s", r[0], r[1], r[2]))
			}
			var exp []string
			for _, pay := range want {
				var amt float64
				fmt.Sscan(pay.amount, &amt)
				if pay.status == "FAILED" && amt > 100 {
					exp = append(exp, fmt.Sprintf("k%02d %v %s", pay.id, pay.amount, pay.status))
				}
			}
			sort.Strings(got)
			sort.Strings(exp)
			require.NotEmpty(t, exp)
			require.Equal(t, exp, got)
		})

		t.Run("each schema id is fetched once per session", func(t *testing.T) {
			before := counting.requests.Load()
			for i := 0; i < 3; i++ {
				query(t, s, fmt.Sprintf("CONSUME %s LIMIT ALL", lang.QuoteName(topic)))
			}
			// The known ids are cached: only the unknown id is asked again,
			// once per statement. (LessOrEqual passed with the unknown id
			// never asked again, which kept it unknown for the session.)
			require.Equal(t, int64(3), counting.requests.Load()-before, "registry requests for 3 more reads")
		})

		t.Run("Protobuf with a reference, a nested message and a message index other than the first", func(t *testing.T) {
			ptopic, pcl, _ := createSpreadTopic(t, b)
			// Shipment is the second message: index [1].
			v := fx.encode(t, schema.Ref{Subject: fx.protoSubject}, `{"id":7,"to":{"city":"Lyon","zip":"69001"},"parcels":[{"sku":"a","grams":250}]}`)
			require.Equal(t, byte(2), v[5], "index path of one element: varint count 1 (zigzag 2)")
			require.NoError(t, pcl.ProduceSync(ctxT(t), &kgo.Record{Topic: ptopic, Partition: 2, Value: v}).FirstErr())
			rows, _, _ := query(t, s, fmt.Sprintf("SELECT value, value.to.city, value_schema_id FROM %s", lang.QuoteName(ptopic)))
			require.Len(t, rows, 1)
			require.Equal(t, `{"id":7,"to":{"city":"Lyon","zip":"69001"},"parcels":[{"sku":"a","grams":250}]}`, string(rows[0][0].(result.JSON)))
			require.Equal(t, "Lyon", string(rows[0][1].([]byte)))
			require.EqualValues(t, fx.protoI, rows[0][2])
		})

		t.Run("a registry that cannot be reached: raw bytes and one warning, the statement finishes", func(t *testing.T) {
			s2, _ := session(t, b)
			var err error
			s2.Registry, err = schema.Open(schema.Config{URLs: []string{deadRegistryURL(t)}})
			require.NoError(t, err)
			rows, _, res := query(t, s2, fmt.Sprintf("CONSUME %s LIMIT ALL", lang.QuoteName(topic)))
			require.Len(t, rows, 62)
			for _, r := range rows {
				_, isJSON := r[4].(result.JSON)
				require.False(t, isJSON)
			}
			warnings := res.Stats().Warnings()
			require.Len(t, warnings, 1, "%q", warnings)
			require.Contains(t, warnings[0], "could not be reached")
			require.Contains(t, warnings[0], "61 records left as raw bytes")
		})
	})
}

func TestSchemaRegistryStatementsOnBothBackends(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic, _, _ := createSpreadTopic(t, b)
		upstream := testRegistryURL(t, b)
		fx := registerSchemas(t, upstream, topic)
		s, _ := session(t, b)
		s.Registry = fx.reg
		q := lang.QuoteName(topic)

		t.Run("PRODUCE with a VALUE SCHEMA (latest or VERSION n), then CONSUME decodes it", func(t *testing.T) {
			rows, cols, _ := query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 'k-1' VALUE '{"id": 1, "amount": 9.5, "at": "2026-11-30T08:00:00Z", "status": "PAID"}' VALUE SCHEMA '%s'`, q, fx.avroSubject))
			require.Equal(t, []string{"topic", "partition", "offset", "timestamp", "key_schema_id", "value_schema_id"}, colNamesOf(cols))
			require.Nil(t, rows[0][4])
			require.EqualValues(t, fx.avroV2, rows[0][5], "the subject's latest version")
			got, _, _ := query(t, s, fmt.Sprintf("SELECT value, value_schema_id, key_schema_id FROM %s WHERE key = 'k-1'", q))
			require.Len(t, got, 1)
			require.Equal(t, `{"id":1,"amount":9.50,"at":"2026-11-30T08:00:00.000Z","status":"PAID","note":null}`, string(got[0][0].(result.JSON)))
			require.EqualValues(t, fx.avroV2, got[0][1])
			require.Nil(t, got[0][2])

			rows, _, _ = query(t, s, fmt.Sprintf(`PRODUCE INTO %s VALUE '{"id": 2, "amount": 1, "at": 0, "status": "FAILED"}' VALUE SCHEMA '%s' VERSION 1`, q, fx.avroSubject))
			require.EqualValues(t, fx.avroV1, rows[0][5])
		})

		t.Run("Protobuf PRODUCE: the one message the text fits, or the MESSAGE named, nested ones too", func(t *testing.T) {
			ptopic, _, _ := createSpreadTopic(t, b)
			pq := lang.QuoteName(ptopic)
			query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 's' VALUE '{"id": 7, "to": {"city": "Lyon"}}' VALUE SCHEMA '%s'`, pq, fx.protoSubject))
			query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 'p' VALUE '{"sku": "a", "grams": 250}' VALUE SCHEMA '%s' MESSAGE Shipment.Parcel`, pq, fx.protoSubject))
			query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 't' VALUE '{}' VALUE SCHEMA '%s' MESSAGE 'acme.ship.Trace'`, pq, fx.protoSubject))
			st, err := lang.Parse(fmt.Sprintf(`PRODUCE INTO %s KEY 'x' VALUE '{}' VALUE SCHEMA '%s'`, pq, fx.protoSubject))
			require.NoError(t, err)
			_, err = s.Execute(ctxT(t), st)
			require.ErrorContains(t, err, "the text fits 2 of its messages (acme.ship.Trace, acme.ship.Shipment): say which with MESSAGE and one of these names")
			require.ErrorContains(t, err, "nothing was written")
			rows, _, _ := query(t, s, fmt.Sprintf("SELECT key, value FROM %s ORDER BY key", pq))
			require.Len(t, rows, 3, "the ambiguous PRODUCE wrote nothing")
			got := map[string]string{}
			for _, r := range rows {
				got[string(r[0].([]byte))] = string(r[1].(result.JSON))
			}
			require.Equal(t, map[string]string{
				"p": `{"sku":"a","grams":250}`,
				"s": `{"id":7,"to":{"city":"Lyon","zip":""},"parcels":[]}`,
				"t": `{"id":""}`,
			}, got, "each read back as the message it was written as (index path [1 0] for Parcel)")
		})

		t.Run("KEY SCHEMA: the key is encoded, partitioned by its encoded bytes, and read back as its text; JSON Schema values", func(t *testing.T) {
			cl, err := sr.NewClient(sr.URLs(upstream))
			require.NoError(t, err)
			jtopic, _, _ := createSpreadTopic(t, b)
			jq := lang.QuoteName(jtopic)
			keySubject, jsonSubject := jtopic+"-key", jtopic+"-value"
			kss, err := cl.CreateSchema(ctxT(t), keySubject, sr.Schema{Schema: `{"type":"string"}`, Type: sr.TypeAvro})
			require.NoError(t, err)
			jss, err := cl.CreateSchema(ctxT(t), jsonSubject, sr.Schema{Type: sr.TypeJSON,
				Schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["n"]}`})
			require.NoError(t, err)
			for i := 0; i < 12; i++ {
				rows, _, _ := query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 'cust-%d' KEY SCHEMA '%s' VALUE '{"n": %d, "tags": ["a"]}' VALUE SCHEMA '%s'`, jq, i, keySubject, i, jsonSubject))
				encKey := append([]byte{0, byte(kss.ID >> 24), byte(kss.ID >> 16), byte(kss.ID >> 8), byte(kss.ID)}, byte(2*len(fmt.Sprintf("cust-%d", i))))
				encKey = append(encKey, fmt.Sprintf("cust-%d", i)...)
				require.EqualValues(t, kafka.PartitionForKey(jtopic, encKey, 6), rows[0][1], "murmur2 of the encoded key, as the Java producer after the Confluent serializer")
				require.EqualValues(t, kss.ID, rows[0][4])
				require.EqualValues(t, jss.ID, rows[0][5])
			}
			rows, _, _ := query(t, s, fmt.Sprintf("SELECT key, value, key_schema_id, value.n FROM %s WHERE key = 'cust-7'", jq))
			require.Len(t, rows, 1, "a string key reads as its text: WHERE key = 'cust-7' finds it")
			require.Equal(t, "cust-7", string(rows[0][0].([]byte)))
			require.Equal(t, `{"n":7,"tags":["a"]}`, string(rows[0][1].(result.JSON)))
			require.EqualValues(t, kss.ID, rows[0][2])
			require.Equal(t, result.JSON("7"), rows[0][3], "a number a path picks stays a JSON number")

			st, err := lang.Parse(fmt.Sprintf(`PRODUCE INTO %s VALUE '{"n": "seven"}' VALUE SCHEMA '%s'`, jq, jsonSubject))
			require.NoError(t, err)
			_, err = s.Execute(ctxT(t), st)
			require.ErrorContains(t, err, "at /n")

			// PARTITION FOR KEY hashes the key as its producers wrote it:
			// encoded with the topic's key subject.
			for i := 0; i < 12; i++ {
				rows, _, _ := query(t, s, fmt.Sprintf("SELECT key FROM %s PARTITION FOR KEY 'cust-%d' WHERE key = 'cust-%d'", jq, i, i))
				require.Len(t, rows, 1, "cust-%d is in the partition of its encoded key", i)
			}
			rows, _, _ = query(t, s, fmt.Sprintf("EXPLAIN CONSUME %s PARTITION FOR KEY 'cust-7'", jq))
			var notes []string
			for _, r := range rows {
				notes = append(notes, fmt.Sprint(r[4]))
			}
			require.Contains(t, notes, fmt.Sprintf("PARTITION FOR KEY hashes the key encoded with subject %s (schema id %d), as its producers wrote it", keySubject, kss.ID))

			rows, _, _ = query(t, s, fmt.Sprintf("SHOW SCHEMAS FOR TOPIC %s", jq))
			require.Equal(t, []result.Row{{"key", keySubject, int64(1), int64(kss.ID), "AVRO"}, {"value", jsonSubject, int64(1), int64(jss.ID), "JSON"}}, rows)
		})

		t.Run("Avro and JSON Schema references to other subjects", func(t *testing.T) {
			cl, err := sr.NewClient(sr.URLs(upstream))
			require.NoError(t, err)
			ctx := ctxT(t)
			money := topic + "-money"
			_, err = cl.CreateSchema(ctx, money, sr.Schema{Type: sr.TypeAvro,
				Schema: `{"type":"record","name":"Money","namespace":"com.acme","fields":[{"name":"currency","type":"string"},{"name":"cents","type":"long"}]}`})
			require.NoError(t, err)
			orderSubject := topic + "-order-value"
			_, err = cl.CreateSchema(ctx, orderSubject, sr.Schema{Type: sr.TypeAvro,
				Schema:     `{"type":"record","name":"Order","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"total","type":"com.acme.Money"}]}`,
				References: []sr.SchemaReference{{Name: "com.acme.Money", Subject: money, Version: 1}}})
			require.NoError(t, err)
			addr := topic + "-address-json"
			_, err = cl.CreateSchema(ctx, addr, sr.Schema{Type: sr.TypeJSON,
				Schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`})
			require.NoError(t, err)
			shipSubject := topic + "-ship-value"
			_, err = cl.CreateSchema(ctx, shipSubject, sr.Schema{Type: sr.TypeJSON,
				Schema:     `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"to":{"$ref":"address.json"}},"required":["to"]}`,
				References: []sr.SchemaReference{{Name: "address.json", Subject: addr, Version: 1}}})
			require.NoError(t, err)

			rtopic, _, _ := createSpreadTopic(t, b)
			rq := lang.QuoteName(rtopic)
			query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 'o1' VALUE '{"id": 1, "total": {"currency": "EUR", "cents": 995}}' VALUE SCHEMA '%s'`, rq, orderSubject))
			query(t, s, fmt.Sprintf(`PRODUCE INTO %s KEY 's1' VALUE '{"to": {"city": "Oslo"}}' VALUE SCHEMA '%s'`, rq, shipSubject))
			st, err := lang.Parse(fmt.Sprintf(`PRODUCE INTO %s KEY 's2' VALUE '{"to": {}}' VALUE SCHEMA '%s'`, rq, shipSubject))
			require.NoError(t, err)
			_, err = s.Execute(ctx, st)
			require.ErrorContains(t, err, "at /to: required")
			rows, _, res := query(t, s, fmt.Sprintf("SELECT key, value FROM %s ORDER BY key", rq))
			require.Empty(t, res.Stats().Warnings())
			require.Len(t, rows, 2)
			require.Equal(t, `{"id":1,"total":{"currency":"EUR","cents":995}}`, string(rows[0][1].(result.JSON)))
			require.Equal(t, `{"to":{"city":"Oslo"}}`, string(rows[1][1].(result.JSON)))
		})

		t.Run("a value that does not fit its schema is an error naming the field; nothing is written", func(t *testing.T) {
			before, _, _ := query(t, s, fmt.Sprintf("SELECT count(*) FROM %s", q))
			st, err := lang.Parse(fmt.Sprintf(`PRODUCE INTO %s VALUE '{"id": 3, "amount": "lots", "at": 0, "status": "PAID"}' VALUE SCHEMA '%s'`, q, fx.avroSubject))
			require.NoError(t, err)
			_, err = s.Execute(ctxT(t), st)
			require.ErrorContains(t, err, "field amount: expected a decimal(9,2) number")
			require.ErrorContains(t, err, "nothing was written")
			st, err = lang.Parse(fmt.Sprintf(`PRODUCE INTO %s VALUE '{"id": 3}' VALUE SCHEMA 'no-such-subject'`, q))
			require.NoError(t, err)
			_, err = s.Execute(ctxT(t), st)
			require.ErrorContains(t, err, `subject "no-such-subject" is not in the registry`)
			after, _, _ := query(t, s, fmt.Sprintf("SELECT count(*) FROM %s", q))
			require.Equal(t, before, after)
		})

		t.Run("SHOW SUBJECTS, DESCRIBE SUBJECT, SHOW SCHEMAS FOR TOPIC", func(t *testing.T) {
			rows, _, _ := query(t, s, fmt.Sprintf("SHOW SUBJECTS LIKE '%s*'", topic))
			byName := map[string]result.Row{}
			for _, r := range rows {
				byName[r[0].(string)] = r
			}
			require.Contains(t, byName, fx.avroSubject)
			require.Equal(t, result.Row{fx.avroSubject, "AVRO", int64(2), int64(fx.avroV2), byName[fx.avroSubject][4]}, byName[fx.avroSubject])
			require.NotNil(t, byName[fx.avroSubject][4], "a compatibility level applies to every subject")
			require.Equal(t, "PROTOBUF", byName[fx.protoSubject][1])

			rows, _, _ = query(t, s, fmt.Sprintf("DESCRIBE SUBJECT '%s'", fx.avroSubject))
			require.Len(t, rows, 2)
			require.Equal(t, []any{int64(1), int64(fx.avroV1)}, []any{rows[0][0], rows[0][1]})
			require.Equal(t, []any{int64(2), int64(fx.avroV2)}, []any{rows[1][0], rows[1][1]})
			rows, _, _ = query(t, s, fmt.Sprintf("DESCRIBE SUBJECT '%s'", fx.protoSubject))
			require.Contains(t, rows[0][4], "acme/address.proto="+topic+"-address:1")

			rows, _, _ = query(t, s, fmt.Sprintf("SHOW SCHEMAS FOR TOPIC %s", q))
			require.Equal(t, []result.Row{{"key", topic + "-key", nil, nil, nil}, {"value", topic + "-value", int64(2), int64(fx.avroV2), "AVRO"}}, rows)
		})

		t.Run("EXPLAIN names the registry requests beside the broker requests", func(t *testing.T) {
			apis := func(src string) []string {
				rows, _, _ := query(t, s, "EXPLAIN "+src)
				var out []string
				for _, r := range rows {
					out = append(out, fmt.Sprintf("%v %v %v", r[1], r[3], r[4]))
				}
				return out
			}
			reg := fx.reg.URLs()
			got := apis(fmt.Sprintf(`PRODUCE INTO %s KEY 'k' VALUE '{}' VALUE SCHEMA '%s' VERSION 1`, q, fx.avroSubject))
			require.Contains(t, got, fmt.Sprintf("Registry GET /subjects/%s/versions/1 %s value schema", fx.avroSubject, reg))
			require.Contains(t, got, fmt.Sprintf("Registry GET /schemas/ids/{id} %s value schema and its references (once per session)", reg))
			got = apis(fmt.Sprintf("CONSUME %s LIMIT 5", q))
			require.Contains(t, got, fmt.Sprintf("Registry GET /schemas/ids/{id} %s each schema id a record carries, once per session (cached)", reg))
			require.Contains(t, strings.Join(got, "\n"), "Fetch", "the broker requests are still there")
			got = apis("SHOW SUBJECTS")
			require.Contains(t, got, fmt.Sprintf("Registry GET /subjects %s subject names", reg))
		})

		t.Run("without a registry, the statements say what to configure; value_schema_id still reads the header", func(t *testing.T) {
			s2, _ := session(t, b)
			rows, _, _ := query(t, s2, fmt.Sprintf("SELECT value_schema_id, count(*) FROM %s GROUP BY value_schema_id ORDER BY value_schema_id", q))
			require.NotEmpty(t, rows)
			require.NotNil(t, rows[0][0], "the id of the wire-format header, without a registry")
			for _, r := range rows {
				require.Contains(t, []int64{int64(fx.avroV1), int64(fx.avroV2)}, r[0])
			}
			for _, src := range []string{"SHOW SUBJECTS", fmt.Sprintf(`PRODUCE INTO %s VALUE '{}' VALUE SCHEMA 'x'`, q)} {
				st, err := lang.Parse(src)
				require.NoError(t, err)
				_, err = s2.Execute(ctxT(t), st)
				require.ErrorContains(t, err, "--schema-registry", src)
			}
		})
	})
}

func colNamesOf(cols []result.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// testRegistryURL is the schema registry a test uses on backend b.
// kfake gets franz-go's in-process fake; the real Kafka gets the real
// Apicurio registry of the test bed.
func testRegistryURL(t *testing.T, b kafkatest.Backend) string {
	t.Helper()
	if _, ok := b.(*kafkatest.Fake); !ok {
		return kafkatest.SharedRegistry(t).URL()
	}
	fake := srfake.New()
	t.Cleanup(fake.Close)
	return fake.URL()
}
