package main

// The shell's view of the language, renderer and history packages, in one
// place, so the rest of cmd/kql reads the same whatever their exact shapes.

import (
	"io"
	"strings"

	"github.com/kql-dev/kql/history"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// source is one statement's text and where it starts in its script.
type source = lang.Source

func splitScript(text string) ([]source, error) { return lang.Split(text) }

func parseSource(src source) (lang.Statement, error) { return lang.ParseSource(src) }

// stmtBuffer collects REPL lines until they hold complete statements.
type stmtBuffer interface {
	Add(line string)
	Complete() bool
	Take() []source
	Empty() bool
	Reset()
	Pending() string
	InLiteral() bool
}

func newStmtBuffer() stmtBuffer { return &lang.Buffer{} }

// formatStatement is the canonical text of a statement, without its ';'.
func formatStatement(s lang.Statement) string { return lang.Format(s) }

// runnable is the canonical text with its ';': what the shell prints for
// \next and keeps in history, so it can be pasted or recalled and run.
func runnable(s lang.Statement) string { return lang.Format(s) + ";" }

func keywords() []string { return lang.Keywords() }

// helpEntry is one statement's help: name, syntax and an example.
type helpEntry = lang.HelpEntry

func statementHelp() []helpEntry { return lang.StatementHelp() }

// scriptLine returns line n (1-based) of text, for an error's caret line.
func scriptLine(text string, n int) (string, bool) {
	lines := strings.Split(text, "\n")
	if n < 1 || n > len(lines) {
		return "", false
	}
	return strings.TrimSuffix(lines[n-1], "\r"), true
}

type outputFormat = render.Format

var formatNames = func() []string {
	var out []string
	for _, f := range render.Formats {
		out = append(out, string(f))
	}
	return out
}()

func parseFormat(s string) (outputFormat, error) { return render.ParseFormat(s) }

type renderOptions = render.Options

func renderResult(w io.Writer, res result.Result, o renderOptions) (int64, error) {
	return render.Render(w, res, o)
}

// historyStore is the REPL history file.
type historyStore interface {
	Add(entry string) error
	Entries() []string
	Close() error
}

func defaultHistoryPath() (string, error) { return history.DefaultPath(), nil }

func openHistory(path string, max int) (historyStore, error) { return history.Open(path, max) }
