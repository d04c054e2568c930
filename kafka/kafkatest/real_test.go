package kafkatest_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// TestRealBrokerControls exercises what the reliability tests will lean on:
// killing and cleanly stopping a broker takes it out of Metadata, and
// restarting it brings it back with its data and its leaderships.
func TestRealBrokerControls(t *testing.T) {
	r := kafkatest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cl := kafkatest.Client(t, r, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)

	topic := kafkatest.TopicName(t)
	if resp, err := adm.CreateTopic(ctx, 3, 3, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("creating %s: %v %v", topic, err, resp.Err)
	}
	t.Cleanup(func() { adm.DeleteTopics(context.Background(), topic) })
	var recs []*kgo.Record
	for p := range int32(3) {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")})
	}
	produceEventually(ctx, t, cl, recs)

	if err := r.StopBroker(99, true); err == nil || !strings.Contains(err.Error(), "no broker 99") {
		t.Errorf("StopBroker(99) = %v, want an error naming the unknown broker", err)
	}

	for _, tc := range []struct {
		name string
		id   int32
		kill bool
	}{{"kill", 2, true}, {"clean stop", 3, false}} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			if err := r.StopBroker(tc.id, tc.kill); err != nil {
				t.Fatalf("StopBroker(%d, kill=%v): %v", tc.id, tc.kill, err)
			}
			t.Logf("broker %d stopped (kill=%v) in %s", tc.id, tc.kill, time.Since(start).Round(time.Millisecond))
			if r.Running(tc.id) {
				t.Errorf("Running(%d) = true after StopBroker", tc.id)
			}
			if err := r.StopBroker(tc.id, tc.kill); err == nil {
				t.Errorf("StopBroker(%d) on a stopped broker succeeded, want an error", tc.id)
			}
			// A killed broker leaves Metadata when the controller misses
			// its heartbeats (broker.session.timeout.ms, 9 s); a clean one
			// at once.
			waitFor(ctx, t, 30*time.Second, func() (bool, string) {
				ids := brokerIDs(ctx, cl)
				return !slices.Contains(ids, tc.id) && len(ids) == 2, fmt.Sprintf("Metadata lists brokers %v", ids)
			})
			t.Logf("broker %d left Metadata %s after the stop began", tc.id, time.Since(start).Round(time.Millisecond))

			start = time.Now()
			if err := r.StartBroker(tc.id); err != nil {
				t.Fatalf("StartBroker(%d): %v", tc.id, err)
			}
			t.Logf("broker %d back and cluster healthy in %s", tc.id, time.Since(start).Round(time.Millisecond))
			if !r.Running(tc.id) {
				t.Errorf("Running(%d) = false after StartBroker", tc.id)
			}
			if err := r.StartBroker(tc.id); err == nil {
				t.Errorf("StartBroker(%d) on a running broker succeeded, want an error", tc.id)
			}
			if ids := brokerIDs(ctx, cl); !slices.Equal(ids, []int32{1, 2, 3}) {
				t.Errorf("after StartBroker, Metadata lists brokers %v, want [1 2 3]", ids)
			}
			md, err := topicMetadata(ctx, cl, topic)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range md.Partitions {
				if p.Leader != p.Replicas[0] || len(p.ISR) != 3 {
					t.Errorf("after StartBroker, %s/%d has leader %d ISR %v, want its preferred leader %d and all 3 in sync",
						topic, p.Partition, p.Leader, p.ISR, p.Replicas[0])
				}
			}
			ends, err := adm.ListEndOffsets(ctx, topic)
			if err != nil {
				t.Fatal(err)
			}
			ends.Each(func(o kadm.ListedOffset) {
				if o.Err != nil || o.Offset != 1 {
					t.Errorf("after the restart, %s/%d ends at %d (%v), want 1: the record written before must survive", topic, o.Partition, o.Offset, o.Err)
				}
			})
		})
	}
}

// TestStartRealReportsTheFailedNode starts a cluster whose brokers die at
// start-up and checks the error says which node died and why, from its log,
// and that nothing is left behind.
func TestStartRealReportsTheFailedNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	r, err := kafkatest.StartReal(ctx, kafkatest.RealConfig{
		Props: map[string]string{"metric.reporters": "no.such.Reporter"},
	})
	if err == nil {
		r.Close()
		t.Fatal("StartReal with a broker that cannot start succeeded")
	}
	t.Logf("StartReal failed after %s as it should:\n%s", time.Since(start).Round(time.Millisecond), err)
	msg := err.Error()
	for _, want := range []string{"exited", "its log ends", "no.such.Reporter"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q", want)
		}
	}
	if !regexp.MustCompile(`Kafka broker [123] \(pid \d+, 127\.0\.0\.1:\d+\) exited`).MatchString(msg) {
		t.Errorf("the error does not name the broker, its pid and address")
	}
	dir := regexp.MustCompile(`\[(/[^\]]*kql-kafka-[^/\]]+)/node-\d/`).FindStringSubmatch(msg)
	if dir == nil {
		t.Fatal("the error does not give the path of the node's log")
	}
	if _, err := os.Stat(dir[1]); !os.IsNotExist(err) {
		t.Errorf("the failed cluster's directory %s is still there (stat: %v)", dir[1], err)
	}
}

func produceEventually(ctx context.Context, t *testing.T, cl *kgo.Client, recs []*kgo.Record) {
	t.Helper()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing: %v", err)
	}
}

// brokerIDs asks Metadata which brokers are live, uncached (kadm's
// ListBrokers serves kgo's cache for up to MetadataMinAge, 5s).
func brokerIDs(ctx context.Context, cl *kgo.Client) []int32 {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil
	}
	var ids []int32
	for _, b := range resp.Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids
}

// waitFor polls cond until it holds, failing the test with cond's last
// description after d.
func waitFor(ctx context.Context, t *testing.T, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, what := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("still not so after %s: %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
