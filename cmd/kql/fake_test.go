package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// fakeExec answers statements from a table keyed by statement type, records
// what ran, and can emit trace events as a real session would.
type fakeExec struct {
	mu      sync.Mutex
	answers map[string]func(ctx context.Context, stmt lang.Statement) (result.Result, error)
	ran     []lang.Statement
	topics  []string
	groups  []string
	trace   func(kafka.TraceEvent)
}

func stmtKind(s lang.Statement) string { return reflect.TypeOf(s).Elem().Name() }

func (f *fakeExec) Execute(ctx context.Context, stmt lang.Statement) (result.Result, error) {
	f.mu.Lock()
	f.ran = append(f.ran, stmt)
	ans := f.answers[stmtKind(stmt)]
	tr := f.trace
	f.mu.Unlock()
	if tr != nil {
		tr(kafka.TraceEvent{API: "Metadata", Broker: 2, Addr: "127.0.0.1:9093", Items: []string{"orders/0", "orders/3"}})
	}
	if ans == nil {
		return nil, fmt.Errorf("fake: no answer for %s", stmtKind(stmt))
	}
	return ans(ctx, stmt)
}

func (f *fakeExec) Topics(context.Context) ([]string, error) { return f.topics, nil }
func (f *fakeExec) Groups(context.Context) ([]string, error) { return f.groups, nil }

func (f *fakeExec) ranKinds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, s := range f.ran {
		if _, banner := s.(*lang.ShowCluster); banner {
			continue
		}
		out = append(out, stmtKind(s))
	}
	return out
}

func (f *fakeExec) setTrace(fn func(kafka.TraceEvent)) {
	f.mu.Lock()
	f.trace = fn
	f.mu.Unlock()
}

// slice answers with fixed rows.
func slice(cols []result.Column, rows ...result.Row) func(context.Context, lang.Statement) (result.Result, error) {
	return func(context.Context, lang.Statement) (result.Result, error) {
		return result.NewSlice(cols, rows), nil
	}
}

func failWith(err error) func(context.Context, lang.Statement) (result.Result, error) {
	return func(context.Context, lang.Statement) (result.Result, error) { return nil, err }
}

var topicCols = []result.Column{{Name: "topic", Type: result.String}, {Name: "partitions", Type: result.Int}}

func newFakeExec() *fakeExec {
	return &fakeExec{
		answers: map[string]func(context.Context, lang.Statement) (result.Result, error){
			"ShowTopics": slice(topicCols, result.Row{"orders", int64(6)}, result.Row{"payments", int64(3)}),
			"ShowGroups": slice([]result.Column{{Name: "group", Type: result.String}}, result.Row{"billing"}),
			"ShowCluster": slice([]result.Column{{Name: "property", Type: result.String}, {Name: "value", Type: result.String}},
				result.Row{"cluster_id", "fake-cluster"}, result.Row{"brokers", "3"}),
			"DescribeGroup": failWith(errors.New(`no consumer group named "x"`)),
		},
		topics: []string{"orders", "order-events", "payments"},
		groups: []string{"billing", "shipping"},
	}
}

// harness runs the real command in-process with a fake cluster.
type harness struct {
	t       *testing.T
	exec    *fakeExec
	dials   []kafka.Config
	dialErr error
	// registries are the schema registries connections were given, one
	// per connection made while one was configured.
	registries []*schema.Registry
	// playgroundRegistry is the registry URL the fake playground reports.
	playgroundRegistry string
	// playgroundTraffic is the fake playground's startTraffic (nil: none).
	playgroundTraffic func() error
	env               map[string]string
	stdin             string
	tty               bool // stdin, stdout and stderr are terminals
	interrupt         chan struct{}
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, exec: newFakeExec(), env: map[string]string{}}
}

type runResult struct {
	code           int
	stdout, stderr string
}

func (h *harness) run(args ...string) runResult {
	h.t.Helper()
	return h.runWithDial(args, nil)
}

// runWithDial runs with a custom dial; nil uses the harness's fake.
func (h *harness) runWithDial(args []string, dial func(kafka.Config) (*connection, error)) runResult {
	h.t.Helper()
	var out, errOut bytes.Buffer
	ios := &IOStreams{
		In: strings.NewReader(h.stdin), Out: &out, ErrOut: &errOut,
		InTTY: h.tty, OutTTY: h.tty, ErrTTY: h.tty,
		Width:  func() int { return 100 },
		Getenv: func(k string) string { return h.env[k] },
	}
	rt := world{
		dial: func(ctx context.Context, cfg kafka.Config) (*connection, error) {
			h.dials = append(h.dials, cfg)
			if dial != nil {
				return dial(cfg)
			}
			if h.dialErr != nil {
				return nil, h.dialErr
			}
			return &connection{exec: h.exec, setTrace: h.exec.setTrace, close: func() {}, bootstrap: cfg.Bootstrap,
				setRegistry: func(r *schema.Registry) { h.registries = append(h.registries, r) }}, nil
		},
		playground: func(context.Context) (*playgroundRun, error) {
			return &playgroundRun{bootstrap: []string{"127.0.0.1:1111"}, registryURL: h.playgroundRegistry, stop: func() {}, startTraffic: h.playgroundTraffic}, nil
		},
		statementContext: func(parent context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(parent)
			if h.interrupt != nil {
				go func() {
					select {
					case <-h.interrupt:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			return ctx, cancel
		},
	}
	code := run(context.Background(), ios, args, rt)
	return runResult{code, out.String(), errOut.String()}
}

func (r runResult) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}
