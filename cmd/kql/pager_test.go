package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
