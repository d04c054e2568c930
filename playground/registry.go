package playground

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kql-dev/kql/schema"
)

// The schemas of the registry's demo topics. Subjects follow Confluent's
// default TopicNameStrategy (TOPIC-value); the Protobuf import is registered
// under its import name, as Confluent's serializers register references.

const paymentSchema = `{
  "type": "record", "name": "Payment", "namespace": "kql.playground",
  "fields": [
    {"name": "payment_id", "type": "string"},
    {"name": "order_id", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    {"name": "currency", "type": "string"},
    {"name": "method", "type": {"type": "enum", "name": "Method", "symbols": ["CARD", "TRANSFER", "WALLET"]}},
    {"name": "paid_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "coupon", "type": ["null", "string"], "default": null}
  ]
}`

const addressProto = `syntax = "proto3";
package kql.playground.common;

message Address {
  string street = 1;
  string city = 2;
  string postal_code = 3;
  string country = 4;
}
`

const shipmentProto = `syntax = "proto3";
package kql.playground.shipping;

import "address.proto";

// Most records: message index [0].
message Shipment {
  enum Status {
    STATUS_UNSPECIFIED = 0;
    PACKED = 1;
    IN_TRANSIT = 2;
    DELIVERED = 3;
  }
  message Parcel {
    string sku = 1;
    int32 quantity = 2;
    double weight_kg = 3;
  }
  string shipment_id = 1;
  string order_id = 2;
  Status status = 3;
  kql.playground.common.Address destination = 4;
  repeated Parcel parcels = 5;
  string carrier = 6;
}

// Every fifth record: message index [1].
message ShipmentCancelled {
  string shipment_id = 1;
  string order_id = 2;
  string reason = 3;
}
`

// registryRecords registers the demo schemas and builds the records of
// payments-avro and shipments-proto, encoded through the registry.
func (p *Playground) registryRecords(ctx context.Context, rng *rand.Rand, base time.Time) ([]*kgo.Record, error) {
	payID, _, err := p.sr.RegisterSchema("payments-avro-value", sr.Schema{Type: sr.TypeAvro, Schema: paymentSchema})
	if err != nil {
		return nil, fmt.Errorf("registering payments-avro-value: %w", err)
	}
	if _, _, err := p.sr.RegisterSchema("address.proto", sr.Schema{Type: sr.TypeProtobuf, Schema: addressProto}); err != nil {
		return nil, fmt.Errorf("registering address.proto: %w", err)
	}
	shipID, _, err := p.sr.RegisterSchema("shipments-proto-value", sr.Schema{Type: sr.TypeProtobuf, Schema: shipmentProto,
		References: []sr.SchemaReference{{Name: "address.proto", Subject: "address.proto", Version: 1}}})
	if err != nil {
		return nil, fmt.Errorf("registering shipments-proto-value: %w", err)
	}
	reg, err := schema.Open(schema.Config{URLs: []string{p.sr.URL()}})
	if err != nil {
		return nil, err
	}
	p.reg = &encoder{reg: reg, paymentID: payID, shipmentID: shipID}
	at := func(i, n int) time.Time { // spread n records over the hour, with jitter
		step := time.Hour / time.Duration(n)
		return base.Add(time.Duration(i)*step + time.Duration(rng.Int63n(int64(step))))
	}

	var out []*kgo.Record
	const legacyAt = PaymentsAvroRecords / 2 // the record with the unknown schema id comes after this many
	for i := 0; i < PaymentsAvroRecords+1; i++ {
		ts := at(i, PaymentsAvroRecords+1)
		order := fmt.Sprintf("o-%05d", 10000+rng.Intn(OrdersRecords))
		r, err := p.reg.payment(ctx, rng, i, order, ts)
		if err != nil {
			return nil, err
		}
		if i == legacyAt {
			// Written against another registry: the same bytes under an
			// id this registry does not know.
			binary.BigEndian.PutUint32(r.Value[1:5], UnknownSchemaID)
			r.Key = []byte("o-legacy")
		}
		out = append(out, r)
	}
	for i := 0; i < ShipmentRecords; i++ {
		ts := at(i, ShipmentRecords)
		order := fmt.Sprintf("o-%05d", 10000+rng.Intn(OrdersRecords))
		r, err := p.reg.shipment(ctx, rng, i, order, ts)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// encoder writes the registry topics' records, for the seed and for the
// live traffic alike, so both look the same.
type encoder struct {
	reg                   *schema.Registry
	paymentID, shipmentID int
}

func (e *encoder) encode(ctx context.Context, id int, v any) ([]byte, error) {
	text, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	enc, err := e.reg.Encode(ctx, schema.Ref{ID: id}, text)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", text, err)
	}
	return enc.Bytes, nil
}

// payment is payments-avro's record number i, paying order.
func (e *encoder) payment(ctx context.Context, rng *rand.Rand, i int, order string, ts time.Time) (*kgo.Record, error) {
	methods := []string{"CARD", "TRANSFER", "WALLET"}
	coupons := []string{"WELCOME10", "SPRING", "LOYAL5"}
	cents := 500 + rng.Intn(20000)
	var coupon any // null for most payments
	if rng.Intn(4) == 0 {
		coupon = coupons[rng.Intn(len(coupons))]
	}
	v, err := e.encode(ctx, e.paymentID, map[string]any{
		"payment_id": fmt.Sprintf("pa-%05d", i),
		"order_id":   order,
		"amount":     json.Number(fmt.Sprintf("%d.%02d", cents/100, cents%100)),
		"currency":   "EUR",
		"method":     methods[rng.Intn(len(methods))],
		"paid_at":    ts.UTC().Format("2006-01-02T15:04:05.000Z"),
		"coupon":     coupon,
	})
	if err != nil {
		return nil, err
	}
	return &kgo.Record{Topic: "payments-avro", Key: []byte(order), Value: v, Timestamp: ts}, nil
}

// shipment is shipments-proto's record number i, shipping order: every
// fifth is a ShipmentCancelled.
func (e *encoder) shipment(ctx context.Context, rng *rand.Rand, i int, order string, ts time.Time) (*kgo.Record, error) {
	carriers := []string{"DHL", "UPS", "PostNL", "GLS"}
	statuses := []string{"PACKED", "IN_TRANSIT", "DELIVERED"}
	cities := []struct{ city, postal, country string }{
		{"Lisbon", "1100-148", "PT"}, {"Oslo", "0150", "NO"}, {"Lyon", "69002", "FR"}, {"Porto", "4050-262", "PT"},
		{"Gent", "9000", "BE"}, {"Turin", "10121", "IT"}, {"Graz", "8010", "AT"}, {"Cork", "T12 X2YZ", "IE"},
	}
	skus := []string{"espresso-beans", "grinder", "kettle", "filter-papers", "mug", "scale", "dripper", "tamper"}
	reasons := []string{"customer request", "address not found", "payment failed"}
	id := fmt.Sprintf("s-%05d", i)
	var msg map[string]any
	if i%5 == 4 {
		msg = map[string]any{"shipment_id": id, "order_id": order, "reason": reasons[rng.Intn(len(reasons))]}
	} else {
		c := cities[rng.Intn(len(cities))]
		var parcels []map[string]any
		for n := 1 + rng.Intn(3); n > 0; n-- {
			parcels = append(parcels, map[string]any{
				"sku": skus[rng.Intn(len(skus))], "quantity": 1 + rng.Intn(3), "weight_kg": float64(1+rng.Intn(50)) / 10,
			})
		}
		msg = map[string]any{
			"shipment_id": id,
			"order_id":    order,
			"status":      statuses[rng.Intn(len(statuses))],
			"destination": map[string]any{"street": fmt.Sprintf("%d Harbour Street", 1+rng.Intn(200)), "city": c.city, "postal_code": c.postal, "country": c.country},
			"parcels":     parcels,
			"carrier":     carriers[rng.Intn(len(carriers))],
		}
	}
	v, err := e.encode(ctx, e.shipmentID, msg)
	if err != nil {
		return nil, err
	}
	return &kgo.Record{Topic: "shipments-proto", Key: []byte(order), Value: v, Timestamp: ts}, nil
}
