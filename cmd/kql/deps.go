package main

// The shell's view of the language, renderer and history packages, in one
// place, so the rest of cmd/kql reads the same whatever their exact shapes.

import (
	"io"

	"github.com/kql-dev/kql/history"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// stmtBuffer collects REPL lines until they hold complete statements.
type stmtBuffer interface {
	Add(line string)
	Complete() bool
	Take() []source
	Empty() bool
	Reset()
	Pending() string
}

// helpEntry is one statement's help: name, syntax and an example.
type helpEntry struct{ Name, Syntax, Example string }

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
