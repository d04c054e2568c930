// Package playground runs an in-process three-broker Kafka cluster (franz-go's
// kfake) seeded with demo data, for `kql --playground`: a newcomer with no
// Kafka at hand can try every statement in one command.
//
// The data is deterministic (a fixed random seed; timestamps fixed relative
// to the start time), so the README's examples and the tests can rely on it:
//
//   - orders: 6 partitions, 360 keyed JSON orders with headers, timestamps
//     spread over the last hour
//   - customers: 3 partitions, 40 keyed JSON customers
//   - customer-profiles: compacted (cleanup.policy=compact), 3 partitions,
//     updates of the same keys and tombstones (null values)
//   - payments: 3 partitions, 150 JSON payments
//   - sensor-readings: 2 partitions of binary (non-UTF-8) values
//   - payments-avro: 3 partitions, 60 payments keyed by order id (text), their
//     values Avro in the schema registry's wire format (subject
//     payments-avro-value): a decimal amount, a timestamp-millis, an enum and
//     a nullable coupon. One more record, the 31st produced (key o-legacy),
//     carries schema id 999, which the registry does not know: reading it
//     shows its raw bytes and a warning, as a record written against another
//     registry would.
//   - shipments-proto: 2 partitions, 40 shipments keyed by order id, their
//     values Protobuf (subject shipments-proto-value): message Shipment with
//     a nested message and an enum, and an Address imported from
//     address.proto, a reference registered as its own subject; every fifth
//     record is a ShipmentCancelled, the file's second message (message
//     index [1])
//   - consumer groups billing, shipping, analytics, fraud-detection,
//     email-notifier and warehouse-sync, with committed offsets behind the
//     end (lag), coordinated by all three brokers
//
// The schema registry is franz-go's srfake, serving on 127.0.0.1 in the
// same process (RegistryURL); the records are encoded through it with the
// schema package, as PRODUCE does. Close stops the brokers and the registry.
//
// Start leaves the data as seeded. StartTraffic (live.go, traffic.go) makes
// it live: a producer keeps writing records like the seed's, and four groups
// run real members (kept up, behind and catching up, stalled; one stays
// stopped) until Close.
package playground

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// Brokers is the number of brokers the playground runs.
const Brokers = 3

// Topic and record counts of the seeded data.
const (
	OrdersPartitions = 6
	OrdersRecords    = 360
	CustomerRecords  = 40
	PaymentRecords   = 150
	// PaymentsAvroRecords are the decodable records of payments-avro; the
	// topic holds one more, whose schema id the registry does not know.
	PaymentsAvroRecords = 60
	ShipmentRecords     = 40
	// UnknownSchemaID is the schema id of payments-avro's record o-legacy.
	UnknownSchemaID = 999
)

// Groups are the seeded consumer groups. Their names were picked so that
// kfake's coordinator hash spreads them over all three brokers, which is
// what makes SHOW GROUPS and DESCRIBE GROUP worth trying here.
var Groups = []string{"billing", "shipping", "analytics", "fraud-detection", "email-notifier", "warehouse-sync"}

// Playground is a running demo cluster and its schema registry.
type Playground struct {
	c   *kfake.Cluster
	sr  *srfake.Registry
	reg *encoder // set by the seed

	traffic *traffic // nil until StartTraffic
}

// Start runs the cluster and the schema registry on 127.0.0.1 and seeds
// them. Close stops both.
func Start(ctx context.Context, opts ...kfake.Opt) (*Playground, error) {
	all := append([]kfake.Opt{kfake.NumBrokers(Brokers), kfake.ClusterID("kql-playground")}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		return nil, fmt.Errorf("starting the embedded cluster: %w", err)
	}
	p := &Playground{c: c, sr: srfake.New()}
	if err := p.seed(ctx, time.Now()); err != nil {
		p.Close()
		return nil, fmt.Errorf("seeding the embedded cluster: %w", err)
	}
	return p, nil
}

// Bootstrap returns the brokers' addresses.
func (p *Playground) Bootstrap() []string { return p.c.ListenAddrs() }

// RegistryURL is the schema registry's address, http://127.0.0.1:PORT.
func (p *Playground) RegistryURL() string { return p.sr.URL() }

// Cluster returns the underlying kfake cluster (tests inspect it).
func (p *Playground) Cluster() *kfake.Cluster { return p.c }

// Close stops the cluster and the registry: no listener or goroutine of
// either is left.
func (p *Playground) Close() {
	p.stopTraffic()
	p.c.Close()
	p.sr.Close()
}

type topicSpec struct {
	name       string
	partitions int32
	configs    map[string]string
}

var topics = []topicSpec{
	{"orders", OrdersPartitions, nil},
	{"customers", 3, nil},
	{"customer-profiles", 3, map[string]string{"cleanup.policy": "compact"}},
	{"payments", 3, nil},
	{"sensor-readings", 2, nil},
	{"payments-avro", 3, nil},
	{"shipments-proto", 2, nil},
}

func (p *Playground) seed(ctx context.Context, now time.Time) error {
	for i, t := range topics {
		if err := p.c.CreateTopic(t.name, t.partitions, t.configs); err != nil {
			return fmt.Errorf("creating topic %s: %w", t.name, err)
		}
		// kfake picks each leader at random, so a broker could lead none of
		// orders' six partitions (one start in nine) and an example such as
		// DESCRIBE TOPIC orders WHERE leader = 1 answer nothing: spread them.
		for part := int32(0); part < t.partitions; part++ {
			node := (part + int32(i)) % Brokers
			if err := p.c.MoveTopicPartition(t.name, part, node); err != nil {
				return fmt.Errorf("placing %s partition %d on broker %d: %w", t.name, part, node, err)
			}
		}
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(p.Bootstrap()...),
		kgo.ClientID("kql-playground"),
		kgo.ProducerLinger(0),
	)
	if err != nil {
		return err
	}
	defer cl.Close()

	base := now.Truncate(time.Second).Add(-time.Hour)
	rng := rand.New(rand.NewSource(20240601))
	recs := records(rng, base)
	// The registry's topics draw from their own source, so that adding them
	// left every other topic's data (and the README's examples) as it was.
	reg, err := p.registryRecords(ctx, rand.New(rand.NewSource(20261130)), base)
	if err != nil {
		return err
	}
	recs = append(recs, reg...)
	results := cl.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		return fmt.Errorf("producing demo records: %w", err)
	}
	ends := map[string]map[int32]int64{}
	for _, r := range results {
		if ends[r.Record.Topic] == nil {
			ends[r.Record.Topic] = map[int32]int64{}
		}
		if e := r.Record.Offset + 1; e > ends[r.Record.Topic][r.Record.Partition] {
			ends[r.Record.Topic][r.Record.Partition] = e
		}
	}
	return commitGroups(ctx, kadm.NewClient(cl), rng, ends)
}

// records builds every demo record, in produce order.
func records(rng *rand.Rand, base time.Time) []*kgo.Record {
	var out []*kgo.Record
	at := func(i, n int) time.Time { // spread n records over the hour, with jitter
		step := time.Hour / time.Duration(n)
		return base.Add(time.Duration(i)*step + time.Duration(rng.Int63n(int64(step))))
	}
	for i := 0; i < OrdersRecords; i++ {
		cust := fmt.Sprintf("c-%04d", 1+rng.Intn(CustomerRecords))
		out = append(out, order(rng, i, cust, at(i, OrdersRecords)))
	}

	cities := []string{"Lisbon", "Oslo", "Lyon", "Porto", "Gent", "Turin", "Graz", "Cork"}
	for i := 1; i <= CustomerRecords; i++ {
		id := fmt.Sprintf("c-%04d", i)
		out = append(out, &kgo.Record{Topic: "customers", Key: []byte(id), Value: js(map[string]any{
			"customer": id, "name": fmt.Sprintf("Customer %d", i), "city": cities[rng.Intn(len(cities))], "since": 2015 + rng.Intn(10),
		}), Timestamp: at(i-1, CustomerRecords)})
	}

	// The compacted topic: every profile written, some updated, some deleted.
	const profiles = 20
	n := 0
	for round := 0; round < 3; round++ {
		for i := 1; i <= profiles; i++ {
			id := fmt.Sprintf("c-%04d", i)
			switch {
			case round == 0 || (round == 1 && i%3 == 0):
				out = append(out, &kgo.Record{Topic: "customer-profiles", Key: []byte(id), Value: js(map[string]any{
					"customer": id, "tier": []string{"bronze", "silver", "gold"}[rng.Intn(3)], "version": round + 1,
				}), Timestamp: at(n, 3*profiles)})
			case round == 2 && i%5 == 0: // a tombstone: null value
				out = append(out, &kgo.Record{Topic: "customer-profiles", Key: []byte(id), Value: nil, Timestamp: at(n, 3*profiles)})
			}
			n++
		}
	}

	methods := []string{"card", "transfer", "wallet"}
	for i := 0; i < PaymentRecords; i++ {
		out = append(out, &kgo.Record{Topic: "payments", Key: []byte(fmt.Sprintf("o-%05d", 10000+rng.Intn(OrdersRecords))), Value: js(map[string]any{
			"payment_id": fmt.Sprintf("p-%05d", i), "method": methods[rng.Intn(len(methods))], "amount": float64(500+rng.Intn(20000)) / 100,
		}), Timestamp: at(i, PaymentRecords)})
	}

	// Binary values: shown as x'...' hex literals, keys stay readable.
	for i := 0; i < 40; i++ {
		v := make([]byte, 10)
		binary.BigEndian.PutUint16(v, uint16(i))
		binary.BigEndian.PutUint64(v[2:], uint64(rng.Int63()))
		v[0] = 0xff // never valid UTF-8
		out = append(out, &kgo.Record{Topic: "sensor-readings", Key: []byte(fmt.Sprintf("sensor-%d", i%4)), Value: v, Timestamp: at(i, 40)})
	}
	return out
}

// order is orders' record number i, for customer cust: the seed's and the
// live traffic's orders are made alike.
func order(rng *rand.Rand, i int, cust string, ts time.Time) *kgo.Record {
	sources := []string{"web", "mobile", "pos"}
	products := []string{"espresso beans", "grinder", "kettle", "filter papers", "mug", "scale", "dripper", "tamper"}
	statuses := []string{"created", "paid", "shipped", "delivered", "cancelled"}
	o := map[string]any{
		"order_id": fmt.Sprintf("o-%05d", 10000+i),
		"customer": cust,
		"product":  products[rng.Intn(len(products))],
		"quantity": 1 + rng.Intn(4),
		"amount":   float64(500+rng.Intn(20000)) / 100,
		"status":   statuses[rng.Intn(len(statuses))],
	}
	hdrs := []kgo.RecordHeader{
		{Key: "source", Value: []byte(sources[rng.Intn(len(sources))])},
		{Key: "trace-id", Value: []byte(fmt.Sprintf("%016x", rng.Uint64()))},
	}
	if i%10 == 0 { // a repeated header key: headers keep order and duplicates
		hdrs = append(hdrs, kgo.RecordHeader{Key: "retry", Value: []byte("1")}, kgo.RecordHeader{Key: "retry", Value: []byte("2")})
	}
	return &kgo.Record{Topic: "orders", Key: []byte(cust), Value: js(o), Headers: hdrs, Timestamp: ts}
}

func js(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // static shapes: cannot fail
	}
	return b
}

// groupTopics says which topics each group has committed offsets for.
var groupTopics = map[string][]string{
	"billing":         {"orders", "payments"},
	"shipping":        {"orders"},
	"analytics":       {"orders", "customers", "payments"},
	"fraud-detection": {"payments"},
	"email-notifier":  {"customers"},
	"warehouse-sync":  {"orders"},
}

// commitGroups commits each group's offsets some way behind the end of each
// partition, so DESCRIBE GROUP shows lag. "shipping" never commits partition
// 0 of orders, and "warehouse-sync" is caught up.
func commitGroups(ctx context.Context, adm *kadm.Client, rng *rand.Rand, ends map[string]map[int32]int64) error {
	for _, g := range Groups {
		var offs kadm.Offsets
		for _, t := range groupTopics[g] {
			parts := make([]int32, 0, len(ends[t]))
			for p := range ends[t] {
				parts = append(parts, p)
			}
			sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
			for _, p := range parts {
				if g == "shipping" && p == 0 {
					continue
				}
				end := ends[t][p]
				lag := int64(rng.Intn(int(end/2) + 1))
				if g == "warehouse-sync" {
					lag = 0 // caught up
				}
				offs.AddOffset(t, p, end-lag, -1)
			}
		}
		resp, err := adm.CommitOffsets(ctx, g, offs)
		if err != nil {
			return fmt.Errorf("committing offsets of group %s: %w", g, err)
		}
		if err := resp.Error(); err != nil {
			return fmt.Errorf("committing offsets of group %s: %w", g, err)
		}
	}
	return nil
}
