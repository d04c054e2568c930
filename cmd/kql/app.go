package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"

	"github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/playground"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

// Exit codes, as documented in --help and the README.
const (
	exitOK          = 0
	exitFailed      = 1 // a statement failed or a result was partial
	exitUsage       = 2 // usage or syntax error
	exitUnreachable = 3 // the cluster could not be reached at all
	exitInterrupted = 130
)

// Main runs kql with the given arguments and streams and returns the process
// exit code. main only calls os.Exit with it, which lets tests run the real
// command in-process.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(context.Background(), systemStreams(stdin, stdout, stderr), args, realWorld())
}

// executor is what the shell needs of an exec.Session; tests substitute a
// fake one to exercise formats and meta-commands without a cluster.
type executor interface {
	Execute(ctx context.Context, stmt lang.Statement) (result.Result, error)
	Topics(ctx context.Context) ([]string, error)
	Groups(ctx context.Context) ([]string, error)
}

// connection is an open cluster and the session over it.
type connection struct {
	exec     executor
	setTrace func(func(kafka.TraceEvent))
	// setRegistry gives the session the schema registry to decode and
	// encode with; nil when the executor cannot use one.
	setRegistry func(*schema.Registry)
	// setLocal gives the session its local schemas (.proto, .avsc) and
	// topic mappings; nil when the executor cannot use them.
	setLocal func(*exec.LocalSchemas)
	// setOnWarning lets a running statement (FOLLOW) warn before it ends.
	setOnWarning func(func(string))
	// setNewPassword gives the session where a SCRAM user's new password
	// comes from (newPassword).
	setNewPassword func(func(ctx context.Context, user string) (string, error))
	close          func()
	bootstrap      []string
	// setStdin gives PRODUCE ... FROM STDIN kql's standard input when no
	// script is read from it.
	setStdin func(io.Reader)
}

// playgroundRun is a running playground: its brokers, its schema registry
// and how to stop both.
type playgroundRun struct {
	bootstrap   []string
	registryURL string // "" when it has none
	stop        func()
	// startTraffic starts the live traffic and groups; nil when it has none.
	startTraffic func() error
}

// world holds what Main takes from the real world, so tests can replace it.
type world struct {
	dial func(ctx context.Context, cfg kafka.Config) (*connection, error)
	// playground starts the embedded cluster and its schema registry.
	playground func(ctx context.Context) (*playgroundRun, error)
	// statementContext derives the context of one statement: cancelled by
	// Ctrl-C (SIGINT) until stop is called.
	statementContext func(parent context.Context) (ctx context.Context, stop context.CancelFunc)
}

func realWorld() world {
	return world{
		dial: dialKafka,
		playground: func(ctx context.Context) (*playgroundRun, error) {
			pg, err := playground.Start(ctx)
			if err != nil {
				return nil, err
			}
			return &playgroundRun{bootstrap: pg.Bootstrap(), registryURL: pg.RegistryURL(), stop: pg.Close,
				startTraffic: func() error { return pg.StartTraffic() }}, nil
		},
		statementContext: func(parent context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(parent, os.Interrupt)
		},
	}
}

func dialKafka(ctx context.Context, cfg kafka.Config) (*connection, error) {
	cl, err := kafka.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	sess := exec.NewSession(cl)
	return &connection{
		exec:         sess,
		setTrace:     cl.SetTrace,
		setRegistry:  func(r *schema.Registry) { sess.Registry = r },
		setLocal:     func(l *exec.LocalSchemas) { sess.Local = l },
		setOnWarning: func(fn func(string)) { sess.OnWarning = fn },
		setNewPassword: func(fn func(context.Context, string) (string, error)) {
			sess.NewPassword = fn
		},
		close:     cl.Close,
		bootstrap: cl.Bootstrap(),
		setStdin:  func(r io.Reader) { sess.Stdin = r },
	}, nil
}

// lockedWriter serialises writes to stderr: trace events arrive from the
// executor's goroutines while the shell prints its own messages.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func run(ctx context.Context, ios *IOStreams, args []string, rt world) int {
	if ios.Getenv == nil {
		ios.Getenv = func(string) string { return "" }
	}
	stderr := &lockedWriter{w: ios.ErrOut}
	o, fs, err := parseFlags(args, ios.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kql: %v\nRun 'kql --help' for usage.\n", err)
		return exitUsage
	}
	if o.help {
		printUsage(ios.Out, fs)
		return exitOK
	}
	if o.version {
		fmt.Fprintf(ios.Out, "kql %s\n", Version)
		return exitOK
	}

	a := newApp(ios, stderr, o, rt)
	defer a.closeAll()

	interactive := len(o.scripts) == 0 && ios.InTTY && ios.OutTTY && !o.check
	var scripts []*script
	if !interactive {
		if scripts, err = a.loadScripts(); err != nil {
			a.errorf("%v", err)
			return exitUsage
		}
		if !a.parseScripts(scripts) {
			return exitUsage
		}
		if o.check {
			if ios.ErrTTY && !o.quiet {
				n := 0
				for _, s := range scripts {
					n += len(s.stmts)
				}
				fmt.Fprintf(stderr, "%d %s parsed without errors\n", n, plural(n, "statement", "statements"))
			}
			return exitOK
		}
		if countStatements(scripts) == 0 {
			return exitOK
		}
	}

	if code := a.connect(ctx); code != exitOK {
		return code
	}
	if interactive {
		return a.repl(ctx)
	}
	return a.runScripts(ctx, scripts)
}

// app is one kql run: its settings, connection and client-side state.
type app struct {
	ios    *IOStreams
	stderr io.Writer
	opts   *options
	rt     world

	kcfg    kafka.Config       // how the current connection was made; \connect reuses it
	sett    *connSettings      // the settings kcfg was made from (nil for the playground)
	reg     *schema.Registry   // the schema registry; nil: none configured
	regDesc string             // the registry for the banner: URL, how authenticated and verified
	local   *exec.LocalSchemas // schemas from local files and the topics mapped to them (kept across \connect)
	conn    *connection
	stopPG  func()
	// profile is the cluster profile connected with (-c, $KQL_CLUSTER,
	// \connect NAME); nil without one. guard refuses writing statements
	// (kql.readonly=true, --read-only); nil when writes are allowed.
	profile  *profile
	guard    *readOnlyGuard
	complete *nameCache

	// client-side settings that meta-commands change
	format   outputFormat
	expanded bool
	timing   bool
	tracing  bool
	confirm  bool // the shell asks before destructive statements (\set confirm)
	// readPassword reads a line without echo through the shell's line
	// editor (nil: none; newPassword then reads the terminal itself).
	readPassword func(prompt string) ([]byte, error)
	out          io.Writer // stdout, or the \o file
	outFile      *os.File
	outName      string

	pager exec.Pager // the last CONSUME, for \next
	// lastStmt is the last statement the REPL ran, for \watch.
	lastStmt lang.Statement
	// watchNow is \watch's clock (tests replace it).
	watchNow func() time.Time
	// pageThis: the statement running is the interactive shell's, whose
	// result may go through the pager (\pager).
	pageThis    bool
	pagerMode   pagerMode
	pagerBroken bool // the pager did not start: print, and warn no more
	// sink, when set, draws a result instead of the output format (\watch).
	sink func(w io.Writer, res result.Result, o renderOptions) (int64, error)
	// pagerForward: the last CONSUME read forward (\next goes newer)
	pagerForward bool
	// pagerFollow: the last CONSUME was a FOLLOW, which has no pages
	pagerFollow bool
	failed      bool // a statement failed or was partial: exit 1

	colorOut, colorErr bool
	red, yellow        *color.Color
}

func newApp(ios *IOStreams, stderr io.Writer, o *options, rt world) *app {
	a := &app{ios: ios, stderr: stderr, opts: o, rt: rt, out: ios.Out, confirm: true, tracing: o.trace}
	a.format, _ = parseFormat(o.format) // validated by the flag
	noColor := ios.Getenv("NO_COLOR") != ""
	switch o.color {
	case "always":
		a.colorOut, a.colorErr = true, true
	case "never":
	default:
		a.colorOut = ios.OutTTY && !noColor
		a.colorErr = ios.ErrTTY && !noColor
	}
	a.red, a.yellow = color.New(color.FgRed), color.New(color.FgYellow)
	for _, c := range []*color.Color{a.red, a.yellow} {
		if a.colorErr {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return a
}

func (a *app) closeAll() {
	if a.complete != nil {
		a.complete.close()
	}
	if a.outFile != nil {
		a.outFile.Close()
		a.outFile = nil
	}
	if a.conn != nil {
		a.conn.close()
		a.conn = nil
	}
	a.reg.Close()
	if a.stopPG != nil {
		a.stopPG()
		a.stopPG = nil
	}
}

// errorf prints an error on stderr, red on a terminal.
func (a *app) errorf(format string, args ...any) {
	a.red.Fprintf(a.stderr, "%s\n", strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}

// warnf prints a warning on stderr; warnings are shown even with --quiet.
func (a *app) warnf(format string, args ...any) {
	a.yellow.Fprintf(a.stderr, "warning: %s\n", fmt.Sprintf(format, args...))
}

// noticef prints something for the person at the terminal: never with -q.
func (a *app) noticef(format string, args ...any) {
	if a.opts.quiet {
		return
	}
	fmt.Fprintf(a.stderr, format+"\n", args...)
}

// connect opens the cluster connection the flags describe, or starts the
// playground. It returns a non-zero exit code on failure.
func (a *app) connect(ctx context.Context) int {
	var regSett *registrySettings // nil for the playground's registry
	if a.opts.playground {
		pg, err := a.rt.playground(ctx)
		if err != nil {
			a.errorf("kql: --playground: %v", err)
			return exitFailed
		}
		a.stopPG = pg.stop
		where := strings.Join(pg.bootstrap, ",")
		if pg.registryURL != "" {
			where += " with a schema registry at " + pg.registryURL
			if a.reg, err = schema.Open(schema.Config{URLs: []string{pg.registryURL}}); err != nil {
				a.errorf("kql: --playground: %v", err)
				return exitFailed
			}
			a.regDesc = pg.registryURL + " (the playground's)"
		}
		a.local = localSchemasFrom(a.opts, nil)
		a.noticef("playground: a 3-broker cluster with demo data is running at %s (stops when kql exits)", where)
		if !a.opts.playgroundStatic && pg.startTraffic != nil {
			if err := pg.startTraffic(); err != nil {
				a.warnf("playground: %v; its data stays as seeded", err)
			} else {
				a.noticef("playground: live traffic: a few records a second, with bursts; groups warehouse-sync (keeps up), billing (falls behind, catches up), fraud-detection (stalled), shipping (stopped); --playground-static for still data")
			}
		}
		a.kcfg = kafka.Config{Bootstrap: pg.bootstrap, ClientID: a.opts.clientID}
		a.setGuard(nil)
	} else {
		var cc *commandConfig
		if a.opts.cluster != "" {
			p, err := loadProfile(a.ios.Getenv, a.opts.cluster)
			if err != nil {
				if a.opts.clusterSource == "$KQL_CLUSTER" {
					a.errorf("kql: $KQL_CLUSTER=%s: %v", a.opts.cluster, err)
				} else {
					a.errorf("kql: %v", err)
				}
				return exitUsage
			}
			a.profile, cc = p, p.cc
			for _, w := range cc.warnings {
				a.warnf("%s", w)
			}
		} else if a.opts.commandConfig != "" {
			var err error
			if cc, err = loadCommandConfig(a.opts.commandConfig); err != nil {
				a.errorf("kql: %v", err)
				return exitUsage
			}
			for _, w := range cc.warnings {
				a.warnf("%s", w)
			}
		}
		a.local = localSchemasFrom(a.opts, cc)
		s, err := resolveSettings(a.opts, a.ios.Getenv, cc, a.promptPassword)
		if err != nil {
			a.errorf("kql: %v", err)
			return exitUsage
		}
		if a.kcfg, err = s.kafkaConfig(); err != nil {
			a.errorf("kql: %v", err)
			return exitUsage
		}
		a.sett = s
		a.setGuard(cc)
		if w := s.insecureWarning(); w != "" {
			a.warnf("%s", w)
		}
		if len(s.registry.urls) > 0 {
			regSett = &s.registry
			cfg, err := regSett.schemaConfig()
			if err != nil {
				a.errorf("kql: %v", err)
				return exitUsage
			}
			if a.reg, err = schema.Open(cfg); err != nil {
				a.errorf("kql: %v", err)
				return exitUsage
			}
			a.regDesc = regSett.describe()
		}
	}
	// The registry is asked once while the brokers are dialled, so a wrong
	// URL, password or CA is said at the start, not first by a CONSUME.
	var checked chan string
	cctx, cancelCheck := context.WithTimeout(ctx, 5*time.Second)
	defer cancelCheck()
	if a.reg != nil && regSett != nil {
		checked = make(chan string, 1)
		go func() { checked <- checkRegistry(cctx, a.reg, regSett) }()
	}
	if a.sett != nil {
		if err := a.sett.prefetchToken(ctx); err != nil {
			a.errorf("kql: %v", err)
			return exitUnreachable
		}
	}
	conn, err := a.rt.dial(ctx, a.kcfg)
	if err != nil {
		if se := kafka.AsSecurityError(err); se != nil && a.sett != nil {
			a.errorf("kql: %s", a.sett.securityMessage(se))
			return exitUnreachable
		}
		a.errorf("kql: %v", err)
		if kafka.IsUnreachable(err) {
			return exitUnreachable
		}
		return exitFailed
	}
	a.setConnection(conn)
	if checked != nil {
		if w := <-checked; w != "" {
			a.warnf("%s", w)
		}
	}
	if a.sett != nil && a.sett.overridden != "" {
		// After the connection: had it failed, the error would say it.
		a.noticef("kql: the SASL password of %s came from $KQL_SASL_PASSWORD, which takes precedence over %s", a.sett.saslUser, a.sett.overridden)
	}
	if regSett != nil && regSett.overridden != "" {
		a.noticef("kql: the schema registry password of %s came from $%s, which takes precedence over %s", regSett.user, registryPasswordEnv, regSett.overridden)
	}
	return exitOK
}

func (a *app) setConnection(conn *connection) {
	if a.conn != nil {
		a.conn.close()
	}
	a.conn = conn
	if a.reg != nil && conn.setRegistry != nil {
		conn.setRegistry(a.reg)
	}
	if a.local != nil && conn.setLocal != nil {
		conn.setLocal(a.local)
	}
	if conn.setNewPassword != nil {
		conn.setNewPassword(a.newPassword)
	}
	if conn.setStdin != nil && a.stdinIsFree() {
		conn.setStdin(a.ios.In)
	}
	a.pager, a.pagerFollow = nil, false
	if a.complete != nil {
		a.complete.reset(conn.exec)
	}
}

// promptPassword asks for a password without echo, on a terminal only: what
// says whose ("SASL user"), env is the variable that gives it instead.
func (a *app) promptPassword(what, user, env string) (string, error) {
	fdIn, ok := fd(a.ios.In)
	if !ok || !a.ios.InTTY || !isTerminal(a.ios.In) {
		return "", usagef("%s %q needs a password: set %s (there is no terminal to ask on, and no password flag on purpose)", what, user, env)
	}
	pw, err := promptNoEcho(fdIn, a.stderr, fmt.Sprintf("Password for %s %s: ", what, user))
	if err != nil {
		return "", fmt.Errorf("reading the password of %s %s: %w", what, user, err)
	}
	return string(pw), nil
}

func countStatements(scripts []*script) int {
	n := 0
	for _, s := range scripts {
		n += len(s.stmts)
	}
	return n
}

var errQuit = errors.New("quit")
