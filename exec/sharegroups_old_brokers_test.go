package exec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/kql-dev/kql/lang"
)

// DESCRIBE GROUP of a missing group, RESET GROUP of a new one and DELETE
// GROUP ask whether the name is a share group. A cluster before Kafka 4.0
// has no ShareGroupDescribe: the question must cost one look, not the
// retries meant for a coordinator that moved (four FindCoordinators and
// their pauses on every such statement).
func TestShareGroupChecksOnBrokersWithoutShareGroups(t *testing.T) {
	f := newFakeTB(t, kfake.MaxVersions(kversion.V3_9_0()))
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 2)

	f.trace.reset()
	start := time.Now()
	_, _, err := run(t, f.sess, &lang.DescribeGroup{Group: "nope"})
	require.ErrorContains(t, err, `no consumer group named "nope"`)
	require.LessOrEqual(t, total(f.trace.count("ShareGroupDescribe")), 1, "ShareGroupDescribe tried once")
	require.Less(t, time.Since(start), 250*time.Millisecond, "no retry pauses")

	_, err = f.adm.CommitOffsets(ctxT(t), "old", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 1}))
	require.NoError(t, err)
	f.trace.reset()
	start = time.Now()
	rows, _ := mustRun(t, f.sess, &lang.DeleteGroup{Group: "old"})
	require.Equal(t, "deleted", rows[0][1])
	require.LessOrEqual(t, total(f.trace.count("ShareGroupDescribe")), 1, "ShareGroupDescribe tried once")
	require.Less(t, time.Since(start), 250*time.Millisecond, "no retry pauses")
}

func total(byBroker map[int32]int) int {
	n := 0
	for _, c := range byBroker {
		n += c
	}
	return n
}
