package main

import (
	"io"
	"os"
	"strconv"

	"github.com/chzyer/readline"
	"github.com/mattn/go-isatty"
)

// IOStreams holds the three standard streams and what kql knows about them.
// Every decision that depends on a terminal (banner, colour, progress, the
// line editor, a password prompt) reads this struct, never os.Std*, so tests
// can run the real command on buffers and say which stream is a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool

	// Width returns the terminal width of Out in columns, or 0 when unknown.
	Width func() int
	// Height returns the terminal height of Out in lines, or 0 when
	// unknown (nil: unknown).
	Height func() int
	// Getenv reads the environment (tests inject their own).
	Getenv func(string) string
}

// systemStreams inspects real streams: a stream is a terminal only if it is
// an *os.File whose descriptor is a terminal.
func systemStreams(in io.Reader, out, errOut io.Writer) *IOStreams {
	s := &IOStreams{In: in, Out: out, ErrOut: errOut, Getenv: os.Getenv}
	s.InTTY = isTerminal(in)
	s.OutTTY = isTerminal(out)
	s.ErrTTY = isTerminal(errOut)
	s.Width = func() int {
		if f, ok := out.(*os.File); ok && s.OutTTY {
			if w, _, err := readline.GetSize(int(f.Fd())); err == nil && w > 0 {
				return w
			}
		}
		if n, err := strconv.Atoi(s.Getenv("COLUMNS")); err == nil && n > 0 {
			return n
		}
		return 0
	}
	s.Height = func() int {
		if f, ok := out.(*os.File); ok && s.OutTTY {
			if _, h, err := readline.GetSize(int(f.Fd())); err == nil && h > 0 {
				return h
			}
		}
		if n, err := strconv.Atoi(s.Getenv("LINES")); err == nil && n > 0 {
			return n
		}
		return 0
	}
	return s
}

// height is the terminal height of Out, 0 when unknown.
func (s *IOStreams) height() int {
	if s.Height == nil {
		return 0
	}
	return s.Height()
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	return isatty.IsTerminal(f.Fd())
}

// fd returns the file descriptor of a stream that is an *os.File.
func fd(v any) (int, bool) {
	f, ok := v.(*os.File)
	if !ok {
		return 0, false
	}
	return int(f.Fd()), true
}
