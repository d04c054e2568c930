package exec

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// Routing of the cluster operation statements on kfake's 3 brokers. kfake
// answers DescribeLogDirs for the whole cluster on any broker, so the
// tests make each broker answer as a real one does (only its own dirs and
// replicas, with sizes that name it): an answer taken from the wrong broker
// shows in the rows, not only in the trace.

// ownLogDirs makes every kfake broker answer DescribeLogDirs for its own
// disk only: dir /data/broker-N, the asked replicas sized 1000*N+partition.
// It records which broker each request reached; fail lists brokers that
// close the connection instead.
func ownLogDirs(f *fake, fail ...int32) *nodeLog {
	seen := &nodeLog{}
	f.ControlKey(int16(kmsg.DescribeLogDirs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		node := f.CurrentNode()
		seen.add(node)
		for _, id := range fail {
			if id == node {
				return nil, errors.New("broker down"), true
			}
		}
		req := kreq.(*kmsg.DescribeLogDirsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
		d := kmsg.NewDescribeLogDirsResponseDir()
		d.Dir = fmt.Sprintf("/data/broker-%d", node)
		d.TotalBytes, d.UsableBytes = 1<<40, int64(node+1)<<30
		for _, rt := range req.Topics {
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = rt.Topic
			for _, p := range rt.Partitions {
				rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
				rp.Partition, rp.Size = p, int64(1000*node)+int64(p)
				t.Partitions = append(t.Partitions, rp)
			}
			d.Topics = append(d.Topics, t)
		}
		resp.Dirs = append(resp.Dirs, d)
		return resp, nil, true
	})
	return seen
}

// nodeLog records the brokers a request reached, as kfake saw it.
type nodeLog struct {
	mu    sync.Mutex
	nodes map[int32]int
}

func (l *nodeLog) add(n int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nodes == nil {
		l.nodes = map[int32]int{}
	}
	l.nodes[n]++
}

func (l *nodeLog) get() map[int32]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[int32]int{}
	for k, v := range l.nodes {
		out[k] = v
	}
	return out
}

func TestShowLogDirsAsksEveryBrokerForItsOwnDirs(t *testing.T) {
	f := newFake(t)
	seen := ownLogDirs(f)
	rows, res := mustRun(t, f.sess, parse(t, "SHOW LOG DIRS"))
	require.Equal(t, lang.MetaColumns(&lang.ShowLogDirs{}), colNames(res))
	require.Equal(t, []result.Row{
		{int64(0), "/data/broker-0", int64(1 << 40), int64(1 << 30), nil},
		{int64(1), "/data/broker-1", int64(1 << 40), int64(2 << 30), nil},
		{int64(2), "/data/broker-2", int64(1 << 40), int64(3 << 30), nil},
	}, rows, "each broker's row is its own answer")
	require.Equal(t, map[int32]int{0: 1, 1: 1, 2: 1}, seen.get(), "one DescribeLogDirs to every broker")
	require.Equal(t, map[int32]int{0: 1, 1: 1, 2: 1}, f.trace.count("DescribeLogDirs"), "the trace names each broker asked")

	f.trace.reset()
	rows, _ = mustRun(t, f.sess, parse(t, "SHOW LOG DIRS FOR BROKER 1"))
	require.Equal(t, []result.Row{{int64(1), "/data/broker-1", int64(1 << 40), int64(2 << 30), nil}}, rows)
	require.Equal(t, map[int32]int{1: 1}, f.trace.count("DescribeLogDirs"), "FOR BROKER 1 asks broker 1 only")

	_, _, err := run(t, f.sess, parse(t, "SHOW LOG DIRS FOR BROKER 7"))
	require.ErrorContains(t, err, "no broker with id 7: the cluster lists brokers 0, 1, 2")

	rows, _ = mustRun(t, f.sess, parse(t, "EXPLAIN SHOW LOG DIRS"))
	var asked []any
	for _, r := range rows {
		if r[1] == "DescribeLogDirs" {
			asked = append(asked, r[2])
		}
	}
	require.Equal(t, []any{int64(0), int64(1), int64(2)}, asked, "EXPLAIN: one DescribeLogDirs per broker")
}

// TestShowLogDirsFencedBrokerIsARow: a broker the controller fenced is not
// in Metadata; DescribeCluster names it, and it is a row with its error.
func TestShowLogDirsFencedBrokerIsARow(t *testing.T) {
	f := newFake(t)
	ownLogDirs(f)
	f.ControlKey(int16(kmsg.DescribeCluster), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kreq.(*kmsg.DescribeClusterRequest)
		require.True(t, req.IncludeFencedBrokers)
		resp := req.ResponseKind().(*kmsg.DescribeClusterResponse)
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port, b.IsFenced = 7, "127.0.0.1", 1, true
		resp.Brokers = append(resp.Brokers, b)
		return resp, nil, true
	})
	rows, _, err := run(t, f.sess, parse(t, "SHOW LOG DIRS"))
	require.True(t, result.IsPartial(err), "%v", err)
	require.ErrorContains(t, err, "broker 7 (127.0.0.1:1) is registered but fenced by the controller")
	require.Len(t, rows, 4)
	require.Equal(t, result.Row{int64(7), nil, nil, nil, rows[3][4]}, rows[3])
	require.Contains(t, rows[3][4], "fenced")

	_, _, err = run(t, f.sess, parse(t, "SHOW LOG DIRS FOR BROKER 7"))
	require.True(t, result.IsPartial(err), "FOR BROKER names a fenced broker: a row, not 'no such broker': %v", err)

	// EXPLAIN plans what the statement does: no DescribeLogDirs to a
	// fenced broker (it cannot answer), not a 'no such broker' refusal.
	rows, _, err = run(t, f.sess, parse(t, "EXPLAIN SHOW LOG DIRS FOR BROKER 7"))
	require.NoError(t, err, "EXPLAIN of a statement that runs")
	for _, r := range rows {
		require.NotEqual(t, "DescribeLogDirs", r[1], "nothing is sent to fenced broker 7: %v", rows)
	}
}

func TestShowLogDirsBrokerDownIsARowAndPartial(t *testing.T) {
	f := newFake(t)
	ownLogDirs(f, 2)
	rows, _, err := run(t, f.sess, parse(t, "SHOW LOG DIRS"))
	require.True(t, result.IsPartial(err), "a broker that did not answer makes the result partial: %v", err)
	require.ErrorContains(t, err, "DescribeLogDirs to broker 2")
	require.Len(t, rows, 3)
	require.Equal(t, "/data/broker-1", rows[1][1])
	require.Equal(t, int64(2), rows[2][0], "broker 2 keeps its row")
	require.Nil(t, rows[2][1], "with no dir")
	require.Nil(t, rows[2][2], "and NULL sizes, never 0")
	require.Contains(t, rows[2][4], "DescribeLogDirs to broker 2")
}

// TestSizesAskOnlyTheReplicasBrokers: SHOW PARTITIONS and SHOW TOPICS size
// each replica from the broker that holds it, asking only those brokers.
func TestSizesAskOnlyTheReplicasBrokers(t *testing.T) {
	f := newFake(t)
	seen := ownLogDirs(f)
	_, err := f.adm.CreateTopic(ctxT(t), 2, 1, nil, "one-copy")
	require.NoError(t, err)
	require.NoError(t, f.MoveTopicPartition("one-copy", 0, 1))
	require.NoError(t, f.MoveTopicPartition("one-copy", 1, 2))

	rows, _ := mustRun(t, f.sess, parse(t, "SHOW PARTITIONS OF 'one-copy'"))
	require.Len(t, rows, 2)
	require.Equal(t, int64(1000), rows[0][11], "partition 0's only replica, on broker 1")
	require.Equal(t, int64(1000), rows[0][12])
	require.Equal(t, int64(2001), rows[1][11], "partition 1's only replica, on broker 2")
	require.Equal(t, map[int32]int{1: 1, 2: 1}, seen.get(), "broker 0 holds no replica and is not asked")
	require.Equal(t, map[int32]int{1: 1, 2: 1}, f.trace.count("DescribeLogDirs"))

	f.spread(t, "three-copies", 3) // leaders 0, 1, 2; each partition on every broker
	rows, _ = mustRun(t, f.sess, parse(t, "SHOW TOPICS LIKE 'three*'"))
	require.Len(t, rows, 1)
	// leaders: p0 on 0 (0), p1 on 1 (1001), p2 on 2 (2002); all replicas:
	// every broker holds every partition: 3*(0+1+2) + 1000*3 + 2000*3.
	require.Equal(t, int64(0+1001+2002), rows[0][6], "size_bytes sums the leader replicas")
	require.Equal(t, int64(3*3+3000*3), rows[0][7], "replicas_size_bytes sums every replica")

	rows, _ = mustRun(t, f.sess, parse(t, "EXPLAIN SHOW PARTITIONS OF 'one-copy'"))
	var plan []result.Row
	for _, r := range rows {
		if r[1] == "DescribeLogDirs" {
			plan = append(plan, r)
		}
	}
	require.Len(t, plan, 2)
	require.Equal(t, int64(1), plan[0][2])
	require.Equal(t, "sizes of its replicas: one-copy/0", plan[0][4])
	require.Equal(t, int64(2), plan[1][2])
}

// TestControllerRequestsGoToOneBroker: moves, cancels, listings and
// elections go to any one broker (KRaft forwards them to the controller),
// never to several, and the trace names the broker kfake saw.
func TestControllerRequestsGoToOneBroker(t *testing.T) {
	f := newFake(t)
	f.spread(t, "moves", 3)
	seen := map[int16]*nodeLog{}
	for _, key := range []kmsg.Key{kmsg.AlterPartitionAssignments, kmsg.ListPartitionReassignments, kmsg.ElectLeaders, kmsg.ApiVersions} {
		l := &nodeLog{}
		seen[int16(key)] = l
		f.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
			f.KeepControl()
			l.add(f.CurrentNode())
			return nil, nil, false
		})
	}
	check := func(key kmsg.Key, api string) {
		t.Helper()
		got := seen[int16(key)].get()
		require.Len(t, got, 1, "%s reached one broker: %v", api, got)
		require.Equal(t, got, f.trace.count(api), "%s: the trace names the broker that got it", api)
	}

	// A dry run sends nothing but metadata.
	f.trace.reset()
	rows, _ := mustRun(t, f.sess, parse(t, "ALTER TOPIC moves PARTITION 0 REPLICAS (1, 2, 0)"))
	require.Equal(t, []result.Row{{"moves", int64(0), []int32{0, 1, 2}, []int32{1, 2, 0}, int64(0), int64(0),
		"dry run: add EXECUTE to start the move; broker 0 keeps the lead (ELECT LEADERS moves it to the preferred broker 1 after the move)"}}, rows)
	require.Empty(t, f.trace.count("AlterPartitionReassignments"))

	// An impossible assignment is refused before anything is sent.
	_, _, err := run(t, f.sess, parse(t, "ALTER TOPIC moves PARTITION 0 REPLICAS (1, 5) EXECUTE"))
	require.ErrorContains(t, err, "cannot move moves/0 to (1, 5): no broker with id 5: the cluster lists brokers 0, 1, 2")
	_, _, err = run(t, f.sess, parse(t, "ALTER TOPIC moves PARTITION 3 REPLICAS (1) EXECUTE"))
	require.ErrorContains(t, err, `topic "moves" has no partition 3`)
	_, _, err = run(t, f.sess, parse(t, "ALTER TOPIC nope PARTITION 0 REPLICAS (1) EXECUTE"))
	require.ErrorContains(t, err, `no topic named "nope"`)
	require.Empty(t, seen[int16(kmsg.AlterPartitionAssignments)].get(), "nothing was sent")

	rows, _ = mustRun(t, f.sess, parse(t, "ALTER TOPIC moves PARTITION 1 REPLICAS (2, 0) EXECUTE"))
	require.Equal(t, "move started: SHOW REASSIGNMENTS follows it until the new replicas are in sync; then broker 2 leads", rows[0][6])
	check(kmsg.AlterPartitionAssignments, "AlterPartitionReassignments")

	rows, _ = mustRun(t, f.sess, parse(t, "SHOW REASSIGNMENTS"))
	require.Empty(t, rows, "kfake moves at once")
	check(kmsg.ListPartitionReassignments, "ListPartitionReassignments")

	_, _, err = run(t, f.sess, parse(t, "CANCEL REASSIGNMENT ON TOPIC moves PARTITION 1 EXECUTE"))
	require.ErrorContains(t, err, "moves/1 has no reassignment in progress: nothing to cancel")

	rows, _ = mustRun(t, f.sess, parse(t, "ELECT LEADERS FOR TOPIC moves PARTITION 0 EXECUTE"))
	require.Len(t, rows, 1)
	require.Equal(t, "elected", rows[0][4])
	check(kmsg.ElectLeaders, "ElectLeaders")

	f.trace.reset()
	rows, _ = mustRun(t, f.sess, parse(t, "SHOW FEATURES"))
	require.NotEmpty(t, rows)
	require.Equal(t, 1, sum(f.trace.count("ApiVersions")), "one ApiVersions")
}

// TestElectLeadersReportsEachPartition: ELECTION_NOT_NEEDED is an answer
// (the preferred replica leads), another error code fails that partition
// only and makes the result partial.
func TestElectLeadersReportsEachPartition(t *testing.T) {
	f := newFake(t)
	f.spread(t, "elect", 3)
	f.ControlKey(int16(kmsg.ElectLeaders), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.ElectLeadersRequest)
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = "elect"
		for p, code := range []int16{0, kerr.ElectionNotNeeded.Code, kerr.PreferredLeaderNotAvailable.Code} {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = int32(p), code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
		return resp, nil, true
	})
	rows, _, err := run(t, f.sess, parse(t, "ELECT LEADERS PREFERRED FOR TOPIC elect EXECUTE"))
	require.True(t, result.IsPartial(err), "%v", err)
	require.ErrorContains(t, err, "elect/2: PREFERRED_LEADER_NOT_AVAILABLE")
	require.Len(t, rows, 3)
	require.Equal(t, "elected", rows[0][4])
	require.Equal(t, "not needed: the preferred replica already leads", rows[1][4])
	require.Equal(t, rows[1][2], rows[1][3], "not needed: the leader stays")
	require.Contains(t, rows[2][4], "failed: PREFERRED_LEADER_NOT_AVAILABLE")

	rows, res := mustRun(t, f.sess, parse(t, "ELECT LEADERS FOR TOPIC elect"))
	require.Empty(t, rows, "kfake's first replica always leads")
	require.Equal(t, []string{"every partition is led by its preferred replica: nothing to elect"}, res.Stats().Notices())
}

// TestExplainListsExactlyWhatOpsSend: for each statement, the requests
// EXPLAIN lists are the requests the statement sends (as \trace shows
// them): the same APIs, as many, to the same brokers where EXPLAIN names one.
func TestExplainListsExactlyWhatOpsSend(t *testing.T) {
	f := newFake(t)
	ownLogDirs(f)
	f.spread(t, "ops", 3)
	for _, src := range []string{
		"SHOW LOG DIRS",
		"SHOW LOG DIRS FOR BROKER 2",
		"SHOW TOPICS",
		"SHOW PARTITIONS OF ops",
		"SHOW REASSIGNMENTS",
		"SHOW FEATURES",
		"ALTER TOPIC ops PARTITION 0 REPLICAS (1, 2, 0)",
		"ALTER TOPIC ops PARTITION 0 REPLICAS (1, 2, 0) EXECUTE",
		"ELECT LEADERS FOR TOPIC ops",
		"ELECT LEADERS FOR TOPIC ops PARTITION 1, 2 EXECUTE",
		"ELECT LEADERS EXECUTE",
	} {
		plan, _ := mustRun(t, f.sess, parse(t, "EXPLAIN "+src))
		want := map[string]int{}
		for _, r := range plan {
			key := r[1].(string)
			if r[2] != nil {
				key += fmt.Sprintf(" -> %d", r[2])
			}
			want[key]++
		}
		f.trace.reset()
		mustRun(t, f.sess, parse(t, src))
		got := map[string]int{}
		f.trace.mu.Lock()
		for _, e := range f.trace.events {
			key := e.API
			if want[key] == 0 {
				key += fmt.Sprintf(" -> %d", e.Broker)
			}
			got[key]++
		}
		f.trace.mu.Unlock()
		require.Equal(t, want, got, "%s: EXPLAIN's requests and the ones sent", src)
	}
}

// TestSizesDeniedAreNullWithAWarning: DescribeLogDirs needs DESCRIBE on the
// cluster; a user who may see topics but not the brokers' disks still gets
// SHOW TOPICS and SHOW PARTITIONS, sizes NULL and a warning saying why, not
// a failed statement.
func TestSizesDeniedAreNullWithAWarning(t *testing.T) {
	f := newFake(t)
	f.spread(t, "sized", 3)
	f.ControlKey(int16(kmsg.DescribeLogDirs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		resp := kreq.(*kmsg.DescribeLogDirsRequest).ResponseKind().(*kmsg.DescribeLogDirsResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil, true
	})
	for _, src := range []string{"SHOW TOPICS", "SHOW PARTITIONS OF sized"} {
		rows, res := mustRun(t, f.sess, parse(t, src))
		require.NotEmpty(t, rows)
		size, total := slices.Index(colNames(res), "size_bytes"), slices.Index(colNames(res), "replicas_size_bytes")
		require.Nil(t, rows[0][size], "%s: size_bytes NULL, never 0", src)
		require.Nil(t, rows[0][total], "%s: replicas_size_bytes NULL", src)
		w := res.Stats().Warnings()
		require.Len(t, w, 1, src)
		require.Contains(t, w[0], "refused DescribeLogDirs (it needs DESCRIBE on the cluster)")
		require.Contains(t, w[0], "CLUSTER_AUTHORIZATION_FAILED")
	}
	_, _, err := run(t, f.sess, parse(t, "SHOW LOG DIRS"))
	require.True(t, result.IsPartial(err), "SHOW LOG DIRS itself is refused: each broker a row with the refusal: %v", err)
}

// TestSizesBrokerDownAreNullWithAWarning: a broker that does not answer
// DescribeLogDirs leaves the sizes of its replicas NULL, with a warning
// naming it, but SHOW TOPICS and SHOW PARTITIONS stay complete answers (exit
// 0): their rows are the metadata, which a broker being down does not make
// any less true, and which an operator reads precisely while a broker is
// down (under_replicated, offline). It is also what the same broker gives
// once the controller has fenced it (an offline replica, a note).
func TestSizesBrokerDownAreNullWithAWarning(t *testing.T) {
	f := newFake(t)
	ownLogDirs(f, 2)
	f.spread(t, "sized", 3)
	for _, src := range []string{"SHOW TOPICS LIKE 'sized'", "SHOW PARTITIONS OF sized"} {
		rows, res, err := run(t, f.sess, parse(t, src))
		require.NoError(t, err, "%s: a broker down does not make the metadata partial", src)
		require.NotEmpty(t, rows)
		total := slices.Index(colNames(res), "replicas_size_bytes")
		require.Nil(t, rows[0][total], "%s: replicas_size_bytes NULL where broker 2's replica is unknown, never 0", src)
		w := res.Stats().Warnings()
		require.Len(t, w, 1, src)
		require.Contains(t, w[0], "DescribeLogDirs to broker 2", "%s: the warning names the broker", src)
		require.Contains(t, w[0], "SHOW LOG DIRS", "%s: and says where to look", src)
	}
	rows, _, err := run(t, f.sess, parse(t, "SHOW PARTITIONS OF sized"))
	require.NoError(t, err)
	require.Equal(t, int64(0), rows[0][11], "partition 0 is led by broker 0, which answered: its size is known")
}

// TestSizesSkipAFutureReplica: while a replica moves between two log dirs
// of its broker (ALTER REPLICA LOG DIRS), the broker reports it twice, the
// current replica and the future one (isFuture) growing in the new dir;
// it is one replica, sized once, and SHOW LOG DIRS still lists both dirs.
func TestSizesSkipAFutureReplica(t *testing.T) {
	f := newFake(t)
	_, err := f.adm.CreateTopic(ctxT(t), 1, 1, nil, "moving")
	require.NoError(t, err)
	require.NoError(t, f.MoveTopicPartition("moving", 0, 1))
	f.ControlKey(int16(kmsg.DescribeLogDirs), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		resp := kreq.(*kmsg.DescribeLogDirsRequest).ResponseKind().(*kmsg.DescribeLogDirsResponse)
		// The future replica's dir sorts first, so an answer that takes
		// the first replica it finds takes the wrong one.
		for i, future := range []bool{true, false} {
			d := kmsg.NewDescribeLogDirsResponseDir()
			d.Dir = fmt.Sprintf("/data/disk-%d", i)
			d.TotalBytes, d.UsableBytes = 1<<40, 1<<30
			rt := kmsg.NewDescribeLogDirsResponseDirTopic()
			rt.Topic = "moving"
			rp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			rp.Partition, rp.Size, rp.IsFuture = 0, 7+493*int64(i), future // future 7, current 500
			rt.Partitions = append(rt.Partitions, rp)
			d.Topics = append(d.Topics, rt)
			resp.Dirs = append(resp.Dirs, d)
		}
		return resp, nil, true
	})
	rows, _ := mustRun(t, f.sess, parse(t, "SHOW PARTITIONS OF moving"))
	require.Equal(t, int64(500), rows[0][11], "size_bytes is the current replica, not the future one")
	require.Equal(t, int64(500), rows[0][12], "replicas_size_bytes counts the moving replica once")
	rows, _ = mustRun(t, f.sess, parse(t, "SHOW LOG DIRS FOR BROKER 1"))
	require.Len(t, rows, 2, "both dirs of the broker")
}
