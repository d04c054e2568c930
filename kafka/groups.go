package kafka

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// GroupAnswer is one group's answer inside a coordinator's response.
type GroupAnswer[R any] struct {
	Group string
	Value R
	Code  int16
	Msg   string // the broker's own explanation of Code, if it sent one
}

// GroupRequest describes a request that must go to each group's
// coordinator (OffsetFetch, DescribeGroups, ...).
type GroupRequest[R any] struct {
	API   string
	Build func(groups []string) kmsg.Request
	Parse func(resp kmsg.Response) []GroupAnswer[R]
	// Answered, when set, is told which broker answered each group that
	// had no group-level error, so per-item errors inside that answer
	// can name it (a later FindCoordinator may name another, or none).
	Answered func(group string, broker int32)
	// Keys is what the keys are: groups (the zero value) or
	// transactional ids, whose coordinator FindCoordinator finds with
	// key type 1 (a transaction coordinator is usually another broker
	// than the group coordinator of the same string).
	Keys CoordinatorKeys
}

// CoordinatorKeys is FindCoordinator's key type.
type CoordinatorKeys int8

const (
	GroupKeys       CoordinatorKeys = 0
	TransactionKeys CoordinatorKeys = 1
)

// kind names a key in messages.
func (k CoordinatorKeys) kind() string {
	if k == TransactionKeys {
		return "transactional id"
	}
	return "group"
}

// FindCoordinators asks any broker which broker coordinates each group, in
// one batched FindCoordinator where the broker supports it (v4+, KIP-699).
func (c *Cluster) FindCoordinators(ctx context.Context, groups []string) (map[string]int32, map[string]*GroupError, error) {
	return c.findCoordinators(ctx, GroupKeys, groups)
}

// FindTxnCoordinators asks any broker which broker coordinates each
// transactional id (FindCoordinator, key type transaction).
func (c *Cluster) FindTxnCoordinators(ctx context.Context, ids []string) (map[string]int32, map[string]*GroupError, error) {
	return c.findCoordinators(ctx, TransactionKeys, ids)
}

func (c *Cluster) findCoordinators(ctx context.Context, keys CoordinatorKeys, groups []string) (map[string]int32, map[string]*GroupError, error) {
	const api = "FindCoordinator"
	kind := keys.kind()
	out := make(map[string]int32, len(groups))
	failed := make(map[string]*GroupError)
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = int8(keys)
	req.CoordinatorKey = groups[0]
	req.CoordinatorKeys = groups
	raw, by, err := c.AnyBroker(ctx, api, groups, req)
	if err != nil {
		return nil, nil, err
	}
	resp := raw.(*kmsg.FindCoordinatorResponse)
	if resp.Version < 4 {
		// One key per request before v4.
		for i, g := range groups {
			if i > 0 {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorType = int8(keys)
				req.CoordinatorKey = g
				if raw, by, err = c.AnyBroker(ctx, api, []string{g}, req); err != nil {
					return nil, nil, err
				}
				resp = raw.(*kmsg.FindCoordinatorResponse)
			}
			if resp.ErrorCode != 0 {
				failed[g] = &GroupError{API: api, Kind: kind, Group: g, Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(resp.ErrorCode)}
				continue
			}
			out[g] = resp.NodeID
		}
		return out, failed, nil
	}
	for _, co := range resp.Coordinators {
		if co.ErrorCode != 0 {
			failed[co.Key] = &GroupError{API: api, Kind: kind, Group: co.Key, Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(co.ErrorCode)}
			continue
		}
		out[co.Key] = co.NodeID
	}
	for _, g := range groups {
		if _, ok := out[g]; !ok && failed[g] == nil {
			failed[g] = &GroupError{API: api, Kind: kind, Group: g, Broker: by, Addr: c.addr(by), Err: errors.New("the broker's response did not mention this " + kind)}
		}
	}
	return out, failed, nil
}

// Coordinators finds each group's coordinator, then sends one request per
// coordinator broker, concurrently. Groups whose coordinator moved or is
// loading (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE,
// COORDINATOR_LOAD_IN_PROGRESS) are looked up again and retried, a few
// times with growing pauses (0.1 s to 1.6 s, 3.1 s in all: a broker that
// has just started loads its groups for a second or more; a coordinator
// that cannot be reached, three times within 0.7 s); what still fails is
// returned per group.
func Coordinators[R any](ctx context.Context, c *Cluster, groups []string, gr GroupRequest[R]) (map[string]R, map[string]*GroupError, error) {
	got := make(map[string]R, len(groups))
	failed := make(map[string]*GroupError)
	pending := slices.Clone(groups)
	for attempt := 0; attempt < 6 && len(pending) > 0; attempt++ {
		if attempt > 0 && !sleep(ctx, 100*time.Millisecond<<(attempt-1)) {
			return got, failed, ctx.Err()
		}
		coords, ferr, err := c.findCoordinators(ctx, gr.Keys, pending)
		if err != nil {
			return got, failed, err
		}
		for g, e := range ferr {
			failed[g] = e
		}
		byBroker := make(map[int32][]string)
		for _, g := range pending {
			if id, ok := coords[g]; ok {
				byBroker[id] = append(byBroker[id], g)
				delete(failed, g)
			}
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for broker, bgroups := range byBroker {
			wg.Go(func() {
				resp, err := c.send(ctx, gr.API, broker, bgroups, gr.Build(bgroups))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					for _, g := range bgroups {
						failed[g] = &GroupError{API: gr.API, Kind: gr.Keys.kind(), Group: g, Broker: broker, Addr: c.addr(broker), Err: err}
					}
					return
				}
				seen := make(map[string]bool, len(bgroups))
				for _, a := range gr.Parse(resp) {
					seen[a.Group] = true
					if a.Code != 0 {
						err := withBrokerMessage(kerr.ErrorForCode(a.Code), a.Msg)
						failed[a.Group] = &GroupError{API: gr.API, Kind: gr.Keys.kind(), Group: a.Group, Broker: broker, Addr: c.addr(broker), Err: err}
						continue
					}
					got[a.Group] = a.Value
					if gr.Answered != nil {
						gr.Answered(a.Group, broker)
					}
				}
				for _, g := range bgroups {
					if !seen[g] {
						failed[g] = &GroupError{API: gr.API, Kind: gr.Keys.kind(), Group: g, Broker: broker, Addr: c.addr(broker), Err: errors.New("the coordinator's response did not mention this " + gr.Keys.kind())}
					}
				}
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return got, failed, err
		}
		pending = pending[:0]
		for g, ge := range failed {
			// A coordinator that cannot be reached is tried again only
			// within 0.7 s: the longer pauses are for one that is
			// loading or moving, and a dead or hung broker would make
			// every attempt wait out its timeout.
			var be *BrokerError
			if retriable(ge.Err) && (attempt < 3 || !errors.As(ge.Err, &be)) {
				pending = append(pending, g)
			}
		}
		slices.Sort(pending)
	}
	if len(failed) == 0 {
		failed = nil
	}
	return got, failed, nil
}

// BrokerAnswer is one broker's response to an every-broker request.
type BrokerAnswer struct {
	Broker Broker
	Resp   kmsg.Response
}

// EveryBroker sends the request to every broker in the cluster's metadata,
// concurrently, for requests whose answer is per broker (ListGroups). A
// broker that cannot be asked is returned as an error, so the caller can say
// the union is partial and name it. A broker whose answer again reports as
// passing (e.g. COORDINATOR_LOAD_IN_PROGRESS while a restarted broker loads
// its groups) is asked again after short growing pauses, a few times; its
// last answer is returned.
func (c *Cluster) EveryBroker(ctx context.Context, api string, build func() kmsg.Request, again func(kmsg.Response) bool) ([]BrokerAnswer, []*BrokerError, error) {
	m, err := c.Metadata(ctx, []string{})
	if err != nil {
		return nil, nil, err
	}
	answers := make([]BrokerAnswer, 0, len(m.Brokers))
	var failed []*BrokerError
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, b := range m.Brokers {
		wg.Go(func() {
			resp, err := c.send(ctx, api, b.ID, nil, build())
			for pause := everyBrokerPause; err == nil && again != nil && again(resp) && pause <= 8*everyBrokerPause; pause *= 2 {
				if !sleep(ctx, pause) {
					break
				}
				resp, err = c.send(ctx, api, b.ID, nil, build())
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				var be *BrokerError
				if !errors.As(err, &be) {
					be = &BrokerError{API: api, ID: b.ID, Addr: b.Addr(), Err: err}
				}
				failed = append(failed, be)
				return
			}
			answers = append(answers, BrokerAnswer{Broker: b, Resp: resp})
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(answers, func(a, b BrokerAnswer) int { return int(a.Broker.ID) - int(b.Broker.ID) })
	slices.SortFunc(failed, func(a, b *BrokerError) int { return int(a.ID) - int(b.ID) })
	return answers, failed, nil
}

// sleep pauses for d, or less if ctx ends first; it reports whether the
// pause ran its course.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// everyBrokerPause is the first pause before a broker whose answer is
// passing is asked again (then 2x, 4x, 8x: 1.5 s in all).
const everyBrokerPause = 100 * time.Millisecond

// Controller sends an admin request where it is accepted: Metadata's
// controller id first (kfake and ZooKeeper-era clusters require it; KRaft
// forwards from any broker, KIP-590). If that broker cannot be reached or
// answers NOT_CONTROLLER (notController reports it), metadata is refreshed and
// the request goes to the new controller id, then to the other brokers.
// Admin requests here are idempotent in effect (creating an existing topic
// answers TOPIC_ALREADY_EXISTS), so trying again is safe.
func (c *Cluster) Controller(ctx context.Context, api string, items []string, req kmsg.Request, notController func(kmsg.Response) bool) (kmsg.Response, int32, error) {
	m, err := c.Metadata(ctx, []string{})
	if err != nil {
		return nil, -1, err
	}
	tried := map[int32]bool{}
	var errs []error
	try := func(id int32) (kmsg.Response, bool) {
		if id < 0 || tried[id] {
			return nil, false
		}
		tried[id] = true
		resp, err := c.send(ctx, api, id, items, req)
		if err != nil {
			errs = append(errs, err)
			return nil, false
		}
		if notController != nil && notController(resp) {
			errs = append(errs, &BrokerError{API: api, ID: id, Addr: m.Addr(id), Err: kerr.NotController})
			return nil, false
		}
		return resp, true
	}
	if resp, ok := try(m.ControllerID); ok {
		return resp, m.ControllerID, nil
	}
	if ctx.Err() == nil {
		if m2, err := c.Metadata(ctx, []string{}); err == nil {
			m = m2
			if resp, ok := try(m.ControllerID); ok {
				return resp, m.ControllerID, nil
			}
		}
	}
	for _, b := range m.Brokers {
		if ctx.Err() != nil {
			break
		}
		if resp, ok := try(b.ID); ok {
			return resp, b.ID, nil
		}
	}
	return nil, -1, errors.Join(errs...)
}
