package playground

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The consumer groups that run while the traffic does, each a real kgo
// group member on the playground's brokers, so SHOW GROUPS and DESCRIBE
// GROUP show members, states and lag as on a real cluster:
//
//   - warehouse-sync (orders) keeps up: it commits what it reads at once.
//   - billing (orders, payments) falls behind and catches up: for a minute
//     it handles one record a second, slower than the orders come, then for
//     half a minute fifty a second, and over again.
//   - fraud-detection (payments) is stalled: its member stays in the group
//     but stopped polling, so nothing is committed while lag grows.
//   - shipping (orders) is stopped: no members, its offsets where they were.
//
// analytics and email-notifier stay as seeded (no members).
const (
	GroupKeepsUp   = "warehouse-sync"
	GroupCatchesUp = "billing"
	GroupStalled   = "fraud-detection"
	GroupStopped   = "shipping"
)

// billing's cycle at speed 1.
const (
	billingSlow      = time.Minute // one record per billingSlowEvery
	billingSlowEvery = time.Second
	billingFast      = 30 * time.Second // billingFastBatch records per billingFastEvery
	billingFastBatch = 10
	billingFastEvery = 200 * time.Millisecond
)

// TrafficOpt tunes StartTraffic.
type TrafficOpt func(*trafficConfig)

type trafficConfig struct{ speed float64 }

// Speed runs the traffic's clock f times as fast (f > 0): the generator's
// ticks and billing's cycle and rates. Tests use it to see a whole cycle in
// a few seconds.
func Speed(f float64) TrafficOpt { return func(c *trafficConfig) { c.speed = f } }

// traffic is the running producer and group members.
type traffic struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// prod is closed before the goroutines are waited for: a ProduceSync
	// whose records are unanswered (a topic dropped under it, a broker that
	// hangs) ignores its cancelled context, and Close fails what it holds.
	prod    *kgo.Client
	clients []*kgo.Client // closed after the goroutines end
}

// StartTraffic starts producing into the topics and runs the live consumer
// groups, until Close. Without it the playground's data stays as seeded
// (what tests want); kql --playground calls it unless --playground-static.
func (p *Playground) StartTraffic(opts ...TrafficOpt) error {
	if p.traffic != nil {
		return fmt.Errorf("the playground's traffic is already running")
	}
	cfg := trafficConfig{speed: 1}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.speed <= 0 {
		return fmt.Errorf("traffic speed %v: want more than 0", cfg.speed)
	}
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) / cfg.speed) }
	ctx, cancel := context.WithCancel(context.Background())
	t := &traffic{cancel: cancel}
	p.traffic = t

	client := func(opts ...kgo.Opt) (*kgo.Client, error) {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(p.Bootstrap()...)}, opts...)...)
		if err != nil {
			return nil, err
		}
		t.clients = append(t.clients, cl)
		return cl, nil
	}
	member := func(group string, topics ...string) (*kgo.Client, error) {
		return client(kgo.ClientID(group+"-worker"), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topics...),
			kgo.DisableAutoCommit(), kgo.FetchMaxWait(scale(tick)))
	}
	fail := func(err error) error {
		p.stopTraffic()
		return fmt.Errorf("starting the playground's traffic: %w", err)
	}

	prod, err := kgo.NewClient(kgo.SeedBrokers(p.Bootstrap()...), kgo.ClientID("kql-playground-traffic"), kgo.ProducerLinger(0))
	if err != nil {
		return fail(err)
	}
	t.prod = prod
	keeps, err := member(GroupKeepsUp, groupTopics[GroupKeepsUp]...)
	if err != nil {
		return fail(err)
	}
	billing, err := member(GroupCatchesUp, groupTopics[GroupCatchesUp]...)
	if err != nil {
		return fail(err)
	}
	// The stalled member joins (kgo joins in the background) and is never
	// polled: it holds its partitions and commits nothing.
	if _, err := member(GroupStalled, groupTopics[GroupStalled]...); err != nil {
		return fail(err)
	}

	gen := newGenerator(p.reg)
	t.run(func() {
		every := time.NewTicker(scale(tick))
		defer every.Stop()
		for {
			recs, err := gen.next(ctx, time.Now())
			if err != nil {
				return // only the registry's encoding can fail, and only when closing
			}
			// A failed produce is dropped: the next tick goes on.
			prod.ProduceSync(ctx, recs...)
			select {
			case <-ctx.Done():
				return
			case <-every.C:
			}
		}
	})
	t.run(func() {
		for ctx.Err() == nil {
			keeps.PollFetches(ctx)
			_ = keeps.CommitUncommittedOffsets(ctx) // a failed commit is retried with the next
		}
	})
	t.run(func() {
		start := time.Now()
		slow, fast := scale(billingSlow), scale(billingFast)
		for ctx.Err() == nil {
			n, wait := 1, scale(billingSlowEvery)
			if time.Since(start)%(slow+fast) >= slow {
				n, wait = billingFastBatch, scale(billingFastEvery)
			}
			billing.PollRecords(ctx, n)
			_ = billing.CommitUncommittedOffsets(ctx)
			sleep(ctx, wait)
		}
	})
	return nil
}

func (t *traffic) run(f func()) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		f()
	}()
}

// stopTraffic ends the goroutines, then closes the clients: the members
// leave their groups.
func (p *Playground) stopTraffic() {
	t := p.traffic
	if t == nil {
		return
	}
	t.cancel()
	if t.prod != nil {
		t.prod.Close() // fails the records a ProduceSync may still wait for
	}
	t.wg.Wait()
	for _, cl := range t.clients {
		cl.Close()
	}
	p.traffic = nil
}

func sleep(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}
