package playground

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The live traffic: after the seed, StartTraffic keeps writing records
// shaped like the seed's (the same generators, numbers continuing where the
// seed stopped) with timestamps of now, so FOLLOW, \watch, lag and write
// rates move. The sequence of records is fixed by a seed; only the wall
// clock decides when each tick's records go out.

// tick is how often the generator writes, at speed 1.
const tick = 500 * time.Millisecond

// generator makes each tick's records. It is not safe for concurrent use.
type generator struct {
	rng *rand.Rand
	enc *encoder
	// the next record number of each topic, continuing the seed's
	orders, payments, paymentsAvro, shipments, readings int
	ticks                                               int
	versions                                            map[string]int // customer-profiles' latest version per key
	burst, untilBurst                                   int            // ticks left in the current burst; ticks until the next
}

func newGenerator(enc *encoder) *generator {
	g := &generator{
		rng:          rand.New(rand.NewSource(20261201)),
		enc:          enc,
		orders:       OrdersRecords,
		payments:     PaymentRecords,
		paymentsAvro: PaymentsAvroRecords + 1,
		shipments:    ShipmentRecords,
		readings:     40,
		versions:     map[string]int{},
	}
	for i := 1; i <= 20; i++ { // as the seed left customer-profiles
		v := 1
		if i%3 == 0 {
			v = 2
		}
		g.versions[fmt.Sprintf("c-%04d", i)] = v
	}
	g.untilBurst = 10 + g.rng.Intn(10) // the first burst within the first ten seconds
	return g
}

// next returns the records of one tick, stamped now: about two orders a
// second, with a burst of eight to sixteen a second for a few seconds every
// half minute to a minute; a payment for every paid order, some of them
// also on payments-avro; a shipment for every shipped one; a sensor reading
// every second; now and then a customer's profile update.
func (g *generator) next(ctx context.Context, now time.Time) ([]*kgo.Record, error) {
	var out []*kgo.Record
	n := 0
	if g.burst > 0 {
		g.burst--
		n = 4 + g.rng.Intn(5)
	} else {
		switch r := g.rng.Intn(10); {
		case r >= 8:
			n = 2
		case r >= 4:
			n = 1
		}
		if g.untilBurst--; g.untilBurst <= 0 {
			g.burst = 4 + g.rng.Intn(4)
			g.untilBurst = 60 + g.rng.Intn(60)
		}
	}
	for ; n > 0; n-- {
		cust := fmt.Sprintf("c-%04d", 1+g.rng.Intn(CustomerRecords))
		o := order(g.rng, g.orders, cust, now)
		g.orders++
		out = append(out, o)
		var v struct {
			OrderID string  `json:"order_id"`
			Amount  float64 `json:"amount"`
			Status  string  `json:"status"`
		}
		if err := json.Unmarshal(o.Value, &v); err != nil {
			return nil, err
		}
		if v.Status == "created" || v.Status == "cancelled" {
			continue // not paid
		}
		out = append(out, &kgo.Record{Topic: "payments", Key: []byte(v.OrderID), Value: js(map[string]any{
			"payment_id": fmt.Sprintf("p-%05d", g.payments), "method": []string{"card", "transfer", "wallet"}[g.rng.Intn(3)], "amount": v.Amount,
		}), Timestamp: now})
		g.payments++
		if g.rng.Intn(3) == 0 {
			r, err := g.enc.payment(ctx, g.rng, g.paymentsAvro, v.OrderID, now)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
			g.paymentsAvro++
		}
		if v.Status == "shipped" || v.Status == "delivered" {
			r, err := g.enc.shipment(ctx, g.rng, g.shipments, v.OrderID, now)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
			g.shipments++
		}
	}
	if g.ticks++; g.ticks%2 == 1 {
		v := make([]byte, 10)
		binary.BigEndian.PutUint16(v, uint16(g.readings))
		binary.BigEndian.PutUint64(v[2:], uint64(g.rng.Int63()))
		v[0] = 0xff // never valid UTF-8, as the seed's
		out = append(out, &kgo.Record{Topic: "sensor-readings", Key: []byte(fmt.Sprintf("sensor-%d", g.readings%4)), Value: v, Timestamp: now})
		g.readings++
	}
	if g.rng.Intn(40) == 0 {
		id := fmt.Sprintf("c-%04d", 1+g.rng.Intn(len(g.versions)))
		g.versions[id]++
		out = append(out, &kgo.Record{Topic: "customer-profiles", Key: []byte(id), Value: js(map[string]any{
			"customer": id, "tier": []string{"bronze", "silver", "gold"}[g.rng.Intn(3)], "version": g.versions[id],
		}), Timestamp: now})
	}
	return out, nil
}
