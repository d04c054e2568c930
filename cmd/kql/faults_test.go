package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// Faults during a statement, on the real cluster: a broker killed or hung
// while a statement runs, leaders moving under it, a broker that advertises
// an address kql cannot reach. All run in `make test`; the long ones skip
// with -short, which only `make test-versions` passes (the same faults on
// other Kafka releases would double its time).

func longFault(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a long fault test: runs in make test (go test without -short)")
	}
}

// syncBuffer is a bytes.Buffer a test can read while kql writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// startReal runs kql in the background; wait returns its result.
func startReal(t *testing.T, out *syncBuffer, args ...string) (wait func() realRun) {
	t.Helper()
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errb, Getenv: func(string) string { return "" }}
		done <- run(ctx, ios, args, realWorld())
	}()
	return func() realRun {
		code := <-done
		return realRun{code: code, stdout: out.String(), stderr: errb.String()}
	}
}

// produceSpread writes n records to each partition of topic, value
// "p<partition>-<i>", timestamps increasing, in batches.
func produceSpread(t *testing.T, r *kafkatest.Real, topic string, partitions, n int, valueSize int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.Bootstrap()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pad := strings.Repeat("x", valueSize)
	base := time.Now().Add(-time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for i := range n {
		for p := range partitions {
			wg.Add(1)
			rec := &kgo.Record{Topic: topic, Partition: int32(p), Timestamp: base.Add(time.Duration(i*partitions+p) * time.Millisecond),
				Value: []byte(fmt.Sprintf("p%d-%d%s", p, i, pad))}
			cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
				wg.Done()
			})
		}
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("producing to %s: %v", topic, firstErr)
	}
}

// spreadAssignment leads partition p on broker ids[p%3], replicated 3 ways.
func spreadAssignment(ids []int32, partitions int) [][]int32 {
	var out [][]int32
	for p := range partitions {
		l := p % len(ids)
		out = append(out, []int32{ids[l], ids[(l+1)%len(ids)], ids[(l+2)%len(ids)]})
	}
	return out
}

func brokerIDs(r *kafkatest.Real) []int32 {
	var ids []int32
	for _, b := range r.Brokers() {
		ids = append(ids, b.ID)
	}
	return ids
}

// consumedRows parses CONSUME's csv output into partition -> offsets seen.
func consumedRows(t *testing.T, out string) map[int][]int64 {
	t.Helper()
	rd := csv.NewReader(strings.NewReader(out))
	rd.FieldsPerRecord = -1
	got := map[int][]int64{}
	for {
		rec, err := rd.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("CONSUME output is not csv: %v", err)
		}
		if len(rec) < 2 || rec[0] == "partition" {
			continue
		}
		p, err1 := strconv.Atoi(rec[0])
		o, err2 := strconv.ParseInt(rec[1], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("CONSUME row %q: not partition,offset", rec)
		}
		got[p] = append(got[p], o)
	}
	return got
}

// TestRealFaultKillBrokerMidConsume: SIGKILL a broker while CONSUME reads
// a 6-partition topic led two partitions per broker, replicated 3 ways.
// The statement ends with every record exactly once (from the new leaders)
// or with a partial result that names the failed partitions and the dead
// broker; no hang, no duplicate, no gap.
func TestRealFaultKillBrokerMidConsume(t *testing.T) {
	longFault(t)
	r := kafkatest.Shared(t)
	ids := brokerIDs(r)
	topic := kafkatest.TopicName(t)
	const partitions, perPartition = 6, 6000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.CreateTopicAssigned(ctx, topic, spreadAssignment(ids, partitions)); err != nil {
		t.Fatal(err)
	}
	produceSpread(t, r, topic, partitions, perPartition, 1000)
	victim := ids[1]
	victimAddr := r.Brokers()[1].Addr

	out := &syncBuffer{}
	start := time.Now()
	wait := startReal(t, out, "-b", strings.Join(r.Bootstrap(), ","), "--format", "csv", "--timeout", "150s",
		"-e", "CONSUME "+topic+" FROM OLDEST LIMIT 1000000")
	for out.Len() < 1<<20 && time.Since(start) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	killedAt := out.Len()
	if err := r.StopBroker(victim, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.StartBroker(victim); err != nil {
			t.Errorf("restarting broker %d: %v", victim, err)
		}
	})
	res := wait()
	took := time.Since(start)
	t.Logf("killed broker %d after %d bytes of output; CONSUME ended after %s with exit %d\n%s", victim, killedAt, took.Round(100*time.Millisecond), res.code, res.stderr)
	if killedAt >= len(res.stdout) {
		t.Fatalf("CONSUME had finished before the kill (%d bytes): make the topic bigger", killedAt)
	}
	got := consumedRows(t, res.stdout)
	total := 0
	for p := range partitions {
		offs := got[p]
		total += len(offs)
		for i, o := range offs {
			if o != int64(i) {
				t.Fatalf("partition %d: row %d has offset %d, want %d (a duplicate or a gap)", p, i, o, i)
			}
		}
	}
	switch res.code {
	case 0:
		if total != partitions*perPartition {
			t.Errorf("exit 0 with %d records, want all %d", total, partitions*perPartition)
		}
	case exitFailed:
		// A partial result: it names the partitions that did not finish and the dead broker.
		for p := range partitions {
			if len(got[p]) < perPartition && !strings.Contains(res.stderr, fmt.Sprintf("%s/%d", topic, p)) {
				t.Errorf("partition %d ended at %d of %d records, and the error does not name it", p, len(got[p]), perPartition)
			}
		}
		if !strings.Contains(res.stderr, fmt.Sprintf("broker %d", victim)) && !strings.Contains(res.stderr, victimAddr) {
			t.Errorf("the partial result does not name the dead broker %d (%s)", victim, victimAddr)
		}
	default:
		t.Errorf("exit %d: want 0 (every record) or 1 (partial)\n%s", res.code, res.stderr)
	}
}

// TestRealFaultHungBroker: SIGSTOP a broker, then DESCRIBE TOPIC, SHOW
// GROUPS and CONSUME. Each finishes within --timeout and names the hung
// broker; DESCRIBE TOPIC and SHOW GROUPS also finish without --timeout,
// within a bounded default. After SIGCONT the next statement works.
func TestRealFaultHungBroker(t *testing.T) {
	r := kafkatest.Shared(t)
	ids := brokerIDs(r)
	topic := kafkatest.TopicName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.CreateTopicAssigned(ctx, topic, spreadAssignment(ids, 3)); err != nil {
		t.Fatal(err)
	}
	produceSpread(t, r, topic, 3, 50, 10)
	victim := ids[1]
	victimAddr := r.Brokers()[1].Addr
	bootstrap := strings.Join(r.Bootstrap(), ",")

	if err := r.PauseBroker(victim); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			if err := r.ResumeBroker(victim); err != nil {
				t.Fatalf("resuming broker %d: %v", victim, err)
			}
		}
	}
	defer resume()

	type stmtCase struct {
		name    string
		timeout string
		bound   time.Duration
		stmt    string
	}
	cases := []stmtCase{
		{"DESCRIBE TOPIC --timeout", "5s", 15 * time.Second, "DESCRIBE TOPIC " + topic},
		{"SHOW GROUPS --timeout", "5s", 15 * time.Second, "SHOW GROUPS"},
		{"CONSUME --timeout", "5s", 15 * time.Second, "CONSUME " + topic + " LIMIT 1000"},
		// Without --timeout the bound is the client's: a request to a hung
		// broker fails after kgo's read timeout (about 10 s), and
		// DESCRIBE TOPIC asks for two bounds, each retried after a
		// metadata refresh. Measured: 40 s and 20 s.
		{"DESCRIBE TOPIC default", "", 90 * time.Second, "DESCRIBE TOPIC " + topic},
		{"SHOW GROUPS default", "", 90 * time.Second, "SHOW GROUPS"},
	}
	var wg sync.WaitGroup
	results := make([]realRun, len(cases))
	took := make([]time.Duration, len(cases))
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"-b", bootstrap, "--format", "csv", "-e", c.stmt}
			if c.timeout != "" {
				args = append(args, "--timeout", c.timeout)
			}
			start := time.Now()
			results[i] = startReal(t, &syncBuffer{}, args...)()
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	for i, c := range cases {
		res := results[i]
		t.Logf("%s: exit %d after %s\n%s", c.name, res.code, took[i].Round(100*time.Millisecond), res.stderr)
		if took[i] > c.bound {
			t.Errorf("%s took %s, want at most %s", c.name, took[i], c.bound)
		}
		if res.code == 0 {
			continue // the controller fenced the hung broker in time and the leaders moved: a right answer
		}
		if !strings.Contains(res.stderr, fmt.Sprintf("broker %d", victim)) && !strings.Contains(res.stderr, victimAddr) {
			t.Errorf("%s failed without naming the hung broker %d (%s):\n%s", c.name, victim, victimAddr, res.stderr)
		}
	}

	resume()
	res := runReal(t, nil, "-b", bootstrap, "--format", "csv", "--timeout", "30s", "-e", "DESCRIBE TOPIC "+topic+"; SHOW GROUPS; CONSUME "+topic+" LIMIT 150")
	if res.code != 0 || !strings.Contains(res.stdout, "0,"+strconv.Itoa(int(ids[0]))) {
		t.Errorf("after SIGCONT: want every statement to work:\n%s", res)
	}
	if n := len(strings.Split(strings.TrimSpace(res.stdout), "\n")); n < 150 {
		t.Errorf("after SIGCONT: CONSUME returned %d lines, want 150 records", n)
	}
}

// TestRealFaultLeadersMoveDuringStatements: while leadership moves in a
// loop, by reassignment (rotating each partition's replica list) and by
// preferred leader election, DESCRIBE TOPIC and CONSUME FROM NEWEST keep
// giving the right answers.
func TestRealFaultLeadersMoveDuringStatements(t *testing.T) {
	longFault(t)
	r := kafkatest.Shared(t)
	ids := brokerIDs(r)
	topic := kafkatest.TopicName(t)
	const partitions, perPartition = 3, 200
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	assign := spreadAssignment(ids, partitions)
	if err := r.CreateTopicAssigned(ctx, topic, assign); err != nil {
		t.Fatal(err)
	}
	produceSpread(t, r, topic, partitions, perPartition, 10)
	adm, closeAdm, err := r.Admin()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAdm()
	t.Cleanup(func() {
		// Leave preferred leaders as StartBroker and the next test expect.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := r.WaitHealthy(ctx); err != nil {
			t.Errorf("after moving leaders: %v", err)
		}
	})

	stop := make(chan struct{})
	var moves, elections int
	var moverErr error
	moverDone := make(chan struct{})
	go func() {
		defer close(moverDone)
		cl, err := kgo.NewClient(kgo.SeedBrokers(r.Bootstrap()...))
		if err != nil {
			moverErr = err
			return
		}
		defer cl.Close()
		for round := 1; ; round++ {
			select {
			case <-stop:
				return
			default:
			}
			// Rotate every partition's replica list: its preferred leader changes.
			req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			rt.Topic = topic
			for p := range partitions {
				rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
				rp.Partition = int32(p)
				reps := assign[p]
				rotated := []int32{}
				for i := range reps {
					rotated = append(rotated, reps[(i+round)%len(reps)])
				}
				rp.Replicas = rotated
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
			if _, err := req.RequestWith(ctx, cl); err != nil {
				moverErr = fmt.Errorf("reassignment: %w", err)
				return
			}
			moves++
			time.Sleep(300 * time.Millisecond)
			set := kadm.TopicsSet{}
			for p := range partitions {
				set.Add(topic, int32(p))
			}
			if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, set); err != nil {
				moverErr = fmt.Errorf("preferred election: %w", err)
				return
			}
			elections++
			time.Sleep(300 * time.Millisecond)
		}
	}()

	bootstrap := strings.Join(r.Bootstrap(), ",")
	// The newest 10 records of the merge: the last 10 produced, by timestamp.
	var wantNewest []string
	for i := perPartition*partitions - 10; i < perPartition*partitions; i++ {
		wantNewest = append(wantNewest, fmt.Sprintf("p%d-%d", i%partitions, i/partitions))
	}
	deadline := time.Now().Add(40 * time.Second)
	runs, failures := 0, 0
	for time.Now().Before(deadline) {
		runs++
		res := runReal(t, nil, "-b", bootstrap, "--format", "csv", "--timeout", "30s", "-e", "DESCRIBE TOPIC "+topic)
		if res.code != 0 {
			failures++
			t.Errorf("DESCRIBE TOPIC while leaders move:\n%s", res)
		} else {
			rows := strings.Split(strings.TrimSpace(res.stdout), "\n")[1:]
			if len(rows) != partitions {
				t.Errorf("DESCRIBE TOPIC: %d rows, want %d:\n%s", len(rows), partitions, res.stdout)
			}
			for _, row := range rows {
				// earliest_offset, latest_offset, messages, lso, lso_lag
				if !strings.HasSuffix(row, fmt.Sprintf(",0,%d,%d,%d,0", perPartition, perPartition, perPartition)) {
					t.Errorf("DESCRIBE TOPIC row %q: want offsets 0..%d, all stable", row, perPartition)
				}
			}
		}
		res = runReal(t, nil, "-b", bootstrap, "--format", "csv", "--timeout", "30s", "-e", "CONSUME "+topic+" FROM NEWEST LIMIT 10")
		if res.code != 0 {
			failures++
			t.Errorf("CONSUME FROM NEWEST while leaders move:\n%s", res)
			continue
		}
		var values []string
		rd := csv.NewReader(strings.NewReader(res.stdout))
		recs, err := rd.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range recs[1:] {
			values = append(values, strings.TrimRight(rec[4], "x"))
		}
		if strings.Join(values, " ") != strings.Join(wantNewest, " ") {
			t.Errorf("CONSUME FROM NEWEST LIMIT 10 while leaders move:\n got %v\nwant %v", values, wantNewest)
		}
	}
	close(stop)
	<-moverDone
	if moverErr != nil {
		t.Fatal(moverErr)
	}
	t.Logf("%d rounds of DESCRIBE TOPIC and CONSUME FROM NEWEST (%d failed) during %d reassignments and %d preferred elections", runs, failures, moves, elections)
	if moves < 5 {
		t.Errorf("only %d reassignments happened: the test did not move leaders while statements ran", moves)
	}
}

// TestRealFaultUnreachableAdvertisedListener: kql bootstraps from the
// BADADV listener, on which the last broker advertises an address nothing
// listens on. What needs that broker fails naming the advertised address
// and advertised.listeners; what does not, works.
func TestRealFaultUnreachableAdvertisedListener(t *testing.T) {
	r := kafkatest.Shared(t)
	ids := brokerIDs(r)
	bad := r.ListenerAddrs(kafkatest.ListenerBadAdvertised)
	last := ids[len(ids)-1]
	topic := kafkatest.TopicName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.CreateTopicAssigned(ctx, topic, spreadAssignment(ids, 3)); err != nil {
		t.Fatal(err)
	}
	produceSpread(t, r, topic, 3, 5, 10)
	// Partition p is led by ids[p]: 0 and 1 by reachable brokers, 2 by the last.
	kql := func(stmt string) realRun {
		return runReal(t, nil, "-b", bad[0], "--format", "csv", "--timeout", "60s", "-e", stmt)
	}
	res := kql("CONSUME " + topic + " PARTITION (0, 1) LIMIT 100")
	if res.code != 0 || len(consumedRows(t, res.stdout)[0]) != 5 || len(consumedRows(t, res.stdout)[1]) != 5 {
		t.Errorf("CONSUME of partitions led by reachable brokers: want exit 0 and 10 records:\n%s", res)
	}
	for _, stmt := range []string{"DESCRIBE TOPIC " + topic, "CONSUME " + topic + " PARTITION 2 LIMIT 5", "SHOW GROUPS"} {
		res := kql(stmt)
		t.Logf("%s: exit %d\n%s", stmt, res.code, res.stderr)
		if res.code != exitFailed {
			t.Errorf("%s needs broker %d: want exit 1:\n%s", stmt, last, res)
		}
		wantAll(t, stmt, res.stderr, kafkatest.UnreachableAddr, fmt.Sprintf("broker %d", last), "advertised.listeners")
	}
	res = kql("DESCRIBE TOPIC " + topic)
	if !strings.Contains(res.stdout, fmt.Sprintf("0,%d,", ids[0])) || !strings.Contains(res.stdout, fmt.Sprintf("1,%d,", ids[1])) {
		t.Errorf("DESCRIBE TOPIC: the partitions of reachable leaders must keep their rows:\n%s", res.stdout)
	}
}
