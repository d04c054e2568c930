package schema

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

const paymentAvro = `{"type":"record","name":"Payment","namespace":"com.acme","fields":[
 {"name":"id","type":"long"},
 {"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"uid","type":{"type":"string","logicalType":"uuid"}},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"double"}},
 {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["CARD","CASH"]}},
 {"name":"raw","type":"bytes"},
 {"name":"ok","type":"boolean"}
]}`

const paymentProto = `syntax = "proto3";
package acme;
import "money.proto";
message Envelope { string trace = 1; }
message Payment {
  int32 id = 1;
  acme.Money amount = 2;
  message Line { string sku = 1; int64 qty = 2; }
  repeated Line lines = 3;
}`

const moneyProto = `syntax = "proto3";
package acme;
message Money { string currency = 1; double value = 2; }`

func TestRoundTripsThroughARegistry(t *testing.T) {
	fake := srfake.New()
	defer fake.Close()
	ctx := context.Background()
	avroID, _, err := fake.RegisterSchema("payments-value", sr.Schema{Schema: paymentAvro, Type: sr.TypeAvro})
	require.NoError(t, err)
	_, _, err = fake.RegisterSchema("money", sr.Schema{Schema: moneyProto, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	protoID, _, err := fake.RegisterSchema("orders-value", sr.Schema{Schema: paymentProto, Type: sr.TypeProtobuf,
		References: []sr.SchemaReference{{Name: "money.proto", Subject: "money", Version: 1}}})
	require.NoError(t, err)
	jsonID, _, err := fake.RegisterSchema("events-value", sr.Schema{Type: sr.TypeJSON,
		Schema: `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`})
	require.NoError(t, err)

	reg, err := Open(Config{URLs: []string{fake.URL()}})
	require.NoError(t, err)

	avroText := `{"id":7,"amount":9.50,"at":"2026-11-30T12:00:00.123Z","day":"2026-11-30","uid":"0b8e7d3c-0000-4000-8000-000000000001","note":null,"tags":["a","b"],"attrs":{"x":1.5},"kind":"CASH","raw":"AAE=","ok":true}`
	enc, err := reg.Encode(ctx, Ref{Subject: "payments-value"}, []byte(avroText))
	require.NoError(t, err)
	require.Equal(t, avroID, enc.ID)
	dec := reg.NewDecoder(ctx)
	out, id, ok, err := dec.Decode(nil, enc.Bytes)
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, avroID, id)
	require.JSONEq(t, avroText, string(out))
	require.Equal(t, avroText, string(out), "fields in schema order, compact")

	_, err = reg.Encode(ctx, Ref{Subject: "payments-value"}, []byte(`{"id":"seven"}`))
	require.ErrorContains(t, err, "field id: expected an integer, got \"seven\" (string)")

	protoText := `{"id":3,"amount":{"currency":"EUR","value":9.5},"lines":[{"sku":"x","qty":"2"}]}`
	enc, err = reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(protoText))
	require.NoError(t, err)
	out, id, ok, err = dec.Decode(nil, enc.Bytes)
	require.NoError(t, err)
	require.EqualValues(t, protoID, id)
	t.Logf("proto: %s", out)

	enc, err = reg.Encode(ctx, Ref{Subject: "events-value"}, []byte(`{"n": 1}`))
	require.NoError(t, err)
	out, _, _, err = dec.Decode(nil, enc.Bytes)
	require.NoError(t, err)
	require.Equal(t, `{"n":1}`, string(out))
	_, err = reg.Encode(ctx, Ref{ID: jsonID}, []byte(`{"n": "x"}`))
	require.Error(t, err)
	t.Logf("json error: %v", err)

	_, _, ok, err = dec.Decode(nil, []byte{0, 0, 0, 0, 99, 1})
	require.True(t, ok)
	require.ErrorContains(t, err, "schema id 99")
	t.Logf("unknown: %v", err)
}
