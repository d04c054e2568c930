package exec

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

// staleCoordinator makes kfake answer as a broker that has just become
// the group's coordinator does on real Kafka: DescribeGroups and a plain
// OffsetFetch read its state as of a high watermark that has not caught up
// with the group's commits yet (the group looks dead, with no offsets),
// while an OffsetFetch with require_stable reads the newest state. It
// counts the stable fetches it let through; caughtUp ends the staleness.
func staleCoordinator(f *fake) (stable *int, caughtUp func()) {
	stable = new(int)
	var done atomic.Bool
	f.ControlKey(int16(kmsg.DescribeGroups), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		if done.Load() {
			return nil, nil, false
		}
		req := kr.(*kmsg.DescribeGroupsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		resp.Version = req.Version
		for _, g := range req.Groups {
			d := kmsg.NewDescribeGroupsResponseGroup()
			d.Group, d.State = g, "Dead"
			if req.Version >= 6 {
				d.ErrorCode = kerr.GroupIDNotFound.Code
			}
			resp.Groups = append(resp.Groups, d)
		}
		return resp, nil, true
	})
	f.ControlKey(int16(kmsg.OffsetFetch), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.OffsetFetchRequest)
		if done.Load() {
			return nil, nil, false
		}
		if req.RequireStable {
			*stable++
			return nil, nil, false // kfake's own, up-to-date answer
		}
		return kafkatest.OffsetFetchAnswer(req, nil), nil, true // no commits
	})
	return stable, func() { done.Store(true) }
}

// RESET GROUP right after the group's coordinator moved: the new
// coordinator describes the group as dead and, asked plainly, gives no
// offsets, although the group committed on three partitions. The reset
// reads the commits with require_stable, so it resets the three partitions
// instead of saying there is no such group.
func TestResetGroupRightAfterTheCoordinatorMovedSeesTheGroupsCommits(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	f.produce(t, "t", 3, 5)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 0, Offset: 0},
		kgo.Record{Topic: "t", Partition: 1, Offset: 1}, kgo.Record{Topic: "t", Partition: 2, Offset: 2}))
	require.NoError(t, err)
	stable, caughtUp := staleCoordinator(f)

	st := &lang.ResetGroup{Group: "g", To: lang.ResetTarget{Kind: lang.ResetLatest}, Execute: true}
	done, res := mustRun(t, f.sess, st)
	require.Len(t, done, 3, "every partition the group committed")
	for i, r := range done {
		require.Equal(t, int64(i+1), r[2], "current offset of t/%d, as committed (a record's offset + 1)", i)
		require.Equal(t, int64(5), r[3], "new offset of t/%d", i)
	}
	require.Contains(t, notes(res), "executed: committed new offsets for 3 partitions")
	require.NotZero(t, *stable, "the commits were read with require_stable")
	caughtUp()
	got, err := f.adm.FetchOffsets(ctxT(t), "g")
	require.NoError(t, err)
	for p := int32(0); p < 3; p++ {
		o, ok := got.Lookup("t", p)
		require.True(t, ok)
		require.Equal(t, int64(5), o.At, "t/%d committed at the end", p)
	}
}
