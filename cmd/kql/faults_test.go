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

// faultRecords is how many records the mid-CONSUME fault tests read:
// 12 partitions of faultPerPartition records of about 60 bytes each.
const (
	faultPartitions   = 12
	faultPerPartition = 1_000_000 / faultPartitions
)

// consumeThroughFault writes faultPartitions x faultPerPartition records to
// a topic led four partitions per broker, replicated 3 ways, starts
// CONSUME of all of them, applies fault to the broker leading partitions
// 1, 4, 7 and 10 once a tenth of the output is written, and checks the
// promise: exit 0, every record of every partition exactly once, in offset
// order.
func consumeThroughFault(t *testing.T, what string, fault func(r *kafkatest.Real, victim int32) (undo func())) {
	t.Helper()
	r := kafkatest.Shared(t)
	ids := brokerIDs(r)
	topic := kafkatest.TopicName(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.CreateTopicAssigned(ctx, topic, spreadAssignment(ids, faultPartitions)); err != nil {
		t.Fatal(err)
	}
	produced := time.Now()
	produceSpread(t, r, topic, faultPartitions, faultPerPartition, 40)
	t.Logf("wrote %d records in %s", faultPartitions*faultPerPartition, time.Since(produced).Round(100*time.Millisecond))
	victim := ids[1]

	out := &syncBuffer{}
	start := time.Now()
	// No --timeout: the wait for a new leader is bounded by kql's default.
	wait := startReal(t, out, "-b", strings.Join(r.Bootstrap(), ","), "--format", "csv",
		"-e", fmt.Sprintf("CONSUME %s FROM OLDEST LIMIT %d", topic, faultPartitions*faultPerPartition))
	const expectBytes = faultPartitions * faultPerPartition * 80 // rows are 80-90 bytes
	for out.Len() < expectBytes/10 && time.Since(start) < 2*time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	faultAt, faultTime := out.Len(), time.Since(start)
	undo := fault(r, victim)
	res := wait()
	took := time.Since(start)
	undo()
	t.Logf("%s broker %d after %d bytes of output (%s); CONSUME ended after %s with exit %d\n%s", what, victim, faultAt,
		faultTime.Round(100*time.Millisecond), took.Round(100*time.Millisecond), res.code, res.stderr)
	if faultAt >= len(res.stdout) {
		t.Fatalf("CONSUME had finished before the fault (%d bytes): make the topic bigger", faultAt)
	}
	if res.code != 0 {
		t.Errorf("exit %d: want 0, every record from the new leaders\n%s", res.code, res.stderr)
	}
	got := consumedRows(t, res.stdout)
	for p := range faultPartitions {
		offs := got[p]
		for i, o := range offs {
			if o != int64(i) {
				t.Fatalf("partition %d: row %d has offset %d, want %d (a duplicate or a gap)", p, i, o, i)
			}
		}
		if len(offs) != faultPerPartition {
			t.Errorf("partition %d: %d records, want all %d", p, len(offs), faultPerPartition)
		}
	}
}

// TestRealFaultKillBrokerMidConsume: SIGKILL a broker while CONSUME reads
// a million records; its partitions' new leaders (elected once the
// controller fences it, 9-15 s) serve the rest: exit 0, every record once.
func TestRealFaultKillBrokerMidConsume(t *testing.T) {
	longFault(t)
	consumeThroughFault(t, "killed", func(r *kafkatest.Real, victim int32) func() {
		if err := r.StopBroker(victim, true); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := r.StartBroker(victim); err != nil {
				t.Errorf("restarting broker %d: %v", victim, err)
			}
		}
	})
}

// TestRealFaultStopBrokerMidConsume: SIGSTOP a broker while CONSUME reads
// a million records: the Fetch it holds is given up, and its partitions
// are read from their new leaders: exit 0, every record once.
func TestRealFaultStopBrokerMidConsume(t *testing.T) {
	longFault(t)
	consumeThroughFault(t, "stopped", func(r *kafkatest.Real, victim int32) func() {
		if err := r.PauseBroker(victim); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := r.ResumeBroker(victim); err != nil {
				t.Errorf("resuming broker %d: %v", victim, err)
			}
		}
	})
}

// TestRealFaultNoLeaderLeft: partition 1 of a topic replicated once lives
// on one broker, which is SIGKILLed during CONSUME. No replica can lead
// it: the statement waits for a leader until just before --timeout, then
// ends partial, naming the partition, the broker and how long kql waited,
// never as a bare timeout. The leaderless partition holds the ordered
// merge until it is given up, so how much of the other partitions is
// handed out in the time left depends on the machine: each is either
// complete, or named as cut off by --timeout exactly where its rows stop;
// either way without a gap or a duplicate.
func TestRealFaultNoLeaderLeft(t *testing.T) {
	longFault(t)
	r := kafkatest.Shared(t)
	ids := brokerIDs(r)
	topic := kafkatest.TopicName(t)
	const partitions, perPartition = 3, 100_000
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.CreateTopicAssigned(ctx, topic, [][]int32{{ids[0]}, {ids[1]}, {ids[2]}}); err != nil {
		t.Fatal(err)
	}
	produceSpread(t, r, topic, partitions, perPartition, 40)
	victim, victimAddr := ids[1], r.Brokers()[1].Addr

	out := &syncBuffer{}
	const timeout = 20 * time.Second
	start := time.Now()
	wait := startReal(t, out, "-b", strings.Join(r.Bootstrap(), ","), "--format", "csv", "--timeout", timeout.String(),
		"-e", fmt.Sprintf("CONSUME %s FROM OLDEST LIMIT %d", topic, partitions*perPartition))
	for out.Len() < partitions*perPartition*80/10 && time.Since(start) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	faultAt := out.Len()
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
	t.Logf("killed broker %d after %d bytes of output; CONSUME ended after %s with exit %d\n%s", victim, faultAt, took.Round(100*time.Millisecond), res.code, res.stderr)
	if faultAt >= len(res.stdout) {
		t.Fatalf("CONSUME had finished before the kill (%d bytes): make the topic bigger", faultAt)
	}
	if took > timeout+5*time.Second {
		t.Errorf("CONSUME took %s: want it to end within --timeout %s", took, timeout)
	}
	if took < timeout*2/3 {
		t.Errorf("CONSUME ended after %s: want it to wait for a leader for most of --timeout %s", took, timeout)
	}
	if res.code != exitFailed {
		t.Errorf("exit %d: want 1 (partial)", res.code)
	}
	wantAll(t, "the partial result", res.stderr, "partial result", fmt.Sprintf("%s/1", topic), fmt.Sprintf("broker %d (%s)", victim, victimAddr),
		"no leader answered for")
	if strings.Contains(res.stderr, fmt.Sprintf("LIMIT %d: cancelled after --timeout", partitions*perPartition)) {
		t.Errorf("the statement was cut off by --timeout instead of ending partial")
	}
	got := consumedRows(t, res.stdout)
	for p := range partitions {
		offs := got[p]
		for i, o := range offs {
			if o != int64(i) {
				t.Fatalf("partition %d: row %d has offset %d, want %d (a duplicate or a gap)", p, i, o, i)
			}
		}
		if p == 1 {
			continue
		}
		cut := fmt.Sprintf("partition %s/%d: read up to offset %d (of %d), then cancelled after --timeout %s", topic, p, len(offs), perPartition, timeout)
		switch {
		case len(offs) == perPartition:
			if strings.Contains(res.stderr, fmt.Sprintf("partition %s/%d: read up to", topic, p)) {
				t.Errorf("partition %d has all its records but is named as cut off", p)
			}
		case strings.Contains(res.stderr, cut):
			t.Logf("partition %d (its broker is up): %d of %d records before --timeout, named as cut off", p, len(offs), perPartition)
		default:
			t.Errorf("partition %d (its broker is up): %d records, want all %d or the error to say %q", p, len(offs), perPartition, cut)
		}
	}
}

// TestRealFaultRollingRestartDuringFollow: every broker is restarted in
// turn (SIGTERM, then started again) while FOLLOW reads a topic replicated
// 3 ways and a producer writes 10,000 records: FOLLOW shows each of them
// exactly once, and ends as FOLLOW ends (here: cancelled, as by Ctrl-C).
func TestRealFaultRollingRestartDuringFollow(t *testing.T) {
	longFault(t)
	r := kafkatest.Shared(t)
	ids := brokerIDs(r)
	topic := kafkatest.TopicName(t)
	const partitions, total, round = 3, 10_000, 50
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := r.CreateTopicAssigned(ctx, topic, spreadAssignment(ids, partitions)); err != nil {
		t.Fatal(err)
	}

	out := &syncBuffer{}
	var errb syncBuffer
	kctx, stopKQL := context.WithCancel(ctx)
	defer stopKQL()
	done := make(chan int, 1)
	go func() {
		ios := &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errb, Getenv: func(string) string { return "" }}
		done <- run(kctx, ios, []string{"-b", strings.Join(r.Bootstrap(), ","), "--format", "csv",
			"-e", "CONSUME " + topic + " FROM OLDEST FOLLOW"}, realWorld())
	}()

	// The producer writes `round` records every 100 ms until it has
	// written them all, whatever the brokers do.
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.Bootstrap()...), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var produceErr error
	var producedAt time.Time
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		defer func() { producedAt = time.Now() }()
		for i := 0; i < total; i += round {
			var recs []*kgo.Record
			for j := i; j < i+round; j++ {
				recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("f-%05d", j))})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				produceErr = err
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	restartsBegan := time.Now()
	for _, id := range ids {
		if err := r.StopBroker(id, false); err != nil {
			t.Fatalf("stopping broker %d: %v", id, err)
		}
		if err := r.StartBroker(id); err != nil {
			t.Fatalf("starting broker %d: %v", id, err)
		}
		t.Logf("restarted broker %d (%s since the first stop)", id, time.Since(restartsBegan).Round(100*time.Millisecond))
	}
	<-produced
	if produceErr != nil {
		t.Fatalf("producing: %v", produceErr)
	}
	t.Logf("the producer finished %s after the first stop", producedAt.Sub(restartsBegan).Round(100*time.Millisecond))
	// Every record shows within a bound, then FOLLOW is stopped.
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && strings.Count(out.String(), "\n") < total+1 {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // a record shown twice would come now
	stopKQL()
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("FOLLOW did not end within 30 s of its cancellation")
	}
	t.Logf("FOLLOW ended with exit %d\n%s", code, errb.String())
	if code != 0 && code != exitInterrupted {
		t.Errorf("FOLLOW ended with exit %d: want it to end as FOLLOW ends\n%s", code, errb.String())
	}
	rd := csv.NewReader(strings.NewReader(out.String()))
	rd.FieldsPerRecord = -1
	rows, err := rd.ReadAll()
	if err != nil {
		t.Fatalf("FOLLOW output is not csv: %v", err)
	}
	seen := map[string]int{}
	last := map[string]int64{}
	for _, row := range rows {
		if len(row) < 5 || row[0] == "partition" {
			continue
		}
		seen[row[4]]++
		off, _ := strconv.ParseInt(row[1], 10, 64)
		if prev, ok := last[row[0]]; ok && off != prev+1 {
			t.Errorf("partition %s: offset %d after %d (a duplicate or a gap)", row[0], off, prev)
		}
		last[row[0]] = off
	}
	missing, twice := 0, 0
	for i := range total {
		switch n := seen[fmt.Sprintf("f-%05d", i)]; {
		case n == 0:
			missing++
		case n > 1:
			twice++
		}
	}
	if missing > 0 || twice > 0 || len(seen) != total {
		t.Errorf("FOLLOW showed %d distinct records of %d: %d missing, %d more than once", len(seen), total, missing, twice)
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
