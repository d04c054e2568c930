package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/watch"
)

// metaCommand is one backslash command of the REPL. They live in one table
// so that \? , completion and dispatch can never disagree.
type metaCommand struct {
	name string // without the backslash
	args string // argument synopsis for \?
	help string
	run  func(a *app, ctx context.Context, arg string) error
}

func metaCommands() []metaCommand {
	cmds := []metaCommand{
		{"?", "", "list meta-commands", (*app).metaList},
		{"help", "[STATEMENT]", "statement syntax and examples; how bytes are shown", (*app).metaHelp},
		{"q", "", "quit (Ctrl-D on an empty line does the same)", func(*app, context.Context, string) error { return errQuit }},
		{"format", "[NAME]", "output format: " + strings.Join(formatNames, ", ") + " (no NAME: show it)", (*app).metaFormat},
		{"x", "[on|off]", "toggle expanded output (one column | value block per row) for the table format", (*app).metaExpanded},
		{"timing", "[on|off]", "toggle printing each statement's run time", (*app).metaTiming},
		{"trace", "[on|off]", "toggle printing each broker request (api, broker, partitions or groups, duration, error)", (*app).metaTrace},
		{"pager", "[on|off|always]", "results taller than the terminal go through $KQL_PAGER or $PAGER (default less -FRSX): on (the default), off, always; no argument toggles on and off", (*app).metaPager},
		{"o", "[FILE]", "send results to FILE; \\o alone: back to stdout", (*app).metaOutput},
		{"i", "FILE", "run the statements in FILE", (*app).metaInclude},
		{"next", "", "the next page of the last CONSUME: older after FROM NEWEST/TAIL, newer after a forward read (prints the statement it runs)", (*app).metaNext},
		{"watch", "[SECONDS]", "re-run the last statement every SECONDS (default 2) until Ctrl-C, with a sparkline and a rate per number and a status per consumer group", (*app).metaWatch},
		{"set", "[confirm on|off | schema.TOPIC.value SPEC|off]", "session settings; confirm: ask before DROP TOPIC, DELETE GROUP, GRANT, DENY and the EXECUTE forms (default on); schema.TOPIC.key|value: decode and encode that side with a local schema, SPEC protobuf:MESSAGE or avro:FILE.avsc", (*app).metaSet},
		{"connect", "NAME|BOOTSTRAP", "connect with the cluster profile NAME, or to host:port,... with the same TLS and SASL settings; on failure the old connection stays", (*app).metaConnect},
		{"clusters", "", "list the cluster profiles: name, bootstrap, security, read-only; * marks the current one", (*app).metaClusters},
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	return cmds
}

// runMeta runs one meta-command line such as `\format json`.
func (a *app) runMeta(ctx context.Context, line string) error {
	name, arg, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), `\`), " ")
	arg = strings.TrimSpace(arg)
	arg = strings.TrimSuffix(arg, ";") // \x; is a common slip
	name = strings.TrimSuffix(name, ";")
	for _, m := range metaCommands() {
		if m.name == name {
			return m.run(a, ctx, strings.TrimSpace(arg))
		}
	}
	return fmt.Errorf(`unknown meta-command \%s: \? lists the meta-commands`, name)
}

func (a *app) metaList(context.Context, string) error {
	tw := tabwriter.NewWriter(a.stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Meta-commands (run on Enter; statements end with ;):")
	for _, m := range metaCommands() {
		fmt.Fprintf(tw, "  \\%s %s\t%s\n", m.name, m.args, m.help)
	}
	return tw.Flush()
}

const bytesHelp = `How keys, values and header values are shown:
  Bytes that are valid UTF-8 are shown as text. Any other bytes are shown as a
  KafkaQL hex literal, x'…' (for example x'00ff'), which you can paste back
  into a PRODUCE. A text value that itself looks like x'…' is shown in hex as
  well, so what you see is never ambiguous. The same rule holds in every
  output format. A missing key or a tombstone's value is NULL (null in JSON),
  never an empty string.`

func (a *app) metaHelp(_ context.Context, arg string) error {
	entries := statementHelp()
	if arg != "" {
		var match []helpEntry
		want := strings.Join(strings.Fields(strings.ToUpper(strings.TrimSuffix(arg, ";"))), " ")
		switch { // aliases lead to the statement they stand for
		case want == "DESC" || strings.HasPrefix(want, "DESC "):
			want = "DESCRIBE" + strings.TrimPrefix(want, "DESC")
		case want == "SELECT" || strings.HasPrefix(want, "SELECT "):
			want = "CONSUME"
		case want == "SHOW CONSUMERS":
			want = "SHOW GROUPS"
		}
		for _, e := range entries {
			name := strings.ToUpper(e.Name)
			if name == want {
				match = []helpEntry{e}
				break
			}
			if strings.HasPrefix(name, want) {
				match = append(match, e)
			}
		}
		if len(match) == 0 {
			return fmt.Errorf(`no statement named %q: \help lists them`, arg)
		}
		for i, e := range match {
			if i > 0 {
				fmt.Fprintln(a.stderr)
			}
			fmt.Fprintf(a.stderr, "%s\n  syntax:  %s\n  example: %s;\n", e.Name, strings.ReplaceAll(e.Syntax, "\n", "\n  "), e.Example)
		}
		return nil
	}
	tw := tabwriter.NewWriter(a.stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Statements (each ends with ;):")
	for _, e := range entries {
		first, _, _ := strings.Cut(e.Syntax, "\n") // details are for \help NAME
		fmt.Fprintf(tw, "  %s\t%s\n", e.Name, first)
	}
	tw.Flush()
	fmt.Fprintln(a.stderr, "\\help STATEMENT shows one statement with an example; \\? lists meta-commands.")
	fmt.Fprintln(a.stderr)
	fmt.Fprintln(a.stderr, bytesHelp)
	return nil
}

func (a *app) metaFormat(_ context.Context, arg string) error {
	if arg == "" {
		fmt.Fprintf(a.stderr, "Output format is %s.\n", a.format)
		return nil
	}
	f, err := parseFormat(arg)
	if err != nil {
		return fmt.Errorf(`\format: %v`, err)
	}
	a.format = f
	fmt.Fprintf(a.stderr, "Output format is %s.\n", f)
	return nil
}

// toggle applies [on|off] to a setting; no argument flips it.
func toggle(cmd string, v *bool, arg string) error {
	switch strings.ToLower(arg) {
	case "":
		*v = !*v
	case "on", "true", "1":
		*v = true
	case "off", "false", "0":
		*v = false
	default:
		return fmt.Errorf(`\%s: want on or off, got %q`, cmd, arg)
	}
	return nil
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

func (a *app) metaExpanded(_ context.Context, arg string) error {
	if err := toggle("x", &a.expanded, arg); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "Expanded display is %s.\n", onOff(a.expanded))
	return nil
}

func (a *app) metaTiming(_ context.Context, arg string) error {
	if err := toggle("timing", &a.timing, arg); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "Timing is %s.\n", onOff(a.timing))
	return nil
}

func (a *app) metaTrace(_ context.Context, arg string) error {
	if err := toggle("trace", &a.tracing, arg); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "Trace is %s.\n", onOff(a.tracing))
	return nil
}

func (a *app) metaOutput(_ context.Context, arg string) error {
	if a.outFile != nil {
		if err := a.outFile.Close(); err != nil {
			a.errorf(`\o: closing %s: %v`, a.outName, err)
		}
		a.outFile, a.outName, a.out = nil, "", a.ios.Out
	}
	if arg == "" {
		fmt.Fprintln(a.stderr, "Results go to stdout.")
		return nil
	}
	f, err := os.OpenFile(arg, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf(`\o: %w`, err)
	}
	a.outFile, a.outName, a.out = f, arg, f
	fmt.Fprintf(a.stderr, "Results go to %s (\\o alone: back to stdout).\n", arg)
	return nil
}

func (a *app) metaInclude(ctx context.Context, arg string) error {
	if arg == "" {
		return fmt.Errorf(`\i needs a file name: \i FILE`)
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return fmt.Errorf(`\i: %w`, err)
	}
	s := &script{name: arg, text: scriptText(data)}
	if !a.parseScript(s) {
		return fmt.Errorf(`\i %s: nothing was run: fix the syntax errors above`, arg)
	}
	for _, ps := range s.stmts {
		sctx, stop := a.rt.statementContext(ctx)
		out, err := a.execute(sctx, ps.stmt)
		cancelled := sctx.Err() != nil
		stop()
		if err == nil {
			continue
		}
		a.errorf("%s:%d: %v", s.name, ps.src.Line, err)
		if cancelled || (out == failed && !a.opts.keepGoing) {
			return fmt.Errorf(`\i %s: stopped at line %d`, arg, ps.src.Line)
		}
	}
	return nil
}

func (a *app) metaNext(ctx context.Context, _ string) error {
	if a.pager == nil && a.pagerFollow {
		return fmt.Errorf(`\next: the last CONSUME was a FOLLOW, which has no pages: run it without FOLLOW to page through it`)
	}
	if a.pager == nil {
		return fmt.Errorf(`\next pages back through the last CONSUME, and there is none yet`)
	}
	next, ok := a.pager.NextPage()
	if !ok {
		if a.pagerForward {
			return fmt.Errorf(`\next: no further page: the last CONSUME reached the end of every partition it read (as the end was when it started)`)
		}
		return fmt.Errorf(`\next: no older page: the last CONSUME reached the oldest record of every partition it read`)
	}
	fmt.Fprintln(a.stderr, runnable(next))
	a.runInteractive(ctx, next)
	return nil
}

func (a *app) metaConnect(ctx context.Context, arg string) error {
	bootstrap := splitBootstrap(arg)
	if len(bootstrap) == 0 {
		return fmt.Errorf(`\connect needs a bootstrap address or a cluster profile: \connect host:port[,host:port...] or \connect NAME (\clusters lists the profiles)`)
	}
	if len(bootstrap) == 1 && !strings.Contains(arg, ":") {
		return a.connectProfile(ctx, arg) // a name, not host:port
	}
	cfg := a.kcfg
	cfg.Bootstrap = bootstrap
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, err := a.rt.dial(dctx, cfg)
	if err != nil {
		if se := kafka.AsSecurityError(err); se != nil && a.sett != nil {
			return fmt.Errorf(`\connect: %s (still connected to %s)`, a.sett.securityMessage(se), strings.Join(a.kcfg.Bootstrap, ","))
		}
		return fmt.Errorf(`\connect: %w (still connected to %s)`, err, strings.Join(a.kcfg.Bootstrap, ","))
	}
	a.kcfg = cfg
	// Another cluster with the profile's settings: the prompt and
	// \clusters no longer name the profile, but its read-only guard holds.
	a.profile = nil
	a.setConnection(conn)
	if a.ios.ErrTTY {
		a.banner(ctx)
	} else {
		a.noticef("connected to %s", strings.Join(bootstrap, ","))
	}
	return nil
}

// metaWatch re-runs the last statement every interval until Ctrl-C: the
// screen is cleared first, a header line names the statement, the interval
// and the time, and a table result is drawn with its trends (watch
// package): a sparkline and a rate per number, a status per group. It
// refuses every statement that writes (exec.WritesToCluster), and output
// that is not the terminal: it redraws a screen.
func (a *app) metaWatch(ctx context.Context, arg string) error {
	interval := 2 * time.Second
	if arg != "" {
		secs, err := strconv.ParseFloat(arg, 64)
		if err != nil || secs <= 0 || secs > 86400 || math.IsNaN(secs) {
			return fmt.Errorf(`\watch: want a number of seconds between 0 and 86400, as in \watch 5, got %q`, arg)
		}
		interval = time.Duration(secs * float64(time.Second))
	}
	if a.outFile != nil {
		return fmt.Errorf(`\watch redraws the terminal, and output goes to %s (\o): run \o to send it back to the terminal, then \watch`, a.outName)
	}
	if !a.ios.OutTTY {
		return fmt.Errorf(`\watch redraws a terminal, and output is not one: run kql in a terminal, or repeat the statement from the shell (while sleep 2; do kql -e '...'; done)`)
	}
	stmt := a.lastStmt
	if stmt == nil {
		return fmt.Errorf(`\watch re-runs the last statement, and there is none yet: run one, then \watch`)
	}
	inner := stmt
	if e, ok := stmt.(*lang.Explain); ok {
		inner = e.Stmt
	}
	// Every statement that writes (exec's one table, which the read-only
	// guard uses too), not a list of its own: a GRANT or a DELETE RECORDS
	// ... EXECUTE repeated every 2 s, never asked about again, is as bad
	// as a PRODUCE. EXPLAIN only plans, whatever it explains.
	if exec.WritesToCluster(stmt) {
		text := strings.TrimSuffix(strings.TrimSpace(formatStatement(exec.Redacted(stmt))), ";")
		what, hint := strings.Fields(text)[0], ""
		if strings.HasSuffix(text, " EXECUTE") {
			what, hint = text, " (its dry run, without EXECUTE, can be watched)"
		}
		return fmt.Errorf(`\watch does not repeat %s: it would write to the cluster every time%s`, what, hint)
	}
	if c, ok := inner.(*lang.Consume); ok && c.Follow {
		return fmt.Errorf(`\watch does not repeat a FOLLOW: it never ends by itself`)
	}
	now := a.watchNow
	if now == nil {
		now = time.Now
	}
	wctx, stop := a.rt.statementContext(ctx)
	defer stop()
	name := strings.TrimSuffix(formatStatement(stmt), ";")
	every := strconv.FormatFloat(interval.Seconds(), 'f', -1, 64) + "s"
	if a.format == render.Table && !a.expanded {
		tr := watch.NewTracker()
		a.sink = func(w io.Writer, res result.Result, _ renderOptions) (int64, error) {
			return a.drawTrends(w, tr, now(), res)
		}
		defer func() { a.sink = nil }()
	}
	for {
		fmt.Fprint(a.out, "\x1b[H\x1b[2J") // clear the screen, cursor home
		fmt.Fprintf(a.stderr, "Every %s: %s    %s (Ctrl-C stops)\n", every, name, now().Format("2006-01-02 15:04:05"))
		out, err := a.execute(wctx, stmt)
		if wctx.Err() != nil {
			return nil // Ctrl-C: back to the prompt
		}
		if err != nil {
			if out == partial {
				a.warnf("%v", err)
			} else {
				return fmt.Errorf(`\watch stopped: %w`, err)
			}
		}
		t := time.NewTimer(interval)
		select {
		case <-wctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}
