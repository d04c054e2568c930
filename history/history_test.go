package history

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func open(t *testing.T, path string, max int) *History {
	t.Helper()
	h, err := Open(path, max)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func add(t *testing.T, h *History, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
}

func equal(t *testing.T, want, got []string) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("entries\nwant %q\ngot  %q", want, got)
	}
}

func fileLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestOpenCreatesAPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "kql", "history")
	h := open(t, path, 100)
	equal(t, nil, h.Entries())
	if m := mode(t, path); m != 0o600 {
		t.Errorf("file mode %v, want 0600", m)
	}
	if m := mode(t, filepath.Dir(path)); m != 0o700 {
		t.Errorf("directory mode %v, want 0700", m)
	}
	add(t, h, "SHOW TOPICS;")
	if m := mode(t, path); m != 0o600 {
		t.Errorf("file mode after Add %v, want 0600", m)
	}
}

func TestOpenMakesAnExistingFilePrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(path, []byte("SHOW TOPICS;\nSHOW GROUPS;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // past any umask
		t.Fatal(err)
	}
	h := open(t, path, 100)
	equal(t, []string{"SHOW TOPICS;", "SHOW GROUPS;"}, h.Entries())
	if m := mode(t, path); m != 0o600 {
		t.Errorf("file mode %v, want 0600", m)
	}
}

func TestReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h := open(t, path, 100)
	add(t, h, "SHOW TOPICS;", "  DESCRIBE TOPIC orders;  ", "", "   ")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Add("late"); err == nil {
		t.Error("Add after Close succeeded")
	}
	equal(t, []string{"SHOW TOPICS;", "DESCRIBE TOPIC orders;"}, open(t, path, 100).Entries())
}

func TestConsecutiveDuplicatesDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h := open(t, path, 100)
	add(t, h, "a;", "a;", " a; ", "b;", "a;", "a;")
	want := []string{"a;", "b;", "a;"}
	equal(t, want, h.Entries())
	equal(t, want, fileLines(t, path))

	// The newest entry of the last session counts too.
	h2 := open(t, path, 100)
	add(t, h2, "a;")
	equal(t, want, h2.Entries())
}

func TestCap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h := open(t, path, 3)
	add(t, h, "1;", "2;", "3;", "4;", "5;")
	want := []string{"3;", "4;", "5;"}
	equal(t, want, h.Entries())
	equal(t, want, fileLines(t, path))
	if m := mode(t, path); m != 0o600 {
		t.Errorf("rewritten file mode %v, want 0600", m)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".history.*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
	equal(t, want, open(t, path, 3).Entries())

	// A file over a smaller cap is cut when opened.
	h2 := open(t, path, 2)
	equal(t, []string{"4;", "5;"}, h2.Entries())
	equal(t, []string{"4;", "5;"}, fileLines(t, path))
}

func TestMultiLineEntryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	stmt := "CONSUME orders -- newest first\n  FROM NEWEST\r\n  WHERE value = 'a\\nb\\\\'\n  LIMIT 5;"
	h := open(t, path, 100)
	add(t, h, stmt, `\format json`, `\x`)
	lines := fileLines(t, path)
	if len(lines) != 3 {
		t.Fatalf("file holds %d lines, want one per entry: %q", len(lines), lines)
	}
	equal(t, []string{stmt, `\format json`, `\x`}, open(t, path, 100).Entries())
}

func TestLinesWrittenByOthersLoadUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	if err := os.WriteFile(path, []byte("\\x\n\\format json\r\nSHOW TOPICS LIKE 'a\\_b';\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	equal(t, []string{`\x`, `\format json`, `SHOW TOPICS LIKE 'a\_b';`}, open(t, path, 100).Entries())
}

func TestTwoSessionsKeepEachOthersEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	a := open(t, path, 4)
	b := open(t, path, 4)
	add(t, a, "a1;", "a2;")
	add(t, b, "b1;", "b2;")
	add(t, a, "a3;") // over the cap: rewritten from the file, not from a's memory
	equal(t, []string{"a2;", "b1;", "b2;", "a3;"}, fileLines(t, path))
	add(t, b, "b3;") // b appends to the rewritten file, not to the one it replaced
	equal(t, []string{"b1;", "b2;", "a3;", "b3;"}, fileLines(t, path))
}

func TestSymlinkIsKept(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "kql_history")
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".kql_history")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h := open(t, link, 1)
	add(t, h, "1;", "2;") // the second Add rewrites
	info, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		t.Error("the rewrite replaced the symlink with a file")
	}
	equal(t, []string{"2;"}, fileLines(t, real))
}

func TestUnwritablePathIsAClearError(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "kql", "history")
	_, err := Open(path, 100)
	if err == nil {
		t.Fatal("Open under a regular file succeeded")
	}
	want := "history file " + path + ": cannot create its directory: not a directory"
	if err.Error() != want {
		t.Errorf("error\nwant %s\ngot  %s", want, err)
	}
	if !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("error %v does not wrap ENOTDIR", err)
	}

	// A file that becomes unwritable after Open: Add says so.
	path = filepath.Join(dir, "history")
	h := open(t, path, 100)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	err = h.Add("SHOW TOPICS;")
	if err == nil || !strings.HasPrefix(err.Error(), "history file "+path+": cannot open: ") {
		t.Errorf("Add to a directory: got %v", err)
	}

	// A directory where the file should be.
	if _, err := Open(path, 100); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of a directory: got %v", err)
	}
	if _, err := Open("", 100); err == nil {
		t.Error("Open with no path succeeded")
	}
	if _, err := Open(filepath.Join(dir, "h2"), 0); err == nil {
		t.Error("Open with a zero cap succeeded")
	}
}

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "/var/state")
	if got, want := DefaultPath(), "/var/state/kql/history"; got != want {
		t.Errorf("with XDG_STATE_HOME: %s, want %s", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "relative/state") // invalid per the XDG spec
	if got, want := DefaultPath(), filepath.Join(home, ".kql_history"); got != want {
		t.Errorf("with a relative XDG_STATE_HOME: %s, want %s", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "")
	if got, want := DefaultPath(), filepath.Join(home, ".kql_history"); got != want {
		t.Errorf("without XDG_STATE_HOME: %s, want %s", got, want)
	}
}
