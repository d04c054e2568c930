package exec

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/result"
)

// TestExplainDeleteGroupWithMembers: DELETE GROUP of a group with members
// is refused by Kafka (NON_EMPTY_GROUP), and the statement then asks the
// group's status at its coordinator to name the members; EXPLAIN lists
// that DescribeGroups as a step conditional on the refusal, at the broker
// it is sent to, after the DeleteGroups.
func TestExplainDeleteGroupWithMembers(t *testing.T) {
	f := newFake(t)
	f.spread(t, "orders", 3)
	f.produce(t, "orders", 3, 2)
	member, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.ConsumerGroup("busy"), kgo.ConsumeTopics("orders"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	t.Cleanup(member.Close)
	// Joined once it fetches: the group has a member.
	require.NotEmpty(t, member.PollFetches(ctxT(t)).Records())

	plan, _ := mustRun(t, f.sess, parse(t, "EXPLAIN DELETE GROUP busy"))
	var apis []string
	var status result.Row
	for _, r := range plan {
		apis = append(apis, r[1].(string))
		if r[1] == "DescribeGroups" {
			status = r
		}
	}
	require.NotNil(t, status, "%s", dumpPlan(plan))
	require.True(t, conditional(status[4].(string)), "conditional: %s", status[4])
	require.Contains(t, status[4], "not empty")
	require.Greater(t, slices.Index(apis, "DescribeGroups"), slices.Index(apis, "DeleteGroups"))

	f.trace.reset()
	_, err = f.sess.Execute(ctxT(t), parse(t, "DELETE GROUP busy"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "active member")
	var sent []string
	f.trace.mu.Lock()
	for _, e := range f.trace.events {
		sent = append(sent, e.API)
		if e.API == "DescribeGroups" {
			require.Equal(t, status[2], int64(e.Broker), "DescribeGroups at the coordinator EXPLAIN names")
		}
	}
	f.trace.mu.Unlock()
	require.Contains(t, sent, "DescribeGroups", strings.Join(sent, " "))
	require.Greater(t, slices.Index(sent, "DescribeGroups"), slices.Index(sent, "DeleteGroups"))
}
