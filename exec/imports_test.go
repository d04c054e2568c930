package exec

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// franzAllowed lists the non-test files of exec/ that may still import
// franz-go: none since the plan layer moved the merge and the follow
// stream into kafka/. Nothing may be added to it: a new request goes into
// kafka/ as a routing primitive that answers in kql's own types.
var franzAllowed = map[string]bool{}

// exec/ and its subpackages speak no wire protocol: kafka/ does.
func TestExecImportsNoFranzGo(t *testing.T) {
	bad := franzImporters(t, ".")
	for _, f := range bad {
		if !franzAllowed[f] {
			t.Errorf("%s imports franz-go: put the request in kafka/ as a routing primitive that answers in kql's own types", f)
		}
	}
	for f := range franzAllowed {
		found := false
		for _, b := range bad {
			found = found || b == f
		}
		if !found {
			t.Errorf("%s no longer imports franz-go: remove it from franzAllowed", f)
		}
	}
}

// The check itself can fail: a file that imports franz-go is found.
func TestFranzImportersFindsAnImport(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nimport (\n\t\"fmt\"\n\tk \"github.com/twmb/franz-go/pkg/kmsg\"\n)\n\nvar _ = fmt.Sprint\nvar _ k.Request\n"
	writeFile(t, filepath.Join(dir, "sub", "bad.go"), src)
	writeFile(t, filepath.Join(dir, "bad_test.go"), src) // a test file may
	writeFile(t, filepath.Join(dir, "good.go"), "package x\n\nimport \"fmt\"\n\nvar _ = fmt.Sprint\n")
	if got := franzImporters(t, dir); len(got) != 1 || got[0] != filepath.Join("sub", "bad.go") {
		t.Fatalf("franzImporters = %v, want [sub/bad.go]", got)
	}
}

// franzImporters returns the non-test Go files under root (relative to it)
// that import a franz-go package.
func franzImporters(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "github.com/twmb/franz-go" || strings.HasPrefix(p, "github.com/twmb/franz-go/") {
				rel, _ := filepath.Rel(root, path)
				out = append(out, rel)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
