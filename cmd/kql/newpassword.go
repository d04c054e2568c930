package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/chzyer/readline"
)

// newPasswordEnv gives CREATE USER and ALTER USER ... PASSWORD the new
// password in scripts and -e, where nobody can answer a prompt.
const newPasswordEnv = "KQL_NEW_PASSWORD"

// newPassword is the session's source of a SCRAM user's new password:
// $KQL_NEW_PASSWORD when set, else a prompt without echo, asked twice, on
// a terminal. The password never reaches a statement's text, so neither
// the history nor EXPLAIN nor an error can show it; no message here
// repeats it.
func (a *app) newPassword(ctx context.Context, user string) (string, error) {
	if pw, ok := lookupEnv(a.ios.Getenv, newPasswordEnv); ok {
		return pw, nil
	}
	read := a.readPassword
	if read == nil {
		fdIn, ok := fd(a.ios.In)
		if !ok || !a.ios.InTTY || !isTerminal(a.ios.In) {
			return "", fmt.Errorf("the new password of %q is read from $%s (there is no terminal to ask on, and a statement never holds a password on purpose): set it, as in %s=... kql ...",
				user, newPasswordEnv, newPasswordEnv)
		}
		read = func(prompt string) ([]byte, error) {
			return promptNoEcho(fdIn, a.stderr, prompt)
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	first, err := read(fmt.Sprintf("New password for user %s: ", user))
	if err != nil {
		return "", passwordReadError(user, err)
	}
	second, err := read(fmt.Sprintf("Retype the new password for user %s: ", user))
	if err != nil {
		return "", passwordReadError(user, err)
	}
	if string(first) != string(second) {
		return "", fmt.Errorf("the two passwords typed for %q differ", user)
	}
	return string(first), nil
}

func passwordReadError(user string, err error) error {
	if errors.Is(err, readline.ErrInterrupt) {
		return fmt.Errorf("no password for %q: cancelled (Ctrl-C)", user)
	}
	return fmt.Errorf("reading the new password of %q: %w", user, err)
}
