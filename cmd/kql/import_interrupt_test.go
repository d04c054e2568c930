package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestImportFromStdinCtrlCSaysWhatWasCommitted: Ctrl-C in the middle of
// `PRODUCE INTO t FROM STDIN` (a pipe that is still open) exits 130 with an
// error that says which input lines were committed and where to resume, as
// the README promises; feeding the lines after them finishes the job with
// every line exactly once. (The shell used to replace the import's whole
// report with a bare "cancelled (Ctrl-C)", so the user could not tell what
// was in the topic.)
func TestImportFromStdinCtrlCSaysWhatWasCommitted(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		topic := kafkatest.TopicName(t)
		kafkatest.CreateTopic(t, b, topic, 3, 3, nil)
		bootstrap := strings.Join(b.Bootstrap(), ",")
		const first, rest = 10_000, 10 // one stream transaction, then the resume

		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close() // ends the reader kql leaves blocked on the pipe

		interrupt := make(chan struct{})
		world := realWorld()
		world.statementContext = func(parent context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(parent)
			go func() {
				select {
				case <-interrupt: // Ctrl-C
					cancel()
				case <-ctx.Done():
				}
			}()
			return ctx, cancel
		}
		var out, errOut syncBuffer
		ios := &IOStreams{In: pr, Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
		done := make(chan int, 1)
		go func() {
			done <- run(context.Background(), ios, []string{"-b", bootstrap, "-e",
				"PRODUCE INTO " + topic + " FROM STDIN FORMAT lines"}, world)
		}()

		var lines strings.Builder
		for i := 1; i <= first; i++ {
			fmt.Fprintf(&lines, "line-%05d\n", i)
		}
		if _, err := pw.WriteString(lines.String()); err != nil {
			t.Fatal(err)
		}
		// The pipe stays open: the import waits for more. Ctrl-C once
		// a read_committed reader sees every line written so far.
		if n := len(readCommitted(t, b, topic, first)); n != first {
			t.Fatalf("a read_committed reader sees %d records before Ctrl-C: want the %d written", n, first)
		}
		close(interrupt)
		var code int
		select {
		case code = <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the import did not end within 30 s of Ctrl-C")
		}
		stderr := errOut.String()
		t.Logf("after Ctrl-C: exit %d\n%s", code, stderr)
		if code != exitInterrupted {
			t.Errorf("exit %d after Ctrl-C: want %d\n%s", code, exitInterrupted, stderr)
		}
		for _, want := range []string{
			"cancelled (Ctrl-C)",
			fmt.Sprintf("input lines 1-%d were committed", first),
			fmt.Sprintf("resume with the lines after %d", first),
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("the error does not say %q:\n%s", want, stderr)
			}
		}

		// The resume: the lines after the last one committed.
		lines.Reset()
		for i := first + 1; i <= first+rest; i++ {
			fmt.Fprintf(&lines, "line-%05d\n", i)
		}
		var out2, errOut2 syncBuffer
		if code := Main([]string{"-b", bootstrap, "-q", "-e", "PRODUCE INTO " + topic + " FROM STDIN FORMAT lines"},
			strings.NewReader(lines.String()), &out2, &errOut2); code != 0 {
			t.Fatalf("the resume exited %d:\n%s", code, errOut2.String())
		}
		seen := map[string]int{}
		for _, v := range readCommitted(t, b, topic, first+rest) {
			seen[v]++
		}
		for i := 1; i <= first+rest; i++ {
			v := fmt.Sprintf("line-%05d", i)
			if seen[v] != 1 {
				t.Errorf("%s is in the topic %d times: want once", v, seen[v])
			}
			delete(seen, v)
		}
		if len(seen) > 0 {
			t.Errorf("the topic holds records no input line wrote: %v", seen)
		}
	})
}

// readCommitted reads topic from the start as a read_committed consumer
// until it has want records, or 20 s have passed, and returns the values.
func readCommitted(t *testing.T, b kafkatest.Backend, topic string, want int) []string {
	t.Helper()
	cl := kafkatest.Client(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var values []string
	for len(values) < want && ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	}
	// A record twice would come now.
	more, stop := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer stop()
	cl.PollFetches(more).EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
	return values
}
