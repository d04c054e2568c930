package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestTrafficIsDeterministicWithBursts: two generators write the same
// records tick for tick; over two minutes orders come at a few a second,
// with at least one burst, and look like the seed's.
func TestTrafficIsDeterministicWithBursts(t *testing.T) {
	p := start(t)
	ctx := context.Background()
	a, b := newGenerator(p.reg), newGenerator(p.reg)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const ticks = int(2 * time.Minute / tick)
	orders, maxPerTick, burstTicks := 0, 0, 0
	for i := 0; i < ticks; i++ {
		ra, err := a.next(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.next(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(ra) != len(rb) {
			t.Fatalf("tick %d: %d records and %d", i, len(ra), len(rb))
		}
		n := 0
		for j := range ra {
			if ra[j].Topic != rb[j].Topic || !bytes.Equal(ra[j].Key, rb[j].Key) || !bytes.Equal(ra[j].Value, rb[j].Value) {
				t.Fatalf("tick %d record %d differs: %s %s and %s %s", i, j, ra[j].Topic, ra[j].Key, rb[j].Topic, rb[j].Key)
			}
			if ra[j].Topic != "orders" {
				continue
			}
			n++
			var o map[string]any
			if err := json.Unmarshal(ra[j].Value, &o); err != nil || o["amount"] == nil || o["customer"] != string(ra[j].Key) {
				t.Fatalf("an order unlike the seed's: %s (%v)", ra[j].Value, err)
			}
			if len(ra[j].Headers) < 2 || ra[j].Headers[0].Key != "source" {
				t.Fatalf("an order without the seed's headers: %v", ra[j].Headers)
			}
		}
		orders += n
		if n > maxPerTick {
			maxPerTick = n
		}
		if n >= 4 {
			burstTicks++
		}
		now = now.Add(tick)
	}
	perSecond := float64(orders) / (2 * time.Minute).Seconds()
	if perSecond < 1 || perSecond > 6 || burstTicks == 0 || maxPerTick < 4 {
		t.Errorf("%d orders in two minutes (%.1f a second), %d burst ticks, at most %d in a tick: want a few a second with bursts",
			orders, perSecond, burstTicks, maxPerTick)
	}
	if a.orders != OrdersRecords+orders {
		t.Errorf("order numbers end at %d, want %d: they continue the seed's", a.orders, OrdersRecords+orders)
	}
}
