package kafka

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupsOnEveryCoordinator commits an offset for groups until every broker
// coordinates at least one, and returns them.
func groupsOnEveryCoordinator(t *testing.T, f *tracedFake) []string {
	t.Helper()
	f.topic(t, "t", 3)
	var groups []string
	seen := map[int32]bool{}
	for i := 0; len(seen) < 3; i++ {
		require.Less(t, i, 100, "kfake spreads groups over its brokers")
		g := fmt.Sprint("g", i)
		_, err := f.adm.CommitOffsets(context.Background(), g, kadm.OffsetsFromRecords(kgo.Record{Topic: "t", Partition: 1, Offset: int64(i)}))
		require.NoError(t, err)
		groups = append(groups, g)
		seen[f.CoordinatorFor(g)] = true
	}
	return groups
}

// DescribeGroups and FetchOffsets go to each group's coordinator, one
// request per coordinator carrying all its groups.
func TestGroupRequestsGoToEachCoordinator(t *testing.T) {
	f := newTracedFake(t)
	groups := groupsOnEveryCoordinator(t, f)
	ctx := context.Background()
	for _, api := range []string{"DescribeGroups", "OffsetFetch"} {
		f.forget()
		switch api {
		case "DescribeGroups":
			got, failed, err := f.cl.DescribeGroups(ctx, groups)
			require.NoError(t, err)
			require.Empty(t, failed)
			require.Len(t, got, len(groups))
		case "OffsetFetch":
			got, failed, err := f.cl.FetchOffsets(ctx, groups)
			require.NoError(t, err)
			require.Empty(t, failed)
			m, err := f.cl.Metadata(ctx, nil)
			require.NoError(t, err)
			for i, g := range groups {
				require.Len(t, got[g].Offsets, 1, g)
				c := got[g].Offsets[0]
				require.Equal(t, "t", m.TopicName(c.Topic, c.TopicID), "by name, or (v10+) by an id Metadata knows")
				require.Equal(t, int32(1), c.Partition)
				require.Equal(t, int64(i+1), c.Offset, "the offset committed: after record %d", i)
				require.Empty(t, got[g].Failed)
			}
		}
		evs := f.sent(api)
		require.Len(t, evs, 3, "%s: one request per coordinator: %v", api, evs)
		for _, e := range evs {
			for _, g := range e.Items {
				require.Equal(t, f.CoordinatorFor(g), e.Broker, "%s of %s", api, g)
			}
		}
		var asked []string
		for _, e := range evs {
			asked = append(asked, e.Items...)
		}
		slices.Sort(asked)
		want := slices.Clone(groups)
		slices.Sort(want)
		require.Equal(t, want, asked, api)
	}
}

// A failed partition of an OffsetFetch v10+ answer, which names its topic
// by id only, is named by the topic's name even when the newest metadata
// asked for no topics (as SHOW GROUPS' ListGroups leaves it).
func TestFetchOffsetsNamesTheTopicOfAFailedPartition(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 2)
	ctx := context.Background()
	m, err := f.cl.Metadata(ctx, nil)
	require.NoError(t, err)
	id := m.Topics["t"].ID
	_, err = f.cl.Metadata(ctx, []string{}) // the newest metadata knows no topic
	require.NoError(t, err)
	f.ControlKey(int16(kmsg.OffsetFetch), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.OffsetFetchRequest)
		return kafkatest.OffsetFetchAnswer(req, func(string) []kmsg.OffsetFetchResponseGroupTopic {
			return []kmsg.OffsetFetchResponseGroupTopic{ // by id only, as v10+ answers
				kafkatest.OffsetFetchTopic("", id, kafkatest.Commit{Partition: 1, Offset: -1, Err: kerr.UnstableOffsetCommit.Code})}
		}), nil, true
	})
	got, failed, err := f.cl.FetchOffsets(ctx, []string{"g"})
	require.NoError(t, err)
	require.Empty(t, failed)
	require.Len(t, got["g"].Failed, 1)
	require.Equal(t, "t", got["g"].Failed[0].Topic)
	require.ErrorContains(t, got["g"].Failed[0], "partition t/1")
}

// A stable fetch answers a group its coordinator does not know with no
// offsets, as Kafka does, even where the broker (kfake) answers it
// GROUP_ID_NOT_FOUND; a known group's commits come with it, each from its
// own coordinator.
func TestFetchStableOffsetsOfAnUnknownGroupIsEmpty(t *testing.T) {
	f := newTracedFake(t)
	groups := groupsOnEveryCoordinator(t, f)
	f.forget()
	all := append([]string{"never-committed"}, groups...)
	got, failed, err := f.cl.FetchStableOffsets(context.Background(), all)
	require.NoError(t, err)
	require.Empty(t, failed)
	require.Contains(t, got, "never-committed")
	require.Empty(t, got["never-committed"].Offsets)
	require.Empty(t, got["never-committed"].Failed)
	for _, g := range groups {
		require.Len(t, got[g].Offsets, 1, g)
	}
}
