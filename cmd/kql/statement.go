package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// outcome of one statement.
type outcome int

const (
	succeeded outcome = iota
	partial           // rows were printed but some sources did not answer
	failed
)

// statementError is a statement that failed, with the text that names it.
type statementError struct {
	stmt string // the statement, formatted, without its ';'
	err  error
	who  string // the principal kql is authenticated as, for authorization failures
}

func (e *statementError) Error() string {
	msg := e.stmt + ": " + describeError(e.err)
	if e.who != "" && (kafka.IsAuthorization(e.err) || strings.Contains(msg, "_AUTHORIZATION_FAILED")) {
		msg += " (kql is authenticated as " + e.who + ")"
	}
	return msg
}
func (e *statementError) Unwrap() error { return e.err }

// execute runs one statement and renders its result to the current output.
// ctx is cancelled by Ctrl-C; --timeout is applied here, per statement.
func (a *app) execute(ctx context.Context, stmt lang.Statement) (outcome, error) {
	if a.opts.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, a.opts.timeout, errStatementTimeout{a.opts.timeout})
		defer cancel()
	}
	// Redacted: this text names the statement in errors, and a secret
	// given to ALTER ... SET is never echoed.
	name := strings.TrimSuffix(strings.TrimSpace(formatStatement(exec.Redacted(stmt))), ";")
	if err := a.refusal(stmt); err != nil { // read-only: before anything is sent
		a.failed = true
		return failed, &statementError{stmt: name, err: err}
	}
	// Only while a statement runs: the completer's background refreshes
	// must not print over the prompt. The waits are kept so that a
	// statement cut off by --timeout or Ctrl-C can name the brokers that
	// had not answered.
	var waits unanswered
	if a.conn.setTrace != nil {
		a.conn.setTrace(func(ev kafka.TraceEvent) {
			if a.tracing {
				a.printTrace(ev)
			}
			waits.observe(ev)
		})
		defer a.conn.setTrace(nil)
	}
	// prog is set before any row is read, on this goroutine, which is the
	// one that reads rows and so calls the warning back.
	var prog *progress
	if a.conn.setOnWarning != nil {
		a.conn.setOnWarning(func(msg string) {
			// A FOLLOW warns while its progress line may be up: erase it
			// first, or the warning is written onto its end.
			prog.interrupt(func() { a.warnf("%s", msg) })
		})
		defer a.conn.setOnWarning(nil)
	}
	// Registry requests are HTTP, not Kafka: \trace shows them too.
	if a.reg != nil && a.tracing {
		a.reg.SetTrace(a.printRegistryTrace)
		defer a.reg.SetTrace(nil)
	}
	start := time.Now()
	moveCtx, stopMove := a.watchMove(ctx, stmt)
	res, err := a.conn.exec.Execute(moveCtx, stmt)
	stopMove()
	if err != nil {
		a.failed = true
		return failed, &statementError{name, waits.explain(contextCause(ctx, err)), a.who()}
	}
	defer res.Close()
	if c, isConsume := stmt.(*lang.Consume); isConsume {
		if p, ok := exec.PagerOf(res); ok {
			a.pager, a.pagerFollow = p, false
			a.pagerForward = c.From == nil || (c.From.Kind != lang.FromNewest && c.From.Kind != lang.FromTail)
		} else if c.Follow {
			// A FOLLOW has no pages: \next must not page the CONSUME
			// before it, which may read another topic.
			a.pager, a.pagerFollow = nil, true
		}
	}

	out := a.out
	var pw *pagingWriter
	if a.pages(stmt) {
		pw = a.newPagingWriter()
		out = pw
	}
	prog = a.startProgress(res)
	draw := renderResult
	if a.sink != nil {
		draw = a.sink // \watch draws its trends
	}
	if pw != nil {
		pw.onStart, pw.around = prog.stop, prog.interrupt
	}
	rows, err := draw(prog.writer(out), prog.result(), a.renderOptions())
	if pw != nil && pw.Close() && !result.IsPartial(err) {
		err = nil // the pager was quit (q in less): the rest was not wanted
	}
	prog.stop()
	elapsed := time.Since(start)

	for _, note := range res.Stats().Notices() {
		a.noticef("%s", note)
	}
	for _, warning := range res.Stats().Warnings() {
		a.warnf("%s", warning)
	}
	if a.timing {
		fmt.Fprintf(a.stderr, "Time: %s (%d %s)\n", formatDuration(elapsed), rows, plural(int(rows), "row", "rows"))
	}
	if a.complete != nil {
		a.complete.refresh() // a CREATE or DROP may have changed the names
	}
	switch {
	case err == nil:
		return succeeded, nil
	case result.IsPartial(err):
		a.failed = true
		return partial, &statementError{name, err, a.who()}
	default:
		a.failed = true
		return failed, &statementError{name, waits.explain(contextCause(ctx, err)), a.who()}
	}
}

func (a *app) renderOptions() renderOptions {
	o := renderOptions{Format: a.format, Footer: true, BatchSize: 1000}
	if a.expanded && a.format == render.Table {
		o.Format = render.Expanded
	}
	if a.outFile == nil {
		o.Color = a.colorOut
		if a.ios.OutTTY {
			o.Width = a.ios.Width()
		}
	}
	return o
}

// errStatementTimeout is the cause of a statement's context when --timeout hit.
type errStatementTimeout struct{ d time.Duration }

func (e errStatementTimeout) Error() string {
	return fmt.Sprintf("cancelled after --timeout %s", e.d)
}

var errCancelled = errors.New("cancelled (Ctrl-C)")

// contextCause replaces a context error with why the context ended: the
// per-statement timeout or Ctrl-C. A bare context error becomes that cause;
// an error that wraps one keeps the rest of what it says (an import or an
// INSERT cut off by Ctrl-C reports what it committed and how to resume),
// with the context error's words replaced by the cause.
func contextCause(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var cause error = errCancelled
	if c := context.Cause(ctx); c != nil {
		var t errStatementTimeout
		if errors.As(c, &t) {
			cause = t
		}
	}
	if msg := err.Error(); msg != context.Canceled.Error() && msg != context.DeadlineExceeded.Error() {
		return &causedError{err: err, cause: cause}
	}
	return cause
}

// causedError is a statement's error that wraps a context error, told with
// the cause of the context's end in place of the context error's words.
type causedError struct{ err, cause error }

func (e *causedError) Error() string {
	msg, cause := e.err.Error(), e.cause.Error()
	for _, words := range []string{
		"cancelled: " + context.Canceled.Error(), // exec's "cancelled: %w"
		"cancelled: " + context.DeadlineExceeded.Error(),
		context.Canceled.Error(),
		context.DeadlineExceeded.Error(),
	} {
		if strings.Contains(msg, words) {
			return strings.Replace(msg, words, cause, 1)
		}
	}
	return msg + " (" + cause + ")"
}

func (e *causedError) Unwrap() []error { return []error{e.err, e.cause} }

func describeError(err error) string {
	return err.Error()
}

// who is the principal named in authorization failures: the first thing
// an operator asks when granting an ACL.
func (a *app) who() string {
	if a.sett == nil {
		return ""
	}
	return a.sett.principal()
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	default:
		return d.Round(time.Millisecond).String()
	}
}

// printTrace is the \trace hook: one line per broker request, on stderr.
func (a *app) printTrace(ev kafka.TraceEvent) {
	var b strings.Builder
	if ev.Broker < 0 {
		// A request to a seed, before the client knew which broker it is
		// (kgo numbers seeds from math.MinInt32): no broker id to show.
		fmt.Fprintf(&b, "trace: %s -> bootstrap address (%s)", ev.API, ev.Addr)
	} else {
		fmt.Fprintf(&b, "trace: %s -> broker %d (%s)", ev.API, ev.Broker, ev.Addr)
	}
	if len(ev.Items) > 0 {
		const show = 8
		items := ev.Items
		more := ""
		if len(items) > show {
			more = fmt.Sprintf(" +%d more", len(items)-show)
			items = items[:show]
		}
		fmt.Fprintf(&b, " [%s%s]", strings.Join(items, " "), more)
	}
	fmt.Fprintf(&b, " %s", formatDuration(ev.Duration))
	if ev.Err != nil {
		fmt.Fprintf(&b, " error: %v", ev.Err)
	}
	b.WriteByte('\n')
	a.stderr.Write([]byte(b.String()))
}

func (a *app) printRegistryTrace(ev schema.TraceEvent) {
	var b strings.Builder
	fmt.Fprintf(&b, "trace: registry %s %s -> %s", ev.Method, ev.Path, ev.Host)
	if ev.Status != 0 {
		fmt.Fprintf(&b, " %d", ev.Status)
	}
	fmt.Fprintf(&b, " %s", formatDuration(ev.Duration))
	if ev.Err != nil {
		fmt.Fprintf(&b, " error: %v", ev.Err)
	}
	b.WriteByte('\n')
	a.stderr.Write([]byte(b.String()))
}

// unanswered collects the requests of one statement that ended because
// the statement's context did (a broker that never answered).
type unanswered struct {
	mu     sync.Mutex
	byAddr map[string]*waitedBroker
	order  []string
}

type waitedBroker struct {
	id     int32
	apis   []string
	waited time.Duration
}

func (u *unanswered) observe(ev kafka.TraceEvent) {
	if ev.Err == nil || !(errors.Is(ev.Err, context.DeadlineExceeded) || errors.Is(ev.Err, context.Canceled)) {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byAddr == nil {
		u.byAddr = map[string]*waitedBroker{}
	}
	w, ok := u.byAddr[ev.Addr]
	if !ok {
		w = &waitedBroker{id: ev.Broker}
		u.byAddr[ev.Addr] = w
		u.order = append(u.order, ev.Addr)
	}
	if !slices.Contains(w.apis, ev.API) {
		w.apis = append(w.apis, ev.API)
	}
	w.waited = max(w.waited, ev.Duration)
}

// explain adds the brokers that had not answered to a timeout or a Ctrl-C.
func (u *unanswered) explain(err error) error {
	var t errStatementTimeout
	if !errors.As(err, &t) && !errors.Is(err, errCancelled) {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.order) == 0 {
		return err
	}
	var parts []string
	for _, addr := range u.order {
		w := u.byAddr[addr]
		who := "broker " + strconv.Itoa(int(w.id)) + " (" + addr + ")"
		if w.id < 0 {
			who = "bootstrap address " + addr
		}
		parts = append(parts, fmt.Sprintf("%s: %s, waited %s", who, strings.Join(w.apis, ", "), w.waited.Round(100*time.Millisecond)))
	}
	return fmt.Errorf("%w; still waiting for an answer from %s (a hung or overloaded broker?)", err, strings.Join(parts, "; "))
}
