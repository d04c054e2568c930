package playground

import (
	"context"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupView is what a user sees of a group at one moment: SHOW GROUPS'
// state and members, and its committed offsets and lag summed.
type groupView struct {
	state     string
	members   int
	committed int64
	lag       int64
}

func observe(t *testing.T, ctx context.Context, adm *kadm.Client) (map[string]groupView, int64) {
	t.Helper()
	lags, err := adm.Lag(ctx, Groups...)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]groupView{}
	for _, g := range Groups {
		l := lags[g]
		if err := l.Error(); err != nil {
			t.Fatalf("group %s: %v", g, err)
		}
		v := groupView{state: l.State, members: len(l.Members), lag: l.Lag.Total()}
		for _, m := range l.Lag.Sorted() {
			v.committed += m.Commit.At
		}
		out[g] = v
	}
	ends, err := adm.ListEndOffsets(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	ends.Each(func(o kadm.ListedOffset) { end += o.Offset })
	return out, end
}

// TestTrafficMovesAndGroupsBehave runs the traffic ten times as fast and
// waits, up to a bound, until each of the four live groups has been seen in
// the state it plays: warehouse-sync keeps up, billing falls behind and
// catches up, fraud-detection is stalled with a member, shipping is stopped.
func TestTrafficMovesAndGroupsBehave(t *testing.T) {
	p := start(t)
	adm := admin(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	seeded, seededEnd := observe(t, ctx, adm)
	if err := p.StartTraffic(Speed(10)); err != nil {
		t.Fatal(err)
	}

	var (
		grew, keptUp, stalled, stopped bool
		billingFell, billingBack       bool
		billingLow                     = int64(-1)
		billingHigh                    int64
		last                           map[string]groupView
	)
	for !(grew && keptUp && stalled && stopped && billingBack) {
		if ctx.Err() != nil {
			t.Fatalf("after 90s: orders grew %v, warehouse-sync kept up %v, fraud-detection stalled %v, shipping stopped %v, billing fell behind %v and caught up %v; last seen %+v",
				grew, keptUp, stalled, stopped, billingFell, billingBack, last)
		}
		v, end := observe(t, ctx, adm)
		last = v
		grew = grew || end > seededEnd+20

		w := v[GroupKeepsUp]
		keptUp = keptUp || (grew && w.state == "Stable" && w.members == 1 && w.committed > seeded[GroupKeepsUp].committed && w.lag <= 5)

		f := v[GroupStalled]
		if f.committed != seeded[GroupStalled].committed {
			t.Fatalf("the stalled group committed: %d, seeded %d", f.committed, seeded[GroupStalled].committed)
		}
		stalled = stalled || (f.state == "Stable" && f.members == 1 && f.lag > seeded[GroupStalled].lag+5)

		s := v[GroupStopped]
		if s.members != 0 || s.committed != seeded[GroupStopped].committed {
			t.Fatalf("the stopped group has %d members and committed %d (seeded %d)", s.members, s.committed, seeded[GroupStopped].committed)
		}
		stopped = stopped || (s.state == "Empty" && s.lag > seeded[GroupStopped].lag+5)

		// billing: a low point, then lag rising well above it (falling
		// behind), then back down well below the high (catching up).
		b := v[GroupCatchesUp]
		if b.members == 1 && b.state == "Stable" {
			switch {
			case !billingFell:
				if billingLow < 0 || b.lag < billingLow {
					billingLow = b.lag
				}
				if b.lag > billingLow+20 {
					billingFell, billingHigh = true, b.lag
				}
			case b.lag > billingHigh:
				billingHigh = b.lag
			case b.lag < billingHigh-20:
				billingBack = true
			}
		}
		time.Sleep(100 * time.Millisecond) // a poll interval, not a wait for an outcome
	}
}

// TestCloseStopsTheTraffic: Close with the traffic running leaves no
// goroutine and no listener behind.
func TestCloseStopsTheTraffic(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.StartTraffic(Speed(10)); err != nil {
		p.Close()
		t.Fatal(err)
	}
	adm := admin(t, p)
	// Wait until the members have joined, so Close has them to stop.
	for {
		v, _ := observe(t, ctx, adm)
		if v[GroupKeepsUp].members == 1 && v[GroupCatchesUp].members == 1 && v[GroupStalled].members == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the live groups did not all join within 30s: %+v", v)
		}
		time.Sleep(50 * time.Millisecond)
	}
	adm.Close()
	addrs := append(p.Bootstrap(), strings.TrimPrefix(p.RegistryURL(), "http://"))
	p.Close()
	deadline := time.Now().Add(10 * time.Second)
	n := runtime.NumGoroutine()
	for n > before && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Close", a)
		}
	}
}

// TestCloseDoesNotWaitForAHeldProduce: Close while the traffic's Produce is
// unanswered (held by kfake, as a broker that hangs or a topic dropped under
// the producer) returns at once instead of waiting for the producer's
// retries, which never end: kql's \q must not hang on the traffic.
func TestCloseDoesNotWaitForAHeldProduce(t *testing.T) {
	p := start(t)
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p.Cluster().ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		p.Cluster().KeepControl()
		once.Do(func() { close(held) })
		p.Cluster().SleepControl(func() { <-release })
		return nil, nil, false
	})
	if err := p.StartTraffic(Speed(10)); err != nil {
		t.Fatal(err)
	}
	<-held // the generator's ProduceSync is waiting for this answer
	stopped := make(chan struct{})
	go func() { p.stopTraffic(); close(stopped) }()
	select {
	case <-stopped:
		close(release)
	case <-time.After(15 * time.Second): // the producer's own timeouts are longer; without the fix it waits forever
		close(release)
		<-stopped
		t.Fatal("stopping the traffic waits for a produce that is never answered")
	}
}
