package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kql-dev/kql/lang"
)

const (
	promptStart    = "kql> "
	promptContinue = "  -> "
	historyMax     = 1000
)

// replState is a state of the REPL's state machine. Each state is a small
// method that does one thing and names the next state, as in cockroach's
// clisqlshell: the flow between reading, continuing a statement, running
// it and meta-commands stays visible in one switch.
type replState int

const (
	stateStartLine     replState = iota // a fresh statement: primary prompt
	stateContinueLine                   // inside a statement: continuation prompt
	stateReadLine                       // read one line with the current prompt
	stateProcessLine                    // meta-command, or add to the statement buffer
	stateRunMeta                        // run the meta-command in r.line
	stateRunStatements                  // run the complete statements in the buffer
	stateExit
)

type repl struct {
	a      *app
	ed     editor
	buf    stmtBuffer
	hist   historyStore
	prompt string
	line   string
}

// repl runs the interactive shell until \q or Ctrl-D. Its exit code is 0:
// failures were shown as they happened.
func (a *app) repl(ctx context.Context) int {
	r := &repl{a: a, buf: newStmtBuffer()}
	// A statement parses with its own part of the grammar; a mistake is
	// explained by the whole grammar, built here while the user types.
	lang.WarmGrammar()
	a.complete = newNameCache(a.conn.exec)
	a.complete.profiles = a.profileNames
	a.complete.refresh()
	if err := r.openEditor(); err != nil {
		a.errorf("kql: %v", err)
		return exitFailed
	}
	defer func() {
		a.readPassword = nil
		r.ed.Close()
	}()
	r.openHistory()
	defer func() {
		if r.hist != nil {
			r.hist.Close()
		}
	}()
	a.banner(ctx)

	for st := stateStartLine; st != stateExit; {
		st = r.step(ctx, st)
	}
	return exitOK
}

func (r *repl) step(ctx context.Context, st replState) replState {
	switch st {
	case stateStartLine:
		r.prompt = r.a.prompt()
		return stateReadLine
	case stateContinueLine:
		r.prompt = promptContinue
		return stateReadLine
	case stateReadLine:
		return r.readLine()
	case stateProcessLine:
		return r.processLine()
	case stateRunMeta:
		return r.runMeta(ctx)
	case stateRunStatements:
		return r.runStatements(ctx)
	}
	panic(fmt.Sprintf("repl: unknown state %d", st))
}

func (r *repl) readLine() replState {
	line, err := r.ed.ReadLine(r.prompt)
	switch {
	case errors.Is(err, errInterrupted):
		// Ctrl-C while typing drops the statement being written.
		r.buf.Reset()
		return stateStartLine
	case errors.Is(err, io.EOF):
		if !r.buf.Empty() {
			r.a.warnf("incomplete statement discarded (a statement ends with ;): %s", oneLine(r.buf.Pending()))
		}
		return stateExit
	case err != nil:
		r.a.errorf("kql: reading input: %v", err)
		return stateExit
	}
	r.line = line
	return stateProcessLine
}

func (r *repl) processLine() replState {
	trimmed := strings.TrimSpace(r.line)
	if r.buf.Empty() && trimmed == "" {
		return stateStartLine
	}
	// A meta-command runs on Enter even in the middle of a statement (as in
	// psql): the unfinished statement stays in the buffer. Inside an open
	// quote or comment a backslash is text.
	if strings.HasPrefix(trimmed, `\`) && !r.buf.InLiteral() {
		r.line = trimmed
		return stateRunMeta
	}
	r.buf.Add(r.line)
	if r.buf.Complete() {
		return stateRunStatements
	}
	return stateContinueLine
}

func (r *repl) runMeta(ctx context.Context) replState {
	r.addHistory(r.line)
	// Ctrl-C during a meta-command (a slow \connect, a long \i) ends that
	// command, not kql.
	mctx, stop := r.a.rt.statementContext(ctx)
	defer stop()
	if err := r.a.runMeta(mctx, r.line); err != nil {
		if errors.Is(err, errQuit) {
			return stateExit
		}
		r.a.errorf("%v", err)
	}
	if !r.buf.Empty() {
		return stateContinueLine // the statement being typed goes on
	}
	return stateStartLine
}

func (r *repl) runStatements(ctx context.Context) replState {
	for _, src := range r.buf.Take() {
		stmt, err := parseSource(src)
		if err != nil {
			// Kept as typed, so the mistake can be recalled and fixed;
			// but never a password typed into CREATE or ALTER USER.
			if le := (*lang.Error)(nil); !errors.As(err, &le) || !le.HoldsSecret() {
				r.addHistory(strings.TrimSpace(src.Text))
			}
			r.a.errorf("%v", err)
			continue
		}
		// The canonical one-line form: a multi-line statement becomes one
		// entry, and a -- comment cannot swallow the rest of the line.
		r.addHistory(runnable(stmt))
		if !r.confirmed(ctx, stmt) {
			continue
		}
		r.a.runInteractive(ctx, stmt)
	}
	if !r.buf.Empty() {
		return stateContinueLine
	}
	return stateStartLine
}

// runInteractive runs one statement with Ctrl-C bound to it alone: the
// statement is cancelled, the shell goes back to the prompt.
func (a *app) runInteractive(ctx context.Context, stmt lang.Statement) {
	a.lastStmt = stmt
	sctx, stop := a.rt.statementContext(ctx)
	defer stop()
	a.pageThis = true
	defer func() { a.pageThis = false }()
	out, err := a.execute(sctx, stmt)
	if err == nil {
		return
	}
	if out == partial {
		a.warnf("%v", err)
		return
	}
	a.errorf("error: %v", err)
}

func (r *repl) addHistory(entry string) {
	if entry == "" {
		return
	}
	r.ed.AddHistory(entry)
	if r.hist == nil {
		return
	}
	if err := r.hist.Add(entry); err != nil {
		r.a.warnf("history: %v; history is off for this session", err)
		r.hist.Close()
		r.hist = nil
	}
}

// oneLine joins the lines of a statement with spaces, for messages and for
// readline, which edits one line at a time.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	parts := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

func (r *repl) openEditor() error {
	a := r.a
	in, inOK := a.ios.In.(*os.File)
	if inOK && isTerminal(a.ios.In) && isTerminal(a.ios.Out) {
		ed, err := newReadlineEditor(in, a.ios.Out, a.stderr, a.complete)
		if err == nil {
			r.ed = ed
			// The editor owns the terminal while the shell runs: a
			// password is read through it, not past it.
			a.readPassword = ed.ReadPassword
			return nil
		}
		a.warnf("line editing is off: %v", err)
	}
	prompt := io.Discard
	if a.ios.InTTY {
		prompt = a.stderr
	}
	r.ed = newBufioEditor(a.ios.In, prompt)
	return nil
}

func (r *repl) openHistory() {
	a := r.a
	if a.opts.noHistory {
		return
	}
	path := a.opts.histFile
	if path == "" {
		p, err := defaultHistoryPath()
		if err != nil {
			a.warnf("history: %v; history is off for this session", err)
			return
		}
		path = p
	}
	h, err := openHistory(path, historyMax)
	if err != nil {
		a.warnf("history: %v; history is off for this session", err)
		return
	}
	r.hist = h
	for _, e := range h.Entries() {
		r.ed.AddHistory(e)
	}
}
