package kafkatest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Tool is a long-running Kafka tool (a console consumer) started by
// StartTool; it is stopped when the test ends.
type Tool struct {
	done chan struct{}
	err  error
	out  string // its output file: stdout and stderr
	stop func()
}

// StartTool starts one of Kafka's tools, as RunTool does, and leaves it
// running; its output goes to a file in the test's temp directory (Output
// reads it). It is killed, and waited for, at the end of t (or when Stop
// is called), so no JVM outlives the test; if the test binary dies
// outright, the parent-death signal takes the tool with it.
func (r *Real) StartTool(t testing.TB, mainClass string, args ...string) (*Tool, error) {
	ctx, cancel := context.WithCancel(context.Background())
	out := filepath.Join(t.TempDir(), "tool.log")
	f, err := os.Create(out)
	if err != nil {
		cancel()
		return nil, err
	}
	defer f.Close() // the child has its own descriptor
	cmd := r.toolCmd(ctx, mainClass, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Stop asks the tool to end as Ctrl-C would (a consumer's shutdown
	// hook then leaves its group at once, instead of the coordinator
	// waiting out its session), and kills it 5 s later if it has not.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if err := startProcess(cmd); err != nil {
		cancel()
		return nil, fmt.Errorf("starting %s: %w", mainClass, err)
	}
	tool := &Tool{done: make(chan struct{}), out: out}
	go func() {
		tool.err = cmd.Wait()
		close(tool.done)
	}()
	tool.stop = func() { cancel(); <-tool.done }
	t.Cleanup(tool.Stop)
	return tool, nil
}

// Stop kills the tool and waits for it to exit.
func (tl *Tool) Stop() { tl.stop() }

// Output is what the tool has printed so far.
func (tl *Tool) Output() string {
	b, _ := os.ReadFile(tl.out)
	return string(b)
}
