package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// The EXPLAIN-vs-requests matrix: for each statement, on kfake's 3
// brokers, the requests EXPLAIN lists are the requests running it sends, as
// kfake saw them (its request hooks, not kql's own trace): the same APIs,
// to the same brokers, carrying the same partitions or groups.
//
// How an EXPLAIN row matches what was sent:
//   - A row naming a broker (column broker not NULL) of an API that carries
//     partitions or groups (see requestItems) stands for exactly the
//     requests (api, that broker, each item it lists). Of any other API, for
//     (api, that broker) with no items.
//   - A row whose broker is still to be resolved (NULL: "any broker", "each
//     group's coordinator", "each committed partition's leader", ...)
//     stands for that API sent to any broker, with any items, but where the
//     row says "coordinator" each group must have gone to its coordinator,
//     and where it says "leader" each partition to its leader (as kfake
//     says when the request arrives). It must be sent at least once unless
//     its text says the request is conditional ("only if", "if any").
//   - Every request sent must be stood for by some row.
//
// Not compared: the connection's own requests (ApiVersions, the SASL
// handshake, GetTelemetrySubscriptions) and Metadata, which kgo also sends
// by itself whenever its cache ages, so that whether a Metadata reaches the
// wire during a statement is not the statement's doing.

// sentRequest is one (api, broker, item) kfake received; item is a
// partition "topic/3", a group, a transactional id, or "" for a request
// that carries none.
type sentRequest struct {
	api    string
	broker int32
	item   string
}

// wireLog records every request kfake receives, with the partitions or
// groups it carries. Fetch and Produce may name topics by id; those are
// resolved when the log is read.
type wireLog struct {
	mu   sync.Mutex
	reqs []sentRequest
}

func recordWire(f *fake) *wireLog {
	l := &wireLog{}
	for k := int16(0); k <= kmsg.MaxKey; k++ {
		f.ControlKey(k, func(kreq kmsg.Request) (kmsg.Response, error, bool) {
			f.KeepControl()
			api := kmsg.NameForKey(kreq.Key())
			node := f.CurrentNode()
			items := requestItems(kreq)
			l.mu.Lock()
			defer l.mu.Unlock()
			if len(items) == 0 {
				l.reqs = append(l.reqs, sentRequest{api, node, ""})
			}
			for _, it := range items {
				l.reqs = append(l.reqs, sentRequest{api, node, it})
			}
			return nil, nil, false
		})
	}
	return l
}

func (l *wireLog) reset() { l.mu.Lock(); l.reqs = nil; l.mu.Unlock() }

func (l *wireLog) get() []sentRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

func tpItem(topic string, id [16]byte, p int32) string {
	if topic == "" {
		return fmt.Sprintf("id:%x/%d", id, p)
	}
	return fmt.Sprintf("%s/%d", topic, p)
}

// requestItems are the partitions or groups a request carries.
func requestItems(kreq kmsg.Request) []string {
	var out []string
	switch r := kreq.(type) {
	case *kmsg.ListOffsetsRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, tpItem(t.Topic, [16]byte{}, p.Partition))
			}
		}
	case *kmsg.FetchRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, tpItem(t.Topic, t.TopicID, p.Partition))
			}
		}
	case *kmsg.ProduceRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, tpItem(t.Topic, t.TopicID, p.Partition))
			}
		}
	case *kmsg.DeleteRecordsRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, tpItem(t.Topic, [16]byte{}, p.Partition))
			}
		}
	case *kmsg.DescribeProducersRequest:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				out = append(out, tpItem(t.Topic, [16]byte{}, p))
			}
		}
	case *kmsg.DescribeGroupsRequest:
		out = append(out, r.Groups...)
	case *kmsg.ConsumerGroupDescribeRequest:
		out = append(out, r.Groups...)
	case *kmsg.ShareGroupDescribeRequest:
		out = append(out, r.GroupIDs...)
	case *kmsg.DeleteGroupsRequest:
		out = append(out, r.Groups...)
	case *kmsg.OffsetFetchRequest:
		if len(r.Groups) == 0 {
			out = append(out, r.Group)
		}
		for _, g := range r.Groups {
			out = append(out, g.Group)
		}
	case *kmsg.OffsetCommitRequest:
		out = append(out, r.Group)
	case *kmsg.OffsetDeleteRequest:
		out = append(out, r.Group)
	case *kmsg.DescribeShareGroupOffsetsRequest:
		for _, g := range r.Groups {
			out = append(out, g.GroupID)
		}
	case *kmsg.DescribeTransactionsRequest:
		out = append(out, r.TransactionalIDs...)
	case *kmsg.FindCoordinatorRequest:
		if len(r.CoordinatorKeys) == 0 {
			out = append(out, r.CoordinatorKey)
		}
		out = append(out, r.CoordinatorKeys...)
	}
	return out
}

// itemized are the APIs whose EXPLAIN rows list the partitions or groups
// of each request.
var itemized = map[string]bool{
	"ListOffsets": true, "Fetch": true, "Produce": true, "DeleteRecords": true, "DescribeProducers": true,
	"DescribeGroups": true, "ConsumerGroupDescribe": true, "ShareGroupDescribe": true, "DeleteGroups": true,
	"OffsetFetch": true, "OffsetCommit": true, "OffsetDelete": true, "DescribeShareGroupOffsets": true,
	"DescribeTransactions": true,
}

// notCompared are the connection's requests and kgo's own Metadata.
var notCompared = map[string]bool{
	"ApiVersions": true, "SASLHandshake": true, "SASLAuthenticate": true,
	"GetTelemetrySubscriptions": true, "PushTelemetry": true, "Metadata": true,
}

// followBacklog is how many rows each FOLLOW statement of the matrix
// prints before it waits for new records.
var followBacklog = map[string]int{
	"CONSUME orders FROM NEWEST WHERE partition = 1 LIMIT 2 FOLLOW": 2,
	"CONSUME orders FROM NEWEST LIMIT 3 FOLLOW":                     3,
}

// kfakeLacks are the APIs kfake does not serve (kgo does not send them
// there): EXPLAIN is right to list them, for a real cluster.
var kfakeLacks = map[string]bool{"DescribeQuorum": true}

func kafkaAPIs() map[string]string {
	out := map[string]string{}
	for k := int16(0); k <= kmsg.MaxKey; k++ {
		if n := kmsg.NameForKey(k); n != "" {
			out[strings.ToLower(n)] = n // EXPLAIN writes DescribeAcls, kmsg DescribeACLs
		}
	}
	// Kafka's name for key 45, which kmsg calls AlterPartitionAssignments.
	if n := kmsg.NameForKey(int16(kmsg.AlterPartitionAssignments)); n != "" {
		out["alterpartitionreassignments"] = n
	}
	return out
}

// conditional is a row for a request sent only on a condition the
// statement may not meet.
func conditional(text string) bool {
	return strings.Contains(text, "only if") || strings.Contains(text, "if any")
}

// explainItems splits an EXPLAIN row's partitions_or_groups into items.
func explainItems(s string) []string {
	// "g (a share group is refused)", "sizes of its replicas: t/0, t/1"
	if i := strings.LastIndex(s, " ("); i >= 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	if _, rest, ok := strings.Cut(s, ": "); ok {
		s = rest
	}
	var out []string
	for _, it := range strings.Split(s, ", ") {
		if it = strings.TrimSpace(it); it != "" {
			out = append(out, it)
		}
	}
	return out
}

func TestExplainMatrixListsWhatIsSent(t *testing.T) {
	f := newFake(t)
	wire := recordWire(f)
	ownLogDirs(f)
	f.spread(t, "orders", 6)
	f.spread(t, "ordinals", 3)
	f.spread(t, "other", 2)
	f.produce(t, "orders", 6, 4)
	f.produce(t, "ordinals", 3, 2)
	f.produce(t, "other", 2, 3)
	_, err := f.adm.CommitOffsets(ctxT(t), "g", kadm.OffsetsFromRecords(
		kgo.Record{Topic: "orders", Partition: 1, Offset: 1}, kgo.Record{Topic: "orders", Partition: 4, Offset: 2}))
	require.NoError(t, err)

	// A registry topic: its values carry a schema id.
	reg := srfake.New()
	t.Cleanup(reg.Close)
	fx := registerSchemas(t, reg.URL(), "pay")
	f.spread(t, "pay", 3)
	var recs []*kgo.Record
	for p := int32(0); p < 3; p++ {
		v := fx.encode(t, schema.Ref{Subject: fx.avroSubject}, fmt.Sprintf(`{"id":%d,"amount":"1.00","at":1,"status":"PAID"}`, p))
		recs = append(recs, &kgo.Record{Topic: "pay", Partition: p, Key: []byte("k"), Value: v})
	}
	pcl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	require.NoError(t, pcl.ProduceSync(ctxT(t), recs...).FirstErr())
	pcl.Close()
	f.sess.Registry = fx.reg

	topicIDs := map[[16]byte]string{}
	tds, err := f.adm.ListTopics(ctxT(t))
	require.NoError(t, err)
	for name, td := range tds {
		topicIDs[td.ID] = name
	}
	resolve := func(it string) string {
		if !strings.HasPrefix(it, "id:") {
			return it
		}
		for id, name := range topicIDs {
			if p, ok := strings.CutPrefix(it, fmt.Sprintf("id:%x/", id)); ok {
				return name + "/" + p
			}
		}
		return it
	}
	apis := kafkaAPIs()
	importLines := filepath.Join(t.TempDir(), "lines.txt")
	require.NoError(t, os.WriteFile(importLines, []byte("a\nb\nc\n"), 0o600))

	stmts := []string{
		// partitions and pushdown
		"CONSUME orders LIMIT 5",
		"CONSUME orders LIMIT ALL",
		"CONSUME orders PARTITION 2 LIMIT 3",
		"CONSUME orders PARTITION (1, 4) LIMIT ALL",
		"CONSUME orders WHERE partition = 3 LIMIT ALL",
		"CONSUME orders WHERE partition IN (0, 5) LIMIT ALL",
		"CONSUME orders WHERE partition < 2 LIMIT ALL",
		"CONSUME orders WHERE offset >= 2 LIMIT ALL",
		"CONSUME orders WHERE timestamp >= 0 LIMIT ALL",
		"CONSUME orders WHERE timestamp < 4102444800000 LIMIT ALL",
		"CONSUME orders FROM OLDEST LIMIT 3",
		"CONSUME orders FROM 2h AGO LIMIT 3",
		"CONSUME orders FROM OFFSET 1 LIMIT 3",
		"CONSUME orders FROM TIMESTAMP '2020-01-02T03:04:05Z' LIMIT 3",
		"CONSUME orders FROM TAIL (0:3, 4:2) LIMIT 2",
		"CONSUME orders FROM ANCHOR (1:1, 5:0) LIMIT ALL",
		"CONSUME orders WHERE offset < 2 AND timestamp >= 1000 LIMIT ALL",
		"CONSUME orders PARTITION FOR KEY 'k-2-1' WHERE offset >= 1 LIMIT ALL",
		// FROM NEWEST with and without WHERE
		"CONSUME orders FROM NEWEST LIMIT 3",
		"CONSUME orders FROM NEWEST WHERE key = 'k-1-0' LIMIT 2",
		"SELECT key FROM orders FROM NEWEST WHERE key IN ('k-0-0', 'k-3-1') LIMIT 1",
		// aggregates, ORDER BY
		"SELECT count(*) FROM orders",
		"SELECT key, count(*) FROM orders GROUP BY key ORDER BY 2 DESC LIMIT 2",
		"SELECT key FROM orders ORDER BY key DESC LIMIT 2",
		// PARTITION FOR KEY, FOLLOW with a bound, a registry topic
		"CONSUME orders PARTITION FOR KEY 'k-2-1' LIMIT ALL",
		"CONSUME orders FROM NEWEST WHERE partition = 1 LIMIT 2 FOLLOW",
		"CONSUME orders FROM NEWEST LIMIT 3 FOLLOW",
		"SELECT value.id FROM pay LIMIT ALL",
		"SELECT value.id FROM pay PARTITION FOR KEY 'k' LIMIT ALL",
		// metadata statements
		"SHOW TOPICS",
		"SHOW TOPICS LIKE 'ord%'",
		"SHOW BROKERS",
		"SHOW CLUSTER",
		"SHOW PARTITIONS OF orders",
		"SHOW PARTITIONS LIKE 'ord%' WHERE partition < 3",
		"SHOW GROUPS",
		"DESCRIBE GROUP g",
		"DESCRIBE TOPIC orders",
		// admin statements
		"RESET GROUP fresh TOPIC orders TO EARLIEST EXECUTE",
		"RESET GROUP g TOPIC orders TO LATEST",
		"DELETE RECORDS FROM other BEFORE (0:1) EXECUTE",
		// a partition with no record before its offset is sent nothing
		"DELETE RECORDS FROM other BEFORE OFFSET 0 EXECUTE",
		"DELETE RECORDS FROM other BEFORE (0:2, 1:0) EXECUTE",
		"ALTER TOPIC other SET (retention.ms = '86400000')",
		"SHOW CONFIGS FOR TOPIC orders",
		"SHOW CONFIGS FOR BROKER 1",
		"SHOW ACLS",
		"GRANT READ ON TOPIC orders TO 'User:x'",
		"SHOW QUOTAS",
		"ALTER QUOTA FOR USER alice SET (producer_byte_rate = 1024)",
		"SHOW USERS",
		"SHOW TRANSACTIONS",
		"SHOW SHARE GROUPS",
		"SHOW LOG DIRS",
		"SHOW LOG DIRS FOR BROKER 2",
		"SHOW HANGING TRANSACTIONS ON TOPIC orders",
		"SHOW REASSIGNMENTS",
		"SHOW FEATURES",
		"ELECT LEADERS FOR TOPIC orders",
		"ALTER TOPIC ordinals PARTITION 0 REPLICAS (1, 2, 0) EXECUTE",
		"PRODUCE INTO other KEY 'k' VALUE 'v'",
		"CREATE TOPIC fresh_topic PARTITIONS 3",
		"DELETE GROUP g",
		"DROP TOPIC ordinals",
		// moving records: INSERT's dry run reads only; EXECUTE also
		// writes through the transaction coordinator and the leaders
		"INSERT INTO other SELECT * FROM orders LIMIT 3",
		"INSERT INTO other SELECT * FROM orders WHERE partition IN (1, 4) LIMIT ALL EXECUTE",
		// an import: the same writer, after a check of the file
		"PRODUCE INTO other FROM FILE '" + importLines + "' FORMAT lines",
	}
	for _, src := range stmts {
		t.Run(src, func(t *testing.T) {
			plan, _ := mustRun(t, f.sess, parse(t, "EXPLAIN "+src))
			wire.reset()
			if follow, ok := followBacklog[src]; ok {
				// FOLLOW has no end: read its backlog, then cancel.
				ctx, cancel := context.WithCancel(ctxT(t))
				res, err := f.sess.Execute(ctx, parse(t, src))
				require.NoError(t, err)
				for i := 0; i < follow; i++ {
					_, ok := res.Next()
					require.True(t, ok, "backlog row %d: %v", i, res.Err())
				}
				cancel()
				res.Close()
			} else {
				mustRun(t, f.sess, parse(t, src))
			}
			sent := map[sentRequest]bool{}
			for _, r := range wire.get() {
				if !notCompared[r.api] {
					r.item = resolve(r.item)
					sent[r] = true
				}
			}

			exact, maybe := map[sentRequest]bool{}, map[sentRequest]bool{}
			type openRow struct{ where, items string }
			open := map[string][]openRow{}
			for _, r := range plan {
				api, _ := r[1].(string)
				api = apis[strings.ToLower(api)]
				if api == "" || notCompared[api] {
					continue // a registry request, a note, an operator
				}
				if b, ok := r[2].(int64); ok {
					into := exact
					if conditional(r[4].(string)) {
						into = maybe
					}
					if !itemized[api] {
						into[sentRequest{api, int32(b), ""}] = true
						continue
					}
					for _, it := range explainItems(r[4].(string)) {
						into[sentRequest{api, int32(b), it}] = true
					}
					continue
				}
				open[api] = append(open[api], openRow{fmt.Sprint(r[3]), fmt.Sprint(r[4])})
			}

			var missing, extra, misrouted []string
			for r := range exact {
				if !sent[r] && !kfakeLacks[r.api] {
					missing = append(missing, fmt.Sprintf("%s -> %d %s", r.api, r.broker, r.item))
				}
			}
			for api, rows := range open {
				any := false
				for r := range sent {
					any = any || r.api == api
				}
				cond := true
				for _, o := range rows {
					cond = cond && (conditional(o.items) || strings.Contains(o.items, "listed"))
				}
				if !any && !cond && !kfakeLacks[api] {
					missing = append(missing, fmt.Sprintf("%s -> %s (%s)", api, rows[0].where, rows[0].items))
				}
			}
			for r := range sent {
				if exact[r] || maybe[r] {
					continue
				}
				rows, ok := open[r.api]
				if !ok {
					extra = append(extra, fmt.Sprintf("%s -> %d %s", r.api, r.broker, r.item))
					continue
				}
				where := rows[0].where
				switch {
				case strings.Contains(where, "coordinator") && r.item != "":
					if id := f.CoordinatorFor(r.item); id != r.broker {
						misrouted = append(misrouted, fmt.Sprintf("%s -> %d %s (its coordinator is %d)", r.api, r.broker, r.item, id))
					}
				case strings.Contains(where, "leader") && r.item != "":
					topic, p, _ := strings.Cut(r.item, "/")
					var part int32
					fmt.Sscan(p, &part)
					if id := f.LeaderFor(topic, part); id != r.broker {
						misrouted = append(misrouted, fmt.Sprintf("%s -> %d %s (its leader is %d)", r.api, r.broker, r.item, id))
					}
				}
			}
			slices.Sort(missing)
			slices.Sort(extra)
			slices.Sort(misrouted)
			assert.Empty(t, missing, "listed by EXPLAIN, never sent\n%s", dumpPlan(plan))
			assert.Empty(t, extra, "sent, never listed by EXPLAIN\n%s", dumpPlan(plan))
			assert.Empty(t, misrouted, "sent to a broker the rule does not name")
		})
	}
}

func dumpPlan(plan []result.Row) string {
	var b strings.Builder
	for _, r := range plan {
		fmt.Fprintln(&b, r...)
	}
	return b.String()
}
