package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/chzyer/readline"
)

// editor reads the REPL's lines. The terminal implementation edits lines,
// completes and recalls history; the bufio one reads plain lines (tests, and
// a terminal readline cannot drive).
type editor interface {
	// ReadLine shows prompt and returns one line without its newline.
	// It returns errInterrupted on Ctrl-C and io.EOF at the end of input
	// (Ctrl-D on an empty line).
	ReadLine(prompt string) (string, error)
	// AddHistory makes entry reachable with the up arrow.
	AddHistory(entry string)
	Close() error
}

var errInterrupted = errors.New("interrupted")

// bufioEditor reads lines from a reader. A last line without a newline is
// still a line.
type bufioEditor struct {
	r      *bufio.Reader
	prompt io.Writer // where prompts go; io.Discard when nobody is looking
}

func newBufioEditor(in io.Reader, prompt io.Writer) *bufioEditor {
	return &bufioEditor{r: bufio.NewReader(in), prompt: prompt}
}

func (e *bufioEditor) ReadLine(prompt string) (string, error) {
	io.WriteString(e.prompt, prompt)
	line, err := e.r.ReadString('\n')
	if err == io.EOF && line != "" {
		err = nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (e *bufioEditor) AddHistory(string) {}
func (e *bufioEditor) Close() error      { return nil }

// readlineEditor is the terminal editor (chzyer/readline). It is used only
// when stdin and stdout are both terminals: on pipes readline is slow and
// pointless.
type readlineEditor struct {
	rl *readline.Instance
}

func newReadlineEditor(in *os.File, out, errOut io.Writer, completer readline.AutoCompleter) (*readlineEditor, error) {
	cfg := &readline.Config{
		Prompt:                 "kql> ",
		Stdin:                  readline.NewCancelableStdin(in),
		Stdout:                 out,
		Stderr:                 errOut,
		AutoComplete:           completer,
		DisableAutoSaveHistory: true, // one entry per statement, added by the REPL
		HistoryLimit:           historyMax,
		InterruptPrompt:        "^C",
		EOFPrompt:              "^D",
	}
	var ops atomic.Pointer[readline.Operation]
	// readline's completion list swallows Ctrl-C (it only closes the list),
	// so the typed line stayed and the next statement was glued to it.
	// Close the list first and let the interrupt clear the line as usual.
	cfg.FuncFilterInputRune = func(r rune) (rune, bool) {
		if op := ops.Load(); r == readline.CharInterrupt && op != nil && op.IsInCompleteMode() {
			op.ExitCompleteMode(false)
		}
		return r, true
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return nil, err
	}
	ops.Store(rl.Operation)
	return &readlineEditor{rl: rl}, nil
}

func (e *readlineEditor) ReadLine(prompt string) (string, error) {
	e.rl.SetPrompt(prompt)
	line, err := e.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errInterrupted
	}
	return line, err
}

func (e *readlineEditor) AddHistory(entry string) { e.rl.SaveHistory(oneLine(entry)) }
func (e *readlineEditor) Close() error            { return e.rl.Close() }
