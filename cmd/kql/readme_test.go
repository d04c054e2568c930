package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The issue and docs/shell.md say the README documents installation, flags
// and the playground, with `go run ./cmd/kql --playground` as its first
// command; the repository has no README.md.
func TestReadmeStartsWithThePlayground(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	first := ""
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "go run ") || strings.HasPrefix(strings.TrimSpace(l), "kql ") {
			first = strings.TrimSpace(l)
			break
		}
	}
	if first != "go run ./cmd/kql --playground" {
		t.Fatalf("the README's first command is %q, want go run ./cmd/kql --playground", first)
	}
}
