package exec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// The dry runs of ELECT LEADERS say what the controller would do: a
// preferred election elects the first replica only if it is alive and in
// sync, an unclean one needs some replica alive. A replica on a broker the
// metadata does not list (down, fenced) can be neither; KRaft may still
// list it in the ISR (the last replica standing, or an ELR member).
func TestElectDryRunNeedsTheReplicaAlive(t *testing.T) {
	m := &kafka.Metadata{
		Brokers: []kafka.Broker{{ID: 0}, {ID: 1}},
		Topics: map[string]*kafka.Topic{"t": {Name: "t", Partitions: []kafka.Partition{
			{ID: 0, Leader: 0, Replicas: []int32{3, 0, 1}, ISR: []int32{3, 0, 1}}, // preferred 3 is down
			{ID: 1, Leader: -1, Replicas: []int32{3, 4}, ISR: []int32{3}},         // every replica down
			{ID: 2, Leader: 1, Replicas: []int32{0, 1}, ISR: []int32{0, 1}},       // preferred 0 alive, in sync
		}}},
	}
	parts := []kafka.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}, {Topic: "t", Partition: 2}}
	topic := "t"

	rows := electDryRun(m, parts, &lang.ElectLeaders{Topic: &topic}).Rows
	require.Len(t, rows, 3)
	require.Contains(t, rows[0][4], "would fail: the preferred replica 3 is not alive", "t/0")
	require.Contains(t, rows[1][4], "would fail: the preferred replica 3 is not alive", "t/1")
	require.Equal(t, "dry run: add EXECUTE to elect the preferred replica", rows[2][4], "t/2")

	rows = electDryRun(m, parts, &lang.ElectLeaders{Topic: &topic, Unclean: true}).Rows
	require.Len(t, rows, 1, "only the partition without a leader")
	require.Contains(t, rows[0][4], "would fail: no replica of t/1 is alive (brokers 3, 4 are down or fenced)")
}

// TestMoveToAFencedBrokerSaysFenced: a broker the controller fenced is
// registered, not unknown; the error says it is down, not that there is
// no such broker.
func TestMoveToAFencedBrokerSaysFenced(t *testing.T) {
	f := newFake(t)
	f.spread(t, "moves", 3)
	f.ControlKey(int16(kmsg.DescribeCluster), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.DescribeClusterRequest)
		resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port, b.IsFenced = 7, "127.0.0.1", 1, true
		resp.Brokers = append(resp.Brokers, b)
		return resp, nil, true
	})
	_, _, err := run(t, f.sess, parse(t, "ALTER TOPIC moves PARTITION 0 REPLICAS (1, 7)"))
	require.ErrorContains(t, err, "cannot move moves/0 to (1, 7): broker 7 (127.0.0.1:1) is registered but fenced by the controller")
	require.ErrorContains(t, err, "start it, or name a live broker")
	_, _, err = run(t, f.sess, parse(t, "ALTER TOPIC moves PARTITION 0 REPLICAS (1, 5)"))
	require.ErrorContains(t, err, "no broker with id 5: the cluster lists brokers 0, 1, 2", "a broker neither listed nor fenced is unknown")
}
