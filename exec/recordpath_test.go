package exec

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// seedRecords writes n records of about 100 bytes round-robin over the
// topic's partitions, with one header each, timestamps one ms apart.
func seedRecords(ctx context.Context, cl *kgo.Client, topic string, partitions int32, n int) error {
	return seedRecordsHeaders(ctx, cl, topic, partitions, n, 1)
}

func seedRecordsHeaders(ctx context.Context, cl *kgo.Client, topic string, partitions int32, n, headers int) error {
	base := time.Now().Add(-time.Hour)
	recs := make([]*kgo.Record, 0, 5000)
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i) % partitions, Key: []byte("key-" + strconv.Itoa(i)),
			Value:     []byte(fmt.Sprintf(`{"id":%d,"p":%d,"name":"abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz-%08d"}`, i, i%10, i)),
			Headers:   []kgo.RecordHeader{{Key: "trace", Value: []byte("t-" + strconv.Itoa(i%7))}}[:headers],
			Timestamp: base.Add(time.Duration(i) * time.Millisecond)})
		if len(recs) == cap(recs) || i == n-1 {
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				return err
			}
			recs = recs[:0]
		}
	}
	return nil
}

// drainRecords reads a CONSUME through the record path and returns the count.
func drainRecords(t *testing.T, s *Session, st *lang.Consume) int64 {
	t.Helper()
	return drainRecordsWithin(t, s, st, 30*time.Second)
}

func drainRecordsWithin(t *testing.T, s *Session, st *lang.Consume, d time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return drainRecordsCtx(t, ctx, s, st)
}

// drainRecordsCtx is drainRecordsWithin bounded by ctx.
func drainRecordsCtx(t *testing.T, ctx context.Context, s *Session, st *lang.Consume) int64 {
	t.Helper()
	res, err := s.Execute(ctx, st)
	require.NoError(t, err)
	defer res.Close()
	rs := res.(result.RecordStream)
	var n int64
	for {
		if _, ok := rs.NextRecord(); !ok {
			break
		}
		n++
	}
	require.NoError(t, res.Err())
	return n
}

// CONSUME's record path allocates nothing per record: fetch answers are
// decoded into one slab per batch and records are handed out in a reused
// result.Record. franz-go's decoder allocates for headers (a slice per
// record and a string per header key), as it does for any franz-go
// consumer; the rest of the count is kfake's own work on the same heap, so
// the bound is a little loose. Before the record path it was 6 more per
// record.
func TestConsumeAllocationsPerRecordStaySmall(t *testing.T) {
	for _, headers := range []int{0, 1} {
		t.Run(fmt.Sprintf("%d headers", headers), func(t *testing.T) {
			f := newFake(t)
			f.spread(t, "t", 12)
			const n = 30_000
			require.NoError(t, seedRecordsHeaders(ctxT(t), f.kcl, "t", 12, n, headers))
			limit := int64(n)
			st := &lang.Consume{Topic: "t", Limit: &limit}
			require.Equal(t, limit, drainRecords(t, f.sess, st)) // warm: connections, metadata

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			require.Equal(t, limit, drainRecords(t, f.sess, st))
			runtime.ReadMemStats(&after)
			per := float64(after.Mallocs-before.Mallocs) / n
			decoder := 0.0
			if headers > 0 {
				decoder = float64(1 + headers)
			}
			t.Logf("%d allocations for %d records: %.3f per record (franz-go's decoder: %.0f)", after.Mallocs-before.Mallocs, n, per, decoder)
			require.Less(t, per, decoder+0.25, "CONSUME allocates per record again")
		})
	}
}

// seededServerEnv makes the test binary a kfake cluster seeded with
// records (see TestMain), so that a memory test measures the reader's heap
// without the fake's stored records on it.
const seededServerEnv = "KQL_EXEC_TEST_SEEDED_KFAKE"

// runSeededServer starts a 3-broker kfake on loopback, writes the topics
// named in spec ("name:partitions:records,..."), prints "ready ADDRS" and
// serves until its standard input closes.
func runSeededServer(spec string) int {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.ListenFn(func(network, _ string) (netListener, error) {
		return listenLoopback(network)
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
		// Small batches, as a busy producer with a short linger writes them: a
		// Fetch answer is then close to the bytes asked for.
		kgo.ProducerBatchMaxBytes(16<<10))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, t := range strings.Split(spec, ",") {
		var name string
		var parts, n int
		if _, err := fmt.Sscanf(strings.ReplaceAll(t, ":", " "), "%s %d %d", &name, &parts, &n); err != nil {
			fmt.Fprintf(os.Stderr, "bad spec %q: %v\n", t, err)
			return 1
		}
		if err := c.CreateTopic(name, int32(parts), nil); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := seedRecords(ctx, cl, name, int32(parts), n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	cl.Close()
	fmt.Printf("ready %s\n", strings.Join(c.ListenAddrs(), ","))
	bufio.NewReader(os.Stdin).ReadString('\n') // EOF when the test ends
	return 0
}

// gcCycle is what one GC found live.
type gcCycle struct{ live uint64 }

// heapPerCycle runs fn and returns the live heap each GC that ended while
// it ran found, once per cycle.
func heapPerCycle(fn func()) []gcCycle {
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(samples)
	last := samples[1].Value.Uint64()
	var out []gcCycle
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(samples)
			if c := samples[1].Value.Uint64(); c != last {
				last = c
				out = append(out, gcCycle{samples[0].Value.Uint64()})
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	return out
}

// quantile is the q-quantile of the cycles' live heaps.
func quantile(cycles []gcCycle, q float64) uint64 {
	if len(cycles) == 0 {
		return 0
	}
	v := make([]uint64, len(cycles))
	for i, c := range cycles {
		v[i] = c.live
	}
	slices.Sort(v)
	return v[min(len(v)-1, int(q*float64(len(v))))]
}

// Memory is bounded by the bytes a read buffers, not by how much it reads:
// reading ten times the records does not raise the peak heap by more than
// 10%. The records live in another process (a kfake the test starts), so
// the heap measured is the reader's alone; a small read budget makes both
// reads many times larger than what is buffered.
func TestConsumeMemoryIsFlat(t *testing.T) {
	n := 100_000
	if raceBuild {
		n = 30_000
	}
	setup := ctxSetup(t)
	srv := exec.Command(os.Args[0], "-test.run=^$")
	srv.Env = append(os.Environ(), fmt.Sprintf("%s=small:8:%d,large:8:%d", seededServerEnv, n, 10*n))
	stdin, err := srv.StdinPipe()
	require.NoError(t, err)
	stdout, err := srv.StdoutPipe()
	require.NoError(t, err)
	srv.Stderr = os.Stderr
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			srv.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- line
	}()
	var addrs string
	select {
	case line := <-lines:
		var ok bool
		addrs, ok = strings.CutPrefix(strings.TrimSpace(line), "ready ")
		require.True(t, ok, "seeded kfake said %q", line)
	case <-setup.Done():
		// Seeding 1.1M records is only the machine's time: on a loaded
		// 2-core machine it has taken more than 2 minutes.
		t.Fatal("the seeded kfake did not start within the test binary's -timeout")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kafka.Dial(ctx, kafka.Config{Bootstrap: strings.Split(addrs, ",")})
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	s := NewSession(cl)
	s.ReadBudget = 512 << 10 // both reads are many budgets long

	// What is live when a GC looks varies with how full the budget is and
	// with the fetches in flight at that moment: its peak is a rare
	// coincidence (every lane's answer decoded while the budget is full),
	// whose height varies by more than 10% from run to run under load,
	// and the budget's fill moves with the machine's load, which changes
	// between reads. So the reads are compared on the median of what each
	// GC found live, not the peak: a heap that grows with the records read
	// raises the long read's median by half its growth, while one full
	// budget more or less at one GC moves it not at all. The small read
	// runs five times before the large one and five times after it, so
	// both see the machine's load of the same minutes.
	// The record path, and the encoding read (its lanes encode the records
	// and the budget holds the encoded bytes: consume_encoded.go).
	for _, path := range []struct {
		name  string
		drain func(*testing.T, context.Context, *Session, *lang.Consume) int64
	}{{"record path", drainRecordsCtx}, {"encoding read", drainEncodedCtx}} {
		read := func(topic string, want int64, times int) []gcCycle {
			st := &lang.Consume{Topic: topic, Limit: &want}
			runtime.GC()
			return heapPerCycle(func() {
				for range times {
					require.Equal(t, want, path.drain(t, setup, s, st)) // what is measured is memory, not time
				}
			})
		}
		for _, topic := range []string{"small", "large"} {
			warm := int64(n)
			path.drain(t, setup, s, &lang.Consume{Topic: topic, Limit: &warm}) // the first read of a topic sets up connections
		}
		small := read("small", int64(n), 5)
		large := read("large", int64(10*n), 1)
		small = append(small, read("small", int64(n), 5)...)
		// Enough GCs for a median: a read of 10n records runs hundreds.
		require.Greater(t, len(small), 20, "%s: too few GCs to judge the heap", path.name)
		require.Greater(t, len(large), 20, "%s: too few GCs to judge the heap", path.name)
		spread := func(c []gcCycle) string {
			return fmt.Sprintf("%d GCs, median %d KiB, p90 %d KiB, peak %d KiB", len(c), quantile(c, .5)>>10, quantile(c, .9)>>10, quantile(c, 1)>>10)
		}
		t.Logf("%s: live heap reading %d records ten times: %s; reading %d once: %s", path.name, n, spread(small), 10*n, spread(large))
		allowed := 1.10 * float64(quantile(small, .5))
		if raceBuild {
			// The race detector's heap here is about 1.4 MiB, of which one
			// fetch answer in flight is a tenth: allow one more.
			allowed += 256 << 10
		}
		require.LessOrEqual(t, float64(quantile(large, .5)), allowed, "%s: the live heap grows with the records read", path.name)
	}
}

// A Fetch answer that reaches its MaxBytes leaves out the partitions that
// did not fit (KIP-74: a first batch larger than the limit still comes
// whole). Batches much larger than a partition's share of a small read
// budget make that happen on almost every Fetch: no partition is reported
// as failed, none starves, and every record comes once, in row order.
func TestConsumeWithBatchesLargerThanTheBudget(t *testing.T) {
	f := newFake(t)
	const parts = 24 // eight per broker: most of a broker's partitions wait several turns
	f.spread(t, "t", parts)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(time.Second), kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerBatchCompression(kgo.NoCompression()))
	require.NoError(t, err)
	defer cl.Close()
	const n = parts * 300
	value := make([]byte, 1000)
	base := time.Now().Add(-time.Hour)
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: "t", Partition: int32(i % parts), Value: value, Key: []byte(strconv.Itoa(i)),
			Timestamp: base.Add(time.Duration(i) * time.Millisecond)})
	}
	require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr()) // one ~300 KB batch per partition

	f.sess.ReadBudget = 64 << 10
	limit := int64(n)
	res, err := f.sess.Execute(ctxT(t), &lang.Consume{Topic: "t", Limit: &limit})
	require.NoError(t, err)
	defer res.Close()
	rs := res.(result.RecordStream)
	var got int
	for {
		rec, ok := rs.NextRecord()
		if !ok {
			break
		}
		require.Equal(t, strconv.Itoa(got), string(rec.Key), "record %d out of order", got)
		got++
	}
	require.NoError(t, res.Err())
	require.Equal(t, n, got)
}

// A NEWEST page that covers every position of every partition holds every
// record, so it is read once, like FROM OLDEST, with no key scan first;
// and it is still the last n of FROM OLDEST.
func TestConsumeNewestCoveringEverythingReadsOnce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 6)
	const n = 3000
	require.NoError(t, seedRecords(ctxT(t), f.kcl, "t", 6, n))
	fetched := func(from lang.StartKind, limit int64) (int, []string) {
		f.trace.reset()
		res, err := f.sess.Execute(ctxT(t), &lang.Consume{Topic: "t", From: &lang.Start{Kind: from}, Limit: &limit})
		require.NoError(t, err)
		defer res.Close()
		var keys []string
		for {
			row, ok := res.Next()
			if !ok {
				break
			}
			keys = append(keys, string(row[3].([]byte)))
		}
		require.NoError(t, res.Err())
		total := 0
		for _, c := range f.trace.count("Fetch") {
			total += c
		}
		return total, keys
	}
	oldestFetches, all := fetched(lang.FromOldest, n)
	newestFetches, newest := fetched(lang.FromNewest, n)
	require.Equal(t, all, newest)
	require.LessOrEqual(t, newestFetches, oldestFetches+3, "FROM NEWEST LIMIT %d scanned keys before reading", n)
	// One record fewer than there are: the key scan is needed, and the
	// page is still the newest n-1.
	_, page := fetched(lang.FromNewest, n-1)
	require.Equal(t, all[1:], page)
}
