package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
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
	rl    *readline.Instance
	pw    *secretLine
	stdin *readline.CancelableStdin
}

func newReadlineEditor(in *os.File, out, errOut io.Writer, completer readline.AutoCompleter) (*readlineEditor, error) {
	stdin := readline.NewCancelableStdin(in)
	cfg := &readline.Config{
		Prompt:                 "kql> ",
		Stdin:                  stdin,
		Stdout:                 out,
		Stderr:                 errOut,
		AutoComplete:           completer,
		DisableAutoSaveHistory: true, // one entry per statement, added by the REPL
		HistoryLimit:           historyMax,
		InterruptPrompt:        "^C",
		EOFPrompt:              "^D",
	}
	var ops atomic.Pointer[readline.Operation]
	pw := &secretLine{}
	cfg.FuncFilterInputRune = func(r rune) (rune, bool) {
		if pw.capture(r) {
			return r, false
		}
		// readline's completion list swallows Ctrl-C (it only closes the
		// list), so the typed line stayed and the next statement was glued
		// to it. Close the list first and let the interrupt clear the line.
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
	return &readlineEditor{rl: rl, pw: pw, stdin: stdin}, nil
}

// ReadPassword reads a line without echo through the editor, which owns
// the terminal (its reader goroutine may already hold the next keys, so a
// read past it would lose them). readline's own password mode swaps the
// editor's configuration under its reader goroutine, a data race
// (chzyer/readline 1.5.1: SetConfig against ioloop) that -race reported in
// CI; instead the input filter keeps the typed runes and the editor sees an
// empty line, so nothing is echoed and nothing can reach the history.
func (e *readlineEditor) ReadPassword(prompt string) ([]byte, error) {
	e.pw.start()
	e.rl.SetPrompt(prompt)
	_, err := e.rl.Readline()
	secret := e.pw.stop()
	if err != nil {
		return nil, err
	}
	return []byte(secret), nil
}

// secretLine collects a password's runes while a password is read. Its
// methods run on readline's reader goroutine (capture) and on the shell's
// (start, stop), hence the lock.
type secretLine struct {
	mu     sync.Mutex
	active bool
	runes  []rune
}

func (s *secretLine) start() {
	s.mu.Lock()
	s.active, s.runes = true, s.runes[:0]
	s.mu.Unlock()
}

func (s *secretLine) stop() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	secret := string(s.runes)
	for i := range s.runes {
		s.runes[i] = 0
	}
	s.active, s.runes = false, s.runes[:0]
	return secret
}

// capture reports whether r was taken as part of the password (so readline
// must not see it). Enter, Ctrl-C and the end of input pass to readline,
// which then returns the (empty) line, the interrupt or EOF; Ctrl-D ends
// the input only on an empty password, as on a shell's line.
func (s *secretLine) capture(r rune) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active {
		return false
	}
	switch r {
	case 0, readline.CharEnter, readline.CharCtrlJ, readline.CharInterrupt:
		return false
	case readline.CharDelete:
		return len(s.runes) > 0
	case readline.CharBackspace, readline.CharCtrlH:
		if len(s.runes) > 0 {
			s.runes = s.runes[:len(s.runes)-1]
		}
	case readline.CharCtrlU:
		s.runes = s.runes[:0]
	default:
		if r >= ' ' {
			s.runes = append(s.runes, r)
		}
	}
	return true
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

// Close stops the editor. readline wraps the configured stdin, so its own
// Close never cancels a read the terminal goroutine already started (one
// starts early whenever a key was filtered out, as a password's are); it
// then waits for that read forever. Cancelling our stdin first ends it.
func (e *readlineEditor) Close() error {
	e.stdin.Close()
	return e.rl.Close()
}
