package main

import (
	"fmt"
	"io"

	"github.com/chzyer/readline"
)

// promptNoEcho shows prompt on w and reads one line from the terminal fd
// without echoing it. Echo goes off before the prompt is written: a person
// types once they see the prompt, and a password typed in the moment between
// the prompt and a terminal still echoing would be shown on the screen (and
// in any recording of it). readline.ReadPassword turns echo off only when it
// starts reading, so it is called here with echo already off.
func promptNoEcho(fd int, w io.Writer, prompt string) ([]byte, error) {
	restore, err := echoOff(fd)
	if err != nil {
		return nil, fmt.Errorf("turning the terminal's echo off: %w", err)
	}
	defer restore()
	fmt.Fprint(w, prompt)
	pw, err := readline.ReadPassword(fd)
	fmt.Fprintln(w) // the Enter typed was not echoed either
	return pw, err
}
