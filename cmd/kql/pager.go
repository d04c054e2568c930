package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"time"

	"github.com/kql-dev/kql/lang"
)

// pagerMode is \pager: when a result in the interactive shell goes through
// $PAGER, as in psql.
type pagerMode int

const (
	pagerOn     pagerMode = iota // only results taller than the terminal
	pagerOff                     // never
	pagerAlways                  // every result
)

func (m pagerMode) String() string {
	switch m {
	case pagerOff:
		return "off"
	case pagerAlways:
		return "always"
	}
	return "on"
}

// defaultPager is psql's choice of less with the flags that make it quit on
// a short result (-F), keep colours (-R), cut long lines instead of
// wrapping them (-S: a table stays a table) and leave the screen as it was
// (-X).
const defaultPager = "less -FRSX"

// pagerCommand is $KQL_PAGER, else $PAGER, else less -FRSX. Like psql, git
// and man, kql reads it as a shell command, so quotes, a path with spaces
// ('"/opt/my tools/less" -R') and pipes work.
func (a *app) pagerCommand() string {
	for _, env := range []string{"KQL_PAGER", "PAGER"} {
		if v := strings.TrimSpace(a.ios.Getenv(env)); v != "" {
			return v
		}
	}
	return defaultPager
}

// pages reports whether stmt's result may go through the pager: in the
// interactive shell, on a terminal (stdout, not \o), never a FOLLOW (it
// never ends) nor \watch (it redraws the screen itself).
func (a *app) pages(stmt lang.Statement) bool {
	if !a.pageThis || a.pagerMode == pagerOff || a.pagerBroken || a.outFile != nil || a.sink != nil || !a.ios.OutTTY {
		return false
	}
	if _, ok := a.ios.Out.(*os.File); !ok {
		return false
	}
	if c, ok := stmt.(*lang.Consume); ok && c.Follow {
		return false
	}
	return a.pagerMode == pagerAlways || a.ios.height() > 0
}

// pagingWriter holds a result's first lines until it is clear that they
// do not fit the terminal, then starts the pager, hands it those lines and
// streams the rest into it: a long CONSUME is never held in memory. A
// result that ends first is written to the terminal as it is.
type pagingWriter struct {
	a       *app
	term    *os.File
	limit   int    // lines that fit above the prompt; 0: page at once (always)
	onStart func() // the progress line stops: the pager owns the screen
	// around writes what is held when the timer lets it go, on the
	// timer's goroutine: the progress line is erased first (as for the
	// result's own writes), or the first row lands at its end.
	around func(write func())

	mu     sync.Mutex
	buf    bytes.Buffer
	lines  int
	direct bool // the result fitted, or the pager did not start: write to term
	cmd    *osexec.Cmd
	pipe   io.WriteCloser
	quit   bool // the pager ended before the result did (q in less)
	// viaShell: the pager runs through sh, which starts even when the
	// pager is not there; sent is what it was given, to print then.
	viaShell bool
	sent     bytes.Buffer
	// release prints what is held if the screenful does not come soon.
	release *time.Timer
}

func (a *app) newPagingWriter() *pagingWriter {
	pw := &pagingWriter{a: a, term: a.ios.Out.(*os.File)}
	if a.pagerMode != pagerAlways {
		pw.limit = max(a.ios.height()-1, 1)
	}
	return pw
}

// errPagerQuit is what a write returns once the pager is gone: the rest of
// the result is not read.
var errPagerQuit = errors.New("the pager was closed")

func (pw *pagingWriter) Write(p []byte) (int, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	switch {
	case pw.quit:
		return 0, errPagerQuit
	case pw.pipe != nil:
		if err := pw.toPager(p); err != nil {
			return 0, err
		}
		return len(p), nil
	case pw.direct:
		return pw.term.Write(p)
	}
	if pw.buf.Len() == 0 && pw.limit > 0 {
		// A result that trickles (a csv CONSUME waiting for records)
		// is not held back for long: what came is shown, and the rest
		// streams to the terminal.
		pw.release = time.AfterFunc(holdFor, pw.printHeld)
	}
	pw.buf.Write(p)
	pw.lines += bytes.Count(p, []byte{'\n'})
	if pw.lines >= pw.limit {
		pw.start()
	}
	return len(p), nil
}

// holdFor is how long the first lines wait for the rest of a screenful.
const holdFor = time.Second

func (pw *pagingWriter) printHeld() {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.cmd != nil || pw.direct {
		return
	}
	pw.direct = true
	held := pw.buf.Bytes()
	pw.buf = bytes.Buffer{}
	if pw.around != nil {
		pw.around(func() { pw.term.Write(held) })
		return
	}
	pw.term.Write(held)
}

// start runs the pager on what is held; the caller holds mu.
func (pw *pagingWriter) start() {
	if pw.release != nil {
		pw.release.Stop()
	}
	if pw.onStart != nil {
		pw.onStart()
	}
	line := pw.a.pagerCommand()
	cmd := pagerProcess(line)
	pw.viaShell = cmd.Args[0] == "sh"
	cmd.Stdout, cmd.Stderr = pw.term, os.Stderr
	if f, ok := pw.a.ios.ErrOut.(*os.File); ok {
		cmd.Stderr = f
	}
	pipe, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		// Once: the next results are printed without asking again.
		pw.a.pagerBroken = true
		pw.a.warnf("the pager %q did not start (%v): printing the result instead; set $KQL_PAGER or $PAGER, or \\pager off", line, err)
		pw.direct = true
		pw.term.Write(pw.buf.Bytes())
		pw.buf = bytes.Buffer{}
		return
	}
	pw.cmd, pw.pipe = cmd, pipe
	pw.toPager(pw.buf.Bytes())
	pw.buf = bytes.Buffer{}
}

// shellChars are those that need a shell; a command without them is split
// at spaces and run directly, so that one that is not there fails to start
// and the result is printed instead.
const shellChars = "\"'`$|&;<>()*?[]#~=%{}\n"

func pagerProcess(line string) *osexec.Cmd {
	if strings.ContainsAny(line, shellChars) {
		return osexec.Command("sh", "-c", line)
	}
	words := strings.Fields(line)
	return osexec.Command(words[0], words[1:]...)
}

// replayMax is how much of what went to a pager run by sh is kept, to be
// printed if the shell did not find the pager (exit 126 or 127).
const replayMax = 1 << 20

// toPager writes p into the pager; the caller holds mu.
func (pw *pagingWriter) toPager(p []byte) error {
	if pw.viaShell && pw.sent.Len()+len(p) <= replayMax {
		pw.sent.Write(p)
	} else {
		pw.viaShell = false // too much to replay: a failure is only reported
	}
	if _, err := pw.pipe.Write(p); err != nil {
		if pw.notFound() {
			return nil // p was printed with the rest of sent
		}
		pw.quit = true
		return errPagerQuit
	}
	return nil
}

// notFound waits for the pager once its input is closed and reports
// whether the shell said the pager was not there (exit 126 or 127): then
// what the pager was given is printed with one warning, and the rest of
// the result goes to the terminal. The caller holds mu.
func (pw *pagingWriter) notFound() bool {
	pw.pipe.Close()
	err := pw.cmd.Wait()
	line := pw.a.pagerCommand()
	pw.cmd, pw.pipe = nil, nil
	var exit *osexec.ExitError
	switch {
	case err == nil:
		return false
	case !errors.As(err, &exit):
		pw.a.warnf("the pager %q: %v", line, err)
		return false
	case exit.ExitCode() != 126 && exit.ExitCode() != 127:
		return false // the pager's own business (less exits 0 on q)
	case !pw.viaShell:
		pw.a.pagerBroken = true
		pw.a.warnf("the pager %q did not start (the shell exited with status %d), and the result was not shown; set $KQL_PAGER or $PAGER, or \\pager off", line, exit.ExitCode())
		return false
	}
	pw.a.pagerBroken = true
	pw.a.warnf("the pager %q did not start (the shell exited with status %d): printing the result instead; set $KQL_PAGER or $PAGER, or \\pager off", line, exit.ExitCode())
	pw.direct = true
	pw.term.Write(pw.sent.Bytes())
	pw.sent = bytes.Buffer{}
	return true
}

// Close ends the result: what is held goes to the terminal, or the pager
// gets the end of its input and is waited for (it stays until the user
// quits it, and leaves no zombie). It reports whether the pager was quit
// before the result was all written.
func (pw *pagingWriter) Close() (quit bool) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if pw.release != nil {
		pw.release.Stop()
	}
	if pw.cmd == nil {
		if pw.a.pagerMode == pagerAlways && !pw.direct && pw.buf.Len() > 0 {
			pw.start()
		}
	}
	if pw.cmd == nil {
		if !pw.direct {
			pw.term.Write(pw.buf.Bytes())
		}
		pw.direct = true
		return pw.quit // the pager may have been waited for already, when it quit
	}
	pw.notFound()
	return pw.quit
}

func (a *app) metaPager(_ context.Context, arg string) error {
	switch strings.ToLower(arg) {
	case "":
		if a.pagerMode == pagerOff {
			a.pagerMode = pagerOn
		} else {
			a.pagerMode = pagerOff
		}
	case "on":
		a.pagerMode = pagerOn
	case "off":
		a.pagerMode = pagerOff
	case "always":
		a.pagerMode = pagerAlways
	default:
		return fmt.Errorf(`\pager: want on, off or always, got %q`, arg)
	}
	a.pagerBroken = false // a new setting tries the pager again
	switch a.pagerMode {
	case pagerOff:
		fmt.Fprintln(a.stderr, "Pager is off.")
	case pagerAlways:
		fmt.Fprintf(a.stderr, "Pager is always used (%s).\n", a.pagerCommand())
	default:
		fmt.Fprintf(a.stderr, "Pager is on (%s) for results taller than the terminal.\n", a.pagerCommand())
	}
	return nil
}
