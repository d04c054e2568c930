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

// script is one -e text, -f file or stdin, split and parsed.
type script struct {
	name  string // for messages: the file name, "-e" or "<stdin>"
	text  string
	stmts []parsedStatement
}

type parsedStatement struct {
	src  source
	stmt lang.Statement
}

// loadScripts reads every -e and -f in command-line order, or stdin when
// there is neither.
func (a *app) loadScripts() ([]*script, error) {
	args := a.opts.scripts
	if len(args) == 0 {
		args = []scriptArg{{text: "-"}}
	}
	inline := 0
	for _, s := range args {
		if s.inline {
			inline++
		}
	}
	var out []*script
	n := 0
	for _, s := range args {
		if s.inline {
			n++
			name := "-e"
			if inline > 1 {
				name = fmt.Sprintf("-e[%d]", n)
			}
			out = append(out, &script{name: name, text: s.text})
			continue
		}
		var data []byte
		var err error
		name := s.text
		if s.text == "-" {
			name = "<stdin>"
			data, err = io.ReadAll(a.ios.In)
		} else {
			data, err = os.ReadFile(s.text)
		}
		if err != nil {
			return nil, fmt.Errorf("kql: -f %s: %w", s.text, unwrapPathError(err))
		}
		out = append(out, &script{name: name, text: scriptText(data)})
	}
	return out, nil
}

// stdinIsFree reports whether standard input is not where statements come
// from (the shell, or a script read from stdin), so that PRODUCE ... FROM
// STDIN may read records from it: only with -e or -f of a file.
func (a *app) stdinIsFree() bool {
	if len(a.opts.scripts) == 0 {
		return false
	}
	for _, s := range a.opts.scripts {
		if !s.inline && s.text == "-" {
			return false
		}
	}
	return true
}

// scriptText drops a UTF-8 byte order mark, which editors on Windows put
// at the start of a file and which is not KafkaQL.
func scriptText(data []byte) string {
	return strings.TrimPrefix(string(data), "\uFEFF")
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseScripts splits and parses every statement of every script before
// anything runs: a script with a syntax error anywhere is refused whole, so
// a typo on line 40 never leaves lines 1-39 half-applied to the cluster.
// Every error is printed, each with its file, line and column.
func (a *app) parseScripts(scripts []*script) bool {
	ok := true
	for _, s := range scripts {
		if !a.parseScript(s) {
			ok = false
		}
	}
	if !ok && !a.opts.check {
		a.errorf("kql: nothing was run: fix the syntax errors above (use --check to parse without running)")
	}
	return ok
}

func (a *app) parseScript(s *script) bool {
	srcs, splitErr := splitScript(s.text)
	ok := splitErr == nil
	for _, src := range srcs {
		stmt, err := parseSource(src)
		if err != nil {
			ok = false
			a.errorf("%s:%s%s", s.name, a.withScriptLine(s, err), metaHint(src))
			continue
		}
		s.stmts = append(s.stmts, parsedStatement{src: src, stmt: stmt})
	}
	if splitErr != nil { // an unclosed quote or comment, after the rest
		a.errorf("%s:%s", s.name, a.withScriptLine(s, splitErr))
	}
	return ok
}

// withScriptLine shows an error under the script's own line, so a statement
// that shares its line with another is shown with it.
func (a *app) withScriptLine(s *script, err error) string {
	var le *lang.Error
	if errors.As(err, &le) {
		if line, ok := scriptLine(s.text, le.Line); ok {
			c := *le
			c.SourceLine = line
			return c.Error()
		}
	}
	return err.Error()
}

// metaHint explains a syntax error on a meta-command line in a script.
func metaHint(src source) string {
	for _, l := range strings.Split(src.Text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), `\`) {
			return "\n(meta-commands such as \\x or \\format work in the interactive shell only; in scripts use flags such as --format)"
		}
	}
	return ""
}

// runScripts runs parsed scripts in order. A failed statement stops the run
// (exit 1) unless --keep-going; a partial result is reported and the run
// goes on, but the exit code is 1.
func (a *app) runScripts(ctx context.Context, scripts []*script) int {
	ctx, stop := a.rt.statementContext(ctx) // Ctrl-C stops the whole run
	defer stop()
	for _, s := range scripts {
		if !a.runScript(ctx, s) {
			if ctx.Err() != nil {
				return exitInterrupted
			}
			return exitFailed
		}
	}
	if ctx.Err() != nil {
		return exitInterrupted
	}
	if a.failed {
		return exitFailed
	}
	return exitOK
}

// runScript runs one script; false means stop everything.
func (a *app) runScript(ctx context.Context, s *script) bool {
	for _, ps := range s.stmts {
		if ctx.Err() != nil {
			return false
		}
		out, err := a.execute(ctx, ps.stmt)
		if err == nil {
			continue
		}
		a.errorf("%s:%d: %v", s.name, ps.src.Line, err)
		if out == failed && (!a.opts.keepGoing || ctx.Err() != nil) {
			return false
		}
	}
	return true
}
