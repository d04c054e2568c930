package main

import (
	"testing"

	"github.com/chzyer/readline"
)

// TestSecretLineKeepsWhatIsTypedAndHidesItFromTheEditor: while a password
// is read, every key but Enter, Ctrl-C and Ctrl-D on an empty password is
// kept from readline (so nothing is echoed or recalled), backspace and
// Ctrl-U edit what was typed, and outside a password nothing is taken.
func TestSecretLineKeepsWhatIsTypedAndHidesItFromTheEditor(t *testing.T) {
	var s secretLine
	if s.capture('a') {
		t.Fatal("a key was taken while no password is read")
	}
	s.start()
	if s.capture(readline.CharDelete) {
		t.Error("Ctrl-D on an empty password must reach readline (end of input)")
	}
	for _, r := range "pw1x" {
		if !s.capture(r) {
			t.Fatalf("%q reached readline", r)
		}
	}
	for _, r := range []rune{readline.CharBackspace, readline.CharTab, readline.CharPrev, readline.CharDelete, '!'} {
		if !s.capture(r) {
			t.Fatalf("%q reached readline while a password is typed", r)
		}
	}
	for _, r := range []rune{readline.CharEnter, readline.CharInterrupt, 0} {
		if s.capture(r) {
			t.Errorf("%q must reach readline: it ends the line", r)
		}
	}
	if got := s.stop(); got != "pw1!" {
		t.Errorf("password %q, want %q", got, "pw1!")
	}
	s.start()
	for _, r := range "wrong" {
		s.capture(r)
	}
	s.capture(readline.CharCtrlU)
	s.capture('z')
	if got := s.stop(); got != "z" {
		t.Errorf("after Ctrl-U: %q, want %q", got, "z")
	}
	if s.capture('q') {
		t.Error("a key was taken after the password was read")
	}
}
