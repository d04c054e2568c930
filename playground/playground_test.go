package playground

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func start(t *testing.T) *Playground {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func admin(t *testing.T, p *Playground) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

func TestGroupsAreCoordinatedByEveryBroker(t *testing.T) {
	p := start(t)
	seen := map[int32][]string{}
	for _, g := range Groups {
		n := p.Cluster().CoordinatorFor(g)
		seen[n] = append(seen[n], g)
	}
	if len(seen) != Brokers {
		t.Fatalf("groups are coordinated by %d brokers, want all %d: %v", len(seen), Brokers, seen)
	}
}

func TestSeededData(t *testing.T) {
	p := start(t)
	adm := admin(t, p)
	ctx := context.Background()
	if n := len(p.Bootstrap()); n != Brokers {
		t.Fatalf("%d listen addresses, want %d", n, Brokers)
	}

	details, err := adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range topics {
		d, ok := details[tp.name]
		if !ok {
			t.Fatalf("topic %s missing; have %v", tp.name, details.Names())
		}
		if int32(len(d.Partitions)) != tp.partitions {
			t.Errorf("topic %s has %d partitions, want %d", tp.name, len(d.Partitions), tp.partitions)
		}
	}
	cfgs, err := adm.DescribeTopicConfigs(ctx, "customer-profiles")
	if err != nil {
		t.Fatal(err)
	}
	rc, err := cfgs.On("customer-profiles", nil)
	if err != nil {
		t.Fatal(err)
	}
	compact := false
	for _, c := range rc.Configs {
		if c.Key == "cleanup.policy" && c.MaybeValue() == "compact" {
			compact = true
		}
	}
	if !compact {
		t.Error("customer-profiles is not cleanup.policy=compact")
	}

	ends, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Errorf("orders/%d: %v", o.Partition, o.Err)
		}
		if o.Offset == 0 {
			t.Errorf("orders/%d is empty: keyed records should spread over every partition", o.Partition)
		}
		total += o.Offset
	})
	if total != OrdersRecords {
		t.Errorf("orders holds %d records, want %d", total, OrdersRecords)
	}

	lags, err := adm.Lag(ctx, Groups...)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Groups {
		l, ok := lags[g]
		if !ok || l.Error() != nil {
			t.Fatalf("group %s: %v", g, l.Error())
		}
		if g == "warehouse-sync" {
			if l.Lag.Total() != 0 {
				t.Errorf("warehouse-sync should be caught up, lag %d", l.Lag.Total())
			}
			continue
		}
		if l.Lag.Total() <= 0 {
			t.Errorf("group %s has no lag", g)
		}
	}
}

func TestTombstonesAndTimestamps(t *testing.T) {
	p := start(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap()...), kgo.ConsumeTopics("customer-profiles", "orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tombstones, orders := 0, 0
	var oldest, newest time.Time
	for orders < OrdersRecords || tombstones == 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d orders and %d tombstones before timing out", orders, tombstones)
		}
		fs.EachRecord(func(r *kgo.Record) {
			switch r.Topic {
			case "customer-profiles":
				if r.Value == nil {
					tombstones++
				}
			case "orders":
				orders++
				if len(r.Headers) < 2 {
					t.Errorf("order at %d/%d has %d headers", r.Partition, r.Offset, len(r.Headers))
				}
				if oldest.IsZero() || r.Timestamp.Before(oldest) {
					oldest = r.Timestamp
				}
				if r.Timestamp.After(newest) {
					newest = r.Timestamp
				}
			}
		})
	}
	if tombstones == 0 {
		t.Error("no tombstones in customer-profiles")
	}
	if span := newest.Sub(oldest); span < 50*time.Minute || time.Since(oldest) > 61*time.Minute {
		t.Errorf("order timestamps span %s from %s: want about the last hour", span, oldest)
	}
}
