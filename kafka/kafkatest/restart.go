package kafkatest

import (
	"context"
	"fmt"
	"time"
)

// StartBrokerLeavingLeaders restarts a stopped broker like StartBroker and
// waits until every broker lists it and every partition is fully in sync
// again, but leaves leadership where the controller put it while the broker
// was away: the state a preferred leader election starts from. (StartBroker
// elects the preferred leaders itself; on a cluster with Kafka's own
// auto.leader.rebalance.enable the controller does too, within minutes.)
func (r *Real) StartBrokerLeavingLeaders(id int32) error {
	n, err := r.node(id)
	if err != nil {
		return err
	}
	n.mu.Lock()
	running := n.runningLocked()
	n.mu.Unlock()
	if running {
		return fmt.Errorf("broker %d is already running", id)
	}
	if err := r.spawn(n); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.waitBrokers(ctx); err != nil {
		return fmt.Errorf("restarting broker %d: %w", id, err)
	}
	if err := r.WaitHealthy(ctx); err != nil {
		return fmt.Errorf("restarting broker %d: %w", id, err)
	}
	return nil
}
