package kafkatest_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

const proofPartitions = 6

// TestMultiBrokerProof proves the test bed is a real multi-broker cluster on
// which a wrong route fails: it is what the seed measured on Kafka 4.3.1 and
// what a single-broker test bed can never show.
//
//   - One ListOffsets carrying all six partitions of a 6-partition RF-3 topic,
//     sent to each broker in turn, is answered with offsets only for the
//     partitions that broker leads and NOT_LEADER_OR_FOLLOWER (6) for the
//     others: nothing is forwarded.
//   - ListGroups sent to each broker returns only the groups that broker
//     coordinates: six groups, two per broker, none returned by all.
func TestMultiBrokerProof(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()

		brokers := b.Brokers()
		if len(brokers) != 3 {
			t.Fatalf("%s has %d brokers, want 3: %v", b.Name(), len(brokers), brokers)
		}
		cl := kafkatest.Client(t, b, kgo.RecordPartitioner(kgo.ManualPartitioner()))
		adm := kadm.NewClient(cl)

		topic := kafkatest.TopicName(t)
		createSpreadTopic(ctx, t, b, cl, topic, brokers)
		t.Cleanup(func() { adm.DeleteTopics(context.Background(), topic) })

		// A different number of records per partition, so an offset
		// answered for the wrong partition cannot pass.
		want := map[int32]int64{}
		var recs []*kgo.Record
		for p := range int32(proofPartitions) {
			want[p] = int64(p) + 2
			for i := range want[p] {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "p%d-r%d", p, i)})
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatalf("producing to %s: %v", topic, err)
		}

		leaders := leadersOf(ctx, t, cl, topic)
		led := map[int32][]int32{} // broker -> partitions it leads
		for p, l := range leaders {
			led[l] = append(led[l], p)
		}
		for _, br := range brokers {
			if len(led[br.ID]) != 2 {
				t.Fatalf("broker %d leads partitions %v of %s, want exactly 2 (leaders: %v)", br.ID, led[br.ID], topic, leaders)
			}
		}

		t.Run("ListOffsets", func(t *testing.T) {
			for _, br := range brokers {
				got := listOffsetsOn(ctx, t, cl, br.ID, topic)
				for p := range int32(proofPartitions) {
					a, ok := got[p]
					switch {
					case !ok:
						t.Errorf("broker %d: no answer for partition %d", br.ID, p)
					case leaders[p] == br.ID && (a.code != 0 || a.offset != want[p]):
						t.Errorf("broker %d leads partition %d: got error %d offset %d, want error 0 offset %d", br.ID, p, a.code, a.offset, want[p])
					case leaders[p] != br.ID && a.code != kerr.NotLeaderForPartition.Code:
						t.Errorf("broker %d does not lead partition %d (broker %d does): got error %d offset %d, want NOT_LEADER_OR_FOLLOWER (6)",
							br.ID, p, leaders[p], a.code, a.offset)
					}
				}
				t.Logf("ListOffsets to broker %d: %s", br.ID, describeOffsets(got))
			}
		})

		t.Run("ListGroups", func(t *testing.T) {
			prefix := kafkatest.GroupName(t)
			coord := pickGroups(ctx, t, adm, prefix, brokers, 2) // group -> coordinator
			for g := range coord {
				offs := kadm.Offsets{}
				offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 1, LeaderEpoch: -1})
				resp, err := adm.CommitOffsets(ctx, g, offs)
				if err == nil {
					err = resp.Error()
				}
				if err != nil {
					t.Fatalf("committing an offset for group %s: %v", g, err)
				}
			}
			t.Cleanup(func() { adm.DeleteGroups(context.Background(), slices.Collect(maps.Keys(coord))...) })

			listedBy := map[string][]int32{} // group -> brokers that listed it
			for _, br := range brokers {
				var mine []string
				for _, g := range listGroupsOn(ctx, t, cl, br.ID) {
					if len(g) > len(prefix) && g[:len(prefix)] == prefix {
						mine = append(mine, g)
						listedBy[g] = append(listedBy[g], br.ID)
					}
				}
				slices.Sort(mine)
				var want []string
				for g, c := range coord {
					if c == br.ID {
						want = append(want, g)
					}
				}
				slices.Sort(want)
				if !slices.Equal(mine, want) {
					t.Errorf("ListGroups to broker %d returned %v of our groups, want exactly those it coordinates: %v", br.ID, mine, want)
				}
				t.Logf("ListGroups to broker %d: %v", br.ID, mine)
			}
			for g := range coord {
				if len(listedBy[g]) != 1 {
					t.Errorf("group %s (coordinator %d) was listed by brokers %v, want by its coordinator alone", g, coord[g], listedBy[g])
				}
			}
		})
	})
}

// createSpreadTopic creates a 6-partition RF-3 topic whose leaders are spread
// two per broker: on real Kafka by an explicit replica assignment (the first
// replica is the preferred leader), on kfake, which picks leaders at random,
// by moving each partition's leader.
func createSpreadTopic(ctx context.Context, t *testing.T, b kafkatest.Backend, cl *kgo.Client, topic string, brokers []kafkatest.Broker) {
	t.Helper()
	ids := make([]int32, len(brokers))
	for i, br := range brokers {
		ids[i] = br.ID
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions, rt.ReplicationFactor = -1, -1
	for p := range int32(proofPartitions) {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition = p
		for i := range ids {
			ra.Replicas = append(ra.Replicas, ids[(int(p)+i)%len(ids)])
		}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl) // kgo routes it to the controller
	if err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatalf("creating %s: %v", topic, err)
	}
	if f, ok := b.(*kafkatest.Fake); ok {
		for p := range int32(proofPartitions) {
			if err := f.MoveTopicPartition(topic, p, ids[int(p)%len(ids)]); err != nil {
				t.Fatalf("moving the leader of %s/%d: %v", topic, p, err)
			}
		}
	}
	// Wait until Metadata, which every broker learns a moment after the
	// controller, shows every partition led by its first replica.
	deadline := time.Now().Add(30 * time.Second)
	for {
		leaders, err := tryLeadersOf(ctx, cl, topic)
		ok := err == nil && len(leaders) == proofPartitions
		for p, l := range leaders {
			ok = ok && l == ids[int(p)%len(ids)]
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's leaders are %v (%v), want partition p led by %v[p%%3]", topic, leaders, err, ids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leadersOf returns partition -> leader from a fresh Metadata request.
func leadersOf(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) map[int32]int32 {
	t.Helper()
	out, err := tryLeadersOf(ctx, cl, topic)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// topicMetadata asks Metadata for topic, uncached (kadm's Metadata serves
// kgo's cache for up to MetadataMinAge, 5s, which would hide a move).
func topicMetadata(ctx context.Context, cl *kgo.Client, topic string) (kmsg.MetadataResponseTopic, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return kmsg.MetadataResponseTopic{}, fmt.Errorf("metadata for %s: %w", topic, err)
	}
	if len(resp.Topics) != 1 {
		return kmsg.MetadataResponseTopic{}, fmt.Errorf("metadata for %s: %d topics in the answer", topic, len(resp.Topics))
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		return kmsg.MetadataResponseTopic{}, fmt.Errorf("metadata for %s: %w", topic, err)
	}
	return resp.Topics[0], nil
}

// tryLeadersOf returns partition -> leader, uncached.
func tryLeadersOf(ctx context.Context, cl *kgo.Client, topic string) (map[int32]int32, error) {
	md, err := topicMetadata(ctx, cl, topic)
	if err != nil {
		return nil, err
	}
	out := map[int32]int32{}
	for _, p := range md.Partitions {
		if p.ErrorCode == 0 && p.Leader >= 0 {
			out[p.Partition] = p.Leader
		}
	}
	return out, nil
}

type offsetAnswer struct {
	code   int16
	offset int64
}

// listOffsetsOn sends ONE ListOffsets for the latest offset of all six
// partitions to broker id, pinned there (no routing by kgo), and returns the
// answer per partition.
func listOffsetsOn(ctx context.Context, t *testing.T, cl *kgo.Client, id int32, topic string) map[int32]offsetAnswer {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range int32(proofPartitions) {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition = p
		rp.CurrentLeaderEpoch = -1
		rp.Timestamp = -1 // latest
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	kresp, err := cl.Broker(int(id)).Request(ctx, req)
	if err != nil {
		t.Fatalf("ListOffsets to broker %d: %v", id, err)
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	out := map[int32]offsetAnswer{}
	for _, rt := range resp.Topics {
		if rt.Topic != topic {
			t.Fatalf("ListOffsets to broker %d answered for topic %q, asked for %q", id, rt.Topic, topic)
		}
		for _, rp := range rt.Partitions {
			if _, dup := out[rp.Partition]; dup {
				t.Fatalf("ListOffsets to broker %d answered partition %d twice", id, rp.Partition)
			}
			out[rp.Partition] = offsetAnswer{rp.ErrorCode, rp.Offset}
		}
	}
	return out
}

func describeOffsets(m map[int32]offsetAnswer) string {
	var s string
	for _, p := range slices.Sorted(maps.Keys(m)) {
		a := m[p]
		if a.code == 0 {
			s += fmt.Sprintf(" p%d=offset %d", p, a.offset)
		} else {
			s += fmt.Sprintf(" p%d=error %d", p, a.code)
		}
	}
	return s
}

// pickGroups finds group names prefix-N until every broker coordinates
// perBroker of them, and returns group -> coordinator (from FindCoordinator).
func pickGroups(ctx context.Context, t *testing.T, adm *kadm.Client, prefix string, brokers []kafkatest.Broker, perBroker int) map[string]int32 {
	t.Helper()
	out := map[string]int32{}
	count := map[int32]int{}
	next := 0
	for len(out) < perBroker*len(brokers) {
		if next >= 300 {
			t.Fatalf("300 group names gave coordinators %v, want %d on each of %v", count, perBroker, brokers)
		}
		var names []string
		for range 12 {
			names = append(names, fmt.Sprintf("%s-%d", prefix, next))
			next++
		}
		resps := adm.FindGroupCoordinators(ctx, names...)
		for _, name := range names {
			r := resps[name]
			if r.Err != nil {
				t.Fatalf("FindCoordinator for %s: %v", name, r.Err)
			}
			if count[r.NodeID] < perBroker {
				count[r.NodeID]++
				out[name] = r.NodeID
			}
		}
	}
	return out
}

// listGroupsOn sends ListGroups to broker id alone and returns the group ids.
func listGroupsOn(ctx context.Context, t *testing.T, cl *kgo.Client, id int32) []string {
	t.Helper()
	kresp, err := cl.Broker(int(id)).Request(ctx, kmsg.NewPtrListGroupsRequest())
	if err != nil {
		t.Fatalf("ListGroups to broker %d: %v", id, err)
	}
	resp := kresp.(*kmsg.ListGroupsResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("ListGroups to broker %d: %v", id, err)
	}
	var out []string
	for _, g := range resp.Groups {
		out = append(out, g.Group)
	}
	return out
}
