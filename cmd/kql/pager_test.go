package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fatih/color"
)

// A result that trickles (fewer lines than a screen, then a wait) is not
// held back: what came is shown within holdFor, and the rest streams to the
// terminal without a pager, however long it gets.
func TestPagingWriterShowsATricklingResult(t *testing.T) {
	term, err := os.Create(filepath.Join(t.TempDir(), "term"))
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	a := &app{ios: &IOStreams{Getenv: func(string) string { return "/nonexistent/pager" }}, stderr: os.Stderr}
	pw := &pagingWriter{a: a, term: term, limit: 10}
	pw.Write([]byte("row 1\nrow 2\n"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(term.Name())
		if string(data) == "row 1\nrow 2\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first rows were held back: the terminal shows %q", data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pw.Write([]byte(strings.Repeat("more\n", 50)))
	if quit := pw.Close(); quit {
		t.Fatal("no pager ran, none was quit")
	}
	data, _ := os.ReadFile(term.Name())
	if got := strings.Count(string(data), "\n"); got != 52 {
		t.Fatalf("the terminal got %d lines, want 52", got)
	}
	if a.pagerBroken {
		t.Fatal("the pager was started for a result already on the screen")
	}
}

// $PAGER is a shell command, as for psql, git and man: a quoted path with
// a space and an argument runs that program with that argument.
func TestPagerCommandIsAShellCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my tools")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(dir, "got")
	script := "#!/bin/sh\necho \"args: $*\" > '" + got + "'\ncat >> '" + got + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "pager"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	term, err := os.Create(filepath.Join(t.TempDir(), "term"))
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	pagerEnv := `"` + filepath.Join(dir, "pager") + `" -R --prompt='a b'`
	a := &app{ios: &IOStreams{Getenv: func(string) string { return pagerEnv }}, stderr: os.Stderr, yellow: color.New()}
	pw := &pagingWriter{a: a, term: term, limit: 2}
	pw.Write([]byte("row 1\nrow 2\nrow 3\n"))
	if quit := pw.Close(); quit {
		t.Fatal("the pager read all and was not quit")
	}
	data, _ := os.ReadFile(got)
	if want := "args: -R --prompt=a b\nrow 1\nrow 2\nrow 3\n"; string(data) != want {
		t.Fatalf("the pager %s got %q, want %q", pagerEnv, data, want)
	}
	if a.pagerBroken {
		t.Fatal("the pager ran, and was taken for broken")
	}
}

// A pager run by the shell that is not there (the shell exits 127): the
// result is printed, with one warning, not lost.
func TestPagerNotFoundByTheShellPrintsTheResult(t *testing.T) {
	term, err := os.Create(filepath.Join(t.TempDir(), "term"))
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	var warn strings.Builder
	a := &app{ios: &IOStreams{Getenv: func(string) string { return `"/nonexistent/pager" -R` }}, stderr: &warn, yellow: color.New()}
	pw := &pagingWriter{a: a, term: term, limit: 2}
	pw.Write([]byte("row 1\nrow 2\nrow 3\n"))
	pw.Write([]byte("row 4\n"))
	if quit := pw.Close(); quit {
		t.Fatal("no pager ran, none was quit")
	}
	data, _ := os.ReadFile(term.Name())
	if want := "row 1\nrow 2\nrow 3\nrow 4\n"; string(data) != want {
		t.Fatalf("the terminal got %q, want %q", data, want)
	}
	if n := strings.Count(warn.String(), "did not start (the shell exited with status 127): printing the result instead"); n != 1 {
		t.Fatalf("want one warning, got:\n%s", warn.String())
	}
	if !a.pagerBroken {
		t.Fatal("the next result would try the missing pager again")
	}
}

// The lines let go by the timer are written as any other write of the
// result is: the progress line is erased first, not written after.
func TestPagingWriterErasesTheProgressLineBeforeTheHeldLines(t *testing.T) {
	term, err := os.Create(filepath.Join(t.TempDir(), "term"))
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	var errOut strings.Builder
	p := &progress{active: true, errOut: &errOut, shown: true}
	a := &app{ios: &IOStreams{Getenv: func(string) string { return "/nonexistent/pager" }}, stderr: os.Stderr}
	pw := &pagingWriter{a: a, term: term, limit: 10, around: p.interrupt}
	pw.Write([]byte("row 1\n"))
	deadline := time.Now().Add(10 * time.Second)
	for {
		pw.mu.Lock()
		direct := pw.direct
		pw.mu.Unlock()
		if direct {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the held line was never let go")
		}
		time.Sleep(20 * time.Millisecond)
	}
	pw.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	if errOut.String() != "\r\033[K" || p.shown {
		t.Fatalf("the progress line was not erased before the held lines: stderr got %q", errOut.String())
	}
}
