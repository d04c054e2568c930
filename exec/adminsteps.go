package exec

import (
	"fmt"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/result"
)

// An administration statement's request steps, as EXPLAIN prints them.
// Execution does not read these values: where a step's partitions or
// broker are a decision, they come from the function execution decides
// them by (routeDeleteRecords, kafka.ConfigResource.OwnBroker); the order
// and conditions of the requests are written next to the functions that
// send them (logRange, groupStatus, deleteGroup), and
// TestExplainMatrixListsWhatIsSent checks on kfake's 3 brokers that what
// is sent is what EXPLAIN lists.

// stepRoute is the routing rule of a step.
type stepRoute int

const (
	routeAny         stepRoute = iota // any broker
	routeLeaders                      // each partition's leader, one request per leader broker
	routeBroker                       // one named broker (its own configs)
	routeCoordinator                  // the group's coordinator, a known broker
)

// adminStep is one request step.
type adminStep struct {
	api    string
	route  stepRoute
	parts  []kafka.TopicPartition // routeLeaders: the partitions asked
	broker int32                  // routeBroker, routeCoordinator
	label  string                 // what is asked (ListOffsets: which offset), or the items of routeAny
	// cond, when set, is the condition the step is sent on ("only if
	// ..."); the step may not be sent.
	cond string
}

// explainSteps prints steps, one EXPLAIN step each, in order.
func (p *planner) explainSteps(m *kafka.Metadata, steps []adminStep) {
	for _, st := range steps {
		suffix := ""
		if st.cond != "" {
			suffix = " (" + st.cond + ")"
		}
		switch st.route {
		case routeAny:
			p.any(st.api, st.label+suffix)
		case routeBroker, routeCoordinator:
			p.perBroker(st.api, m, map[int32][]string{st.broker: {st.label + suffix}})
		case routeLeaders:
			p.leadersCarrying(st.api, st.label, suffix, m, st.parts)
		}
	}
}

// leadersCarrying is one step to each partition's leader, each row
// naming what is asked (label: the partitions) and its condition.
func (p *planner) leadersCarrying(api, label, suffix string, m *kafka.Metadata, parts []kafka.TopicPartition) {
	plan, failed := kafka.PlanLeaders(api, m, parts)
	byBroker := map[int32][]string{}
	for id, tps := range plan {
		items := tpList(tps)
		if label != "" {
			items = label + ": " + items
		}
		byBroker[id] = []string{items + suffix}
	}
	p.perBroker(api, m, byBroker)
	for _, pe := range kafka.SortedPartitionErrors(failed) {
		p.rows = append(p.rows, result.Row{p.step, api, nil, "no leader", fmt.Sprintf("%s/%d", pe.Topic, pe.Partition)})
	}
}
