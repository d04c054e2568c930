package exec

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// The cluster operation statements on real Kafka, each compared with
// Kafka's own tool run on the same cluster.

func toolCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func bootstrapOf(r *kafkatest.Real) string { return strings.Join(r.Bootstrap(), ",") }

// bootstrapWithout leaves a stopped broker out, so a tool does not start
// by waiting on it.
func bootstrapWithout(r *kafkatest.Real, id int32) string {
	var addrs []string
	for _, b := range r.Brokers() {
		if b.ID != id {
			addrs = append(addrs, b.Addr)
		}
	}
	return strings.Join(addrs, ",")
}

// logDirsJSON is LogDirsCommand --describe's answer.
type logDirsJSON struct {
	Brokers []struct {
		Broker  int32 `json:"broker"`
		LogDirs []struct {
			LogDir     string  `json:"logDir"`
			Error      *string `json:"error"`
			Partitions []struct {
				Partition string `json:"partition"`
				Size      int64  `json:"size"`
				IsFuture  bool   `json:"isFuture"`
			} `json:"partitions"`
		} `json:"logDirs"`
	} `json:"brokers"`
}

func TestLogDirsAndSizesEqualLogDirsCommand(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	topic, _ := spreadTopic(t, r, 3)

	out, err := r.RunTool(toolCtx(t), "org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", bootstrapOf(r), "--describe", "--topic-list", topic)
	require.NoError(t, err)
	var tool logDirsJSON
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "{") {
			require.NoError(t, json.Unmarshal([]byte(line), &tool), line)
		}
	}
	require.Len(t, tool.Brokers, 3, "the tool heard from every broker:\n%s", out)
	var toolDirs []result.Row
	sizes := map[string]map[int32]int64{} // topic-p -> broker -> size
	for _, b := range tool.Brokers {
		for _, d := range b.LogDirs {
			require.Nil(t, d.Error)
			toolDirs = append(toolDirs, result.Row{int64(b.Broker), d.LogDir})
			for _, p := range d.Partitions {
				if sizes[p.Partition] == nil {
					sizes[p.Partition] = map[int32]int64{}
				}
				sizes[p.Partition][b.Broker] = p.Size
			}
		}
	}

	rows, _ := mustRun(t, s, parse(t, "SHOW LOG DIRS ORDER BY broker, dir"))
	var kqlDirs []result.Row
	for _, row := range rows {
		kqlDirs = append(kqlDirs, result.Row{row[0], row[1]})
		require.Positive(t, row[2], "total_bytes (DescribeLogDirs v4)")
		require.Positive(t, row[3], "usable_bytes")
		require.Nil(t, row[4], "no error")
	}
	require.Equal(t, toolDirs, kqlDirs, "the same brokers and dirs as kafka-log-dirs.sh")

	rows, _ = mustRun(t, s, parse(t, "SHOW PARTITIONS OF "+lang.QuoteName(topic)))
	require.Len(t, rows, 6)
	var topicTotal, topicLeaders int64
	for _, row := range rows {
		key := fmt.Sprintf("%s-%d", topic, row[1])
		bySize := sizes[key]
		require.Len(t, bySize, 3, "%s: the tool sized three replicas", key)
		var total int64
		for _, n := range bySize {
			total += n
		}
		leader := int32(row[2].(int64))
		require.Positive(t, row[11], key)
		require.Equal(t, bySize[leader], row[11], "%s: size_bytes is the leader replica's, as the tool reports it on broker %d", key, leader)
		require.Equal(t, total, row[12], "%s: replicas_size_bytes is the sum of the tool's replicas", key)
		topicTotal += total
		topicLeaders += bySize[leader]
	}
	rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("SHOW TOPICS LIKE '%s'", topic)))
	require.Len(t, rows, 1)
	require.Equal(t, topicLeaders, rows[0][6], "SHOW TOPICS size_bytes sums the leader replicas")
	require.Equal(t, topicTotal, rows[0][7], "and replicas_size_bytes every replica")
}

// quorumTool parses MetadataQuorumCommand describe --replication: node ->
// [log end offset, lag, last fetch, last caught up] and status.
func quorumTool(t *testing.T, r *kafkatest.Real, bootstrap string) (map[int64][4]int64, map[int64]string) {
	t.Helper()
	out, err := r.RunTool(toolCtx(t), "org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server", bootstrap, "describe", "--replication")
	require.NoError(t, err)
	nums := map[int64][4]int64{}
	status := map[int64]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 7 || f[0] == "NodeId" {
			continue
		}
		id, err := strconv.ParseInt(f[0], 10, 64)
		require.NoError(t, err, sc.Text())
		var v [4]int64
		for i := range v {
			v[i], err = strconv.ParseInt(f[2+i], 10, 64)
			require.NoError(t, err, sc.Text())
		}
		nums[id], status[id] = v, strings.ToLower(f[6])
	}
	require.Len(t, nums, 3, "three voters:\n%s", out)
	return nums, status
}

// TestQuorumLagsAndLogDirsPartialWhileAControllerIsStopped: SHOW QUORUM
// answers as kafka-metadata-quorum.sh; with a follower SIGSTOPped, SHOW
// LOG DIRS is partial naming it and SHOW QUORUM shows it falling behind,
// with the same frozen offset and fetch time the tool reports.
func TestQuorumLagsAndLogDirsPartialWhileAControllerIsStopped(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)

	rows, res := mustRun(t, s, parse(t, "SHOW QUORUM"))
	require.Equal(t, lang.MetaColumns(&lang.ShowQuorum{}), colNames(res))
	_, status := quorumTool(t, r, bootstrapOf(r))
	roles := map[int64]string{}
	var follower int32 = -1
	for _, row := range rows {
		roles[row[0].(int64)] = row[1].(string)
		if row[1] == "follower" && follower < 0 {
			follower = int32(row[0].(int64))
		}
		require.NotNil(t, row[2], "log_end_offset")
		require.IsType(t, time.Time{}, row[4], "last_fetch")
	}
	require.Equal(t, status, roles, "the same voters and roles as kafka-metadata-quorum.sh")
	require.GreaterOrEqual(t, follower, int32(0))

	topic, _ := spreadTopic(t, r, 3) // a replica of every partition on every broker

	require.NoError(t, r.PauseBroker(follower))
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			require.NoError(t, r.ResumeBroker(follower))
		}
	})
	paused := time.Now()

	// SHOW TOPICS is the metadata, complete while a broker is stopped: the
	// sizes it cannot get are NULL with a warning naming the broker (or,
	// once the controller has fenced it, a note on its offline replicas),
	// never a failed statement.
	rows, res, err := run(t, s, parse(t, "SHOW TOPICS LIKE '"+topic+"'"))
	require.NoError(t, err, "SHOW TOPICS answers while broker %d is stopped", follower)
	require.Len(t, rows, 1)
	require.Nil(t, rows[0][7], "replicas_size_bytes NULL: broker %d's replicas cannot be sized", follower)
	said := strings.Join(append(res.Stats().Warnings(), res.Stats().Notices()...), "\n")
	require.True(t, strings.Contains(said, fmt.Sprintf("DescribeLogDirs to broker %d", follower)) || strings.Contains(said, "replica is offline"),
		"the warning names broker %d: %s", follower, said)

	rows, _, err = run(t, s, parse(t, "SHOW LOG DIRS"))
	require.True(t, result.IsPartial(err), "a stopped broker makes SHOW LOG DIRS partial: %v", err)
	require.ErrorContains(t, err, fmt.Sprintf("DescribeLogDirs to broker %d", follower))
	var stoppedRow result.Row
	for _, row := range rows {
		if row[0] == int64(follower) {
			stoppedRow = row
		}
	}
	require.NotNil(t, stoppedRow, "broker %d keeps a row: %v", follower, rows)
	require.Nil(t, stoppedRow[1])
	require.NotNil(t, stoppedRow[4], "with its error")
	require.Len(t, rows, 3, "and the others answer")

	var lagging result.Row
	require.Eventually(t, func() bool {
		rows, _, err := run(t, s, parse(t, fmt.Sprintf("SHOW QUORUM WHERE node = %d", follower)))
		if err != nil || len(rows) != 1 {
			return false
		}
		lagging = rows[0]
		lag, _ := lagging[3].(int64)
		fetch, _ := lagging[4].(time.Time)
		return lag > 0 && paused.Sub(fetch) > -time.Second && time.Since(fetch) > 3*time.Second
	}, 45*time.Second, 500*time.Millisecond, "the stopped follower %d falls behind: %v", follower, lagging)

	nums, _ := quorumTool(t, r, bootstrapWithout(r, follower))
	frozen := nums[int64(follower)]
	require.Equal(t, frozen[0], lagging[2], "the stopped follower's log end offset, as the tool reports it")
	require.Equal(t, frozen[2], lagging[4].(time.Time).UnixMilli(), "its last fetch, as the tool reports it")
	require.Positive(t, frozen[1], "the tool sees it lagging too")

	// Once the controller fences it, Metadata leaves it out: SHOW LOG DIRS
	// still names it (DescribeCluster), without waiting on it.
	require.Eventually(t, func() bool {
		rows, _, err := run(t, s, parse(t, fmt.Sprintf("SHOW LOG DIRS WHERE broker = %d", follower)))
		return result.IsPartial(err) && len(rows) == 1 && strings.Contains(fmt.Sprint(rows[0][4]), "fenced by the controller")
	}, 30*time.Second, time.Second, "the fenced broker %d is a row with its error", follower)

	require.NoError(t, r.ResumeBroker(follower))
	resumed = true
}

func TestShowFeaturesEqualsFeatureCommand(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	out, err := r.RunTool(toolCtx(t), "org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", bootstrapOf(r), "describe")
	require.NoError(t, err)
	line := regexp.MustCompile(`Feature: (\S+)\s+SupportedMinVersion: (\S+)\s+SupportedMaxVersion: (\S+)\s+FinalizedVersionLevel: (\S+)`)
	tool := map[string][3]string{}
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		tool[m[1]] = [3]string{m[4], m[2], m[3]}
	}
	require.Contains(t, tool, "metadata.version", out)

	rows, _ := mustRun(t, s, parse(t, "SHOW FEATURES"))
	kql := map[string][3]string{}
	for _, row := range rows {
		var v [3]string
		for i := range v {
			v[i] = fmt.Sprint(row[1+i])
		}
		kql[row[0].(string)] = v
	}
	require.Equal(t, slices.Sorted(maps.Keys(tool)), slices.Sorted(maps.Keys(kql)), "the same features")
	for name, want := range tool {
		if name == "metadata.version" {
			// The tool names metadata.version levels by release (4.3-IV0);
			// on the wire, and in kql, they are levels.
			require.NotEqual(t, "<nil>", kql[name][0])
			continue
		}
		require.Equal(t, want, kql[name], "%s: finalized, supported min and max as kafka-features.sh describe", name)
	}
}

// TestReassignmentMovesAReplicaWhileThrottled: with replication throttled
// (leader/follower.replication.throttled.rate and the topic's throttled
// replicas) and a few MB in the partitions, the moves are still running
// when asked: SHOW REASSIGNMENTS shows them as ReassignPartitionsCommand
// --verify does; a cancel puts one back; without the throttle the other
// completes and its replica has moved.
func TestReassignmentMovesAReplicaWhileThrottled(t *testing.T) {
	r := kafkatest.Shared(t)
	s, _ := session(t, r)
	ctx := toolCtx(t)
	topic := kafkatest.TopicName(t)
	require.NoError(t, r.CreateTopicAssigned(ctx, topic, [][]int32{{1}, {1}}))

	cl := kafkatest.Client(t, r, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(kgo.NoCompression()))
	var recs []*kgo.Record
	for i := 0; i < 30; i++ {
		for p := int32(0); p < 2; p++ {
			v := make([]byte, 100<<10)
			rand.Read(v)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: v})
		}
	}
	require.NoError(t, cl.ProduceSync(ctx, recs...).FirstErr())

	q := lang.QuoteName(topic)
	stmt := func(src string) []result.Row {
		t.Helper()
		rows, _ := mustRun(t, s, parse(t, src))
		return rows
	}
	for _, b := range []int{1, 2} {
		stmt(fmt.Sprintf("ALTER BROKER %d SET (leader.replication.throttled.rate = '10240', follower.replication.throttled.rate = '10240')", b))
		t.Cleanup(func() {
			_, _, err := run(t, s, parse(t, fmt.Sprintf("ALTER BROKER %d UNSET (leader.replication.throttled.rate, follower.replication.throttled.rate)", b)))
			require.NoError(t, err)
		})
	}
	stmt("ALTER TOPIC " + q + " SET (leader.replication.throttled.replicas = '0:1,1:1', follower.replication.throttled.replicas = '0:2,1:2')")

	dry := stmt("ALTER TOPIC " + q + " PARTITION 0 REPLICAS (2)")
	require.Equal(t, []result.Row{{topic, int64(0), []int32{1}, []int32{2}, int64(1), int64(2), "dry run: add EXECUTE to start the move"}}, dry)
	rows, _ := mustRun(t, s, parse(t, "SHOW REASSIGNMENTS WHERE topic = '"+topic+"'"))
	require.Empty(t, rows, "a dry run moves nothing")

	stmt("ALTER TOPIC " + q + " PARTITION 0 REPLICAS (2) EXECUTE")
	stmt("ALTER TOPIC " + q + " PARTITION 1 REPLICAS (2) EXECUTE")

	rows = stmt("SHOW REASSIGNMENTS WHERE topic = '" + topic + "' ORDER BY partition")
	require.Equal(t, []result.Row{
		{topic, int64(0), []int32{2, 1}, []int32{2}, []int32{1}},
		{topic, int64(1), []int32{2, 1}, []int32{2}, []int32{1}},
	}, rows, "both moves run: the throttle holds them")

	plan := filepath.Join(t.TempDir(), "reassign.json")
	require.NoError(t, os.WriteFile(plan, []byte(fmt.Sprintf(
		`{"version":1,"partitions":[{"topic":%q,"partition":0,"replicas":[2]},{"topic":%q,"partition":1,"replicas":[2]}]}`, topic, topic)), 0o644))
	verify := func() map[string]string {
		t.Helper()
		out, err := r.RunTool(ctx, "org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--bootstrap-server", bootstrapOf(r),
			"--verify", "--preserve-throttles", "--reassignment-json-file", plan)
		require.NoError(t, err)
		got := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^Reassignment of partition (\S+) is (still in progress|completed)\.$`).FindAllStringSubmatch(out, -1) {
			got[m[1]] = m[2]
		}
		for _, m := range regexp.MustCompile(`(?m)^There is no active reassignment of partition (\S+),`).FindAllStringSubmatch(out, -1) {
			got[m[1]] = "not running"
		}
		return got
	}
	require.Equal(t, map[string]string{topic + "-0": "still in progress", topic + "-1": "still in progress"}, verify(),
		"kafka-reassign-partitions.sh --verify sees the same moves running")

	rows = stmt("CANCEL REASSIGNMENT ON TOPIC " + q + " PARTITION 1")
	require.Equal(t, "dry run: add EXECUTE to cancel; the replicas go back to (1)", rows[0][5])
	rows = stmt("CANCEL REASSIGNMENT ON TOPIC " + q + " PARTITION 1 EXECUTE")
	require.Equal(t, "cancelled: the replicas go back to (1)", rows[0][5])
	rows = stmt("SHOW REASSIGNMENTS WHERE topic = '" + topic + "'")
	require.Len(t, rows, 1)
	require.Equal(t, int64(0), rows[0][1], "only partition 0 still moves")
	require.Equal(t, map[string]string{topic + "-0": "still in progress", topic + "-1": "not running"}, verify())

	// Lift the throttle: the move completes and the replica is on broker 2.
	stmt("ALTER TOPIC " + q + " UNSET (leader.replication.throttled.replicas, follower.replication.throttled.replicas)")
	for _, b := range []int{1, 2} {
		stmt(fmt.Sprintf("ALTER BROKER %d UNSET (leader.replication.throttled.rate, follower.replication.throttled.rate)", b))
	}
	require.Eventually(t, func() bool {
		rows, _, err := run(t, s, parse(t, "SHOW REASSIGNMENTS WHERE topic = '"+topic+"'"))
		return err == nil && len(rows) == 0
	}, 90*time.Second, 500*time.Millisecond, "the move completes once unthrottled")
	require.Eventually(t, func() bool {
		rows, _, err := run(t, s, parse(t, "SHOW PARTITIONS OF "+q+" ORDER BY partition"))
		return err == nil && len(rows) == 2 && slices.Equal(rows[0][3].([]int32), []int32{2}) && rows[0][2] == int64(2) &&
			slices.Equal(rows[1][3].([]int32), []int32{1})
	}, 30*time.Second, 500*time.Millisecond, "partition 0 now lives on broker 2, partition 1 stayed on broker 1")
	require.Equal(t, topic+"-0", func() string {
		for k, v := range verify() {
			if v == "completed" {
				return k
			}
		}
		return ""
	}(), "the tool agrees partition 0's move completed")
}

// TestPreferredElectionAfterRestartPutsLeadersBack runs on a cluster of its
// own with auto.leader.rebalance.enable=false (otherwise the controller
// moves leaders back by itself): after broker 2 restarts, its partitions are
// led elsewhere; ELECT LEADERS lists them, EXECUTE puts them back, and
// kafka-leader-election.sh answers the same for a twin topic.
func TestPreferredElectionAfterRestartPutsLeadersBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := kafkatest.StartReal(ctx, kafkatest.RealConfig{Props: map[string]string{"auto.leader.rebalance.enable": "false"}})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	s, tr := session(t, c)
	assignment := [][]int32{{1, 2, 3}, {2, 3, 1}, {3, 1, 2}}
	require.NoError(t, c.CreateTopicAssigned(ctx, "elect-kql", assignment))
	require.NoError(t, c.CreateTopicAssigned(ctx, "elect-tool", assignment))

	require.NoError(t, c.StopBroker(2, false)) // controlled: its leaderships move away
	require.NoError(t, c.StartBrokerLeavingLeaders(2))

	rows, res := mustRun(t, s, parse(t, "ELECT LEADERS FOR TOPIC 'elect-kql'"))
	require.Len(t, rows, 1, "only the partition broker 2 should lead is led elsewhere: %v", rows)
	require.Equal(t, int64(1), rows[0][1])
	require.NotEqual(t, int64(2), rows[0][2])
	require.Equal(t, int64(2), rows[0][3], "would-be leader: the preferred replica")
	require.Equal(t, "dry run: add EXECUTE to elect the preferred replica", rows[0][4])
	require.Nil(t, res.Stats().Notices())

	tr.reset()
	rows, _ = mustRun(t, s, parse(t, "ELECT LEADERS PREFERRED FOR TOPIC 'elect-kql' EXECUTE"))
	kqlSaid := map[string][]string{}
	for _, row := range rows {
		kqlSaid[row[4].(string)] = append(kqlSaid[row[4].(string)], fmt.Sprintf("elect-kql-%d", row[1]))
	}
	require.Equal(t, map[string][]string{"elected": {"elect-kql-1"},
		"not needed: the preferred replica already leads": {"elect-kql-0", "elect-kql-2"}}, kqlSaid)
	require.Equal(t, 1, sum(tr.count("ElectLeaders")), "one ElectLeaders, to one broker")
	require.Eventually(t, func() bool {
		rows, _, err := run(t, s, parse(t, "SHOW PARTITIONS OF 'elect-kql' ORDER BY partition"))
		if err != nil || len(rows) != 3 {
			return false
		}
		for _, row := range rows {
			if row[2] != int64(row[3].([]int32)[0]) {
				return false
			}
		}
		return true
	}, 20*time.Second, 200*time.Millisecond, "the leaders are back on the preferred replicas")

	plan := filepath.Join(t.TempDir(), "elect.json")
	require.NoError(t, os.WriteFile(plan, []byte(`{"partitions":[{"topic":"elect-tool","partition":0},{"topic":"elect-tool","partition":1},{"topic":"elect-tool","partition":2}]}`), 0o644))
	out, err := c.RunTool(ctx, "org.apache.kafka.tools.LeaderElectionCommand", "--bootstrap-server", bootstrapOf(c),
		"--election-type", "preferred", "--path-to-json-file", plan)
	require.NoError(t, err)
	toolSaid := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^(Successfully completed leader election \(PREFERRED\)|Valid replica already elected) for partitions (.+)$`).FindAllStringSubmatch(out, -1) {
		what := "elected"
		if strings.HasPrefix(m[1], "Valid") {
			what = "not needed: the preferred replica already leads"
		}
		parts := strings.Split(m[2], ", ")
		slices.Sort(parts)
		toolSaid[what] = parts
	}
	for k, v := range kqlSaid {
		kqlSaid[k] = nil
		for _, p := range v {
			kqlSaid[k] = append(kqlSaid[k], strings.Replace(p, "elect-kql", "elect-tool", 1))
		}
	}
	require.Equal(t, kqlSaid, toolSaid, "kafka-leader-election.sh answers the twin topic the same:\n%s", out)
}
