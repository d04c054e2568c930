// Package history keeps the REPL's statement history in a file.
//
// The file holds one entry per line, so it stays a plain text file that
// line-based tools (and readline's own history format) can read. Inside an
// entry a backslash is written \\, a newline \n and a carriage return \r, so
// a multi-line statement is stored on one line and reloads as one entry with
// its line breaks intact (joining lines with spaces would change a statement
// with a -- comment or a multi-line string). When reading, a backslash before
// any character but \, n or r is kept as it is, so most lines written by hand
// or by another tool (`\x`, `\format json`) load unchanged.
//
// The file is created with mode 0600 in a directory created with mode 0700:
// statements can hold keys, values and names that are nobody else's business.
package history

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPath returns $XDG_STATE_HOME/kql/history when XDG_STATE_HOME is an
// absolute path, else ~/.kql_history, or "" when there is no home directory.
func DefaultPath() string {
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "kql", "history")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".kql_history")
}

// History is the statements of past sessions and this one, oldest first.
// It is not safe for concurrent use.
type History struct {
	path    string
	max     int
	entries []string
	closed  bool
}

// Open loads the history file at path, keeping its newest maxEntries entries,
// creating the file (0600) and its directory (0700) if needed and narrowing
// the mode of an existing file to 0600. An error names the path and says
// what could not be done; the shell then carries on without history.
func Open(path string, maxEntries int) (*History, error) {
	if path == "" {
		return nil, errors.New("history file: no path (no home directory and no XDG_STATE_HOME)")
	}
	if maxEntries <= 0 {
		return nil, fmt.Errorf("history file %s: the entry limit must be positive, got %d", path, maxEntries)
	}
	// Write through a symlink to its target, so an atomic rewrite replaces
	// the target rather than the link (a dotfile manager's link stays).
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fileError(path, "create its directory", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fileError(path, "open", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fileError(path, "stat", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("history file %s: not a regular file", path)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return nil, fileError(path, "make private (mode 0600)", err)
		}
	}
	all, err := readEntries(f)
	if err != nil {
		return nil, fileError(path, "read", err)
	}
	h := &History{path: path, max: maxEntries}
	h.entries = append([]string(nil), all[max(len(all)-maxEntries, 0):]...)
	if len(all) > maxEntries {
		if err := h.trim(); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Path returns the file the history is kept in.
func (h *History) Path() string { return h.path }

// Entries returns the entries, oldest first. The caller may keep the slice.
func (h *History) Entries() []string { return append([]string(nil), h.entries...) }

// Add records one statement. Surrounding white space is dropped; an empty
// entry, or one equal to the newest entry, is not recorded. Once the file
// holds more than the cap it is rewritten with the newest entries, through a
// temporary file renamed over it, so a crash never leaves it half written.
func (h *History) Add(entry string) error {
	if h.closed {
		return fmt.Errorf("history file %s: already closed", h.path)
	}
	entry = strings.TrimSpace(entry)
	if entry == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == entry) {
		return nil
	}
	h.entries = append(h.entries, entry)
	if len(h.entries) > h.max {
		h.entries = append(h.entries[:0], h.entries[len(h.entries)-h.max:]...)
	}
	// Append, then close: another kql may rewrite the file meanwhile, and an
	// open descriptor would keep writing to the file it replaced.
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fileError(h.path, "open", err)
	}
	_, werr := io.WriteString(f, encode(entry)+"\n")
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fileError(h.path, "write", err)
	}
	return h.trim()
}

// trim rewrites the file with its newest h.max entries when it holds more.
// It reads the file rather than trusting h.entries, so the entries another
// kql session appended meanwhile count towards the cap and are kept.
func (h *History) trim() error {
	f, err := os.Open(h.path)
	if err != nil {
		return fileError(h.path, "open", err)
	}
	all, err := readEntries(f)
	f.Close()
	if err != nil {
		return fileError(h.path, "read", err)
	}
	if len(all) <= h.max {
		return nil
	}
	all = all[len(all)-h.max:]

	tmp, err := os.CreateTemp(filepath.Dir(h.path), "."+filepath.Base(h.path)+".*")
	if err != nil { // CreateTemp makes the file 0600
		return fileError(h.path, "rewrite", err)
	}
	w := bufio.NewWriter(tmp)
	for _, e := range all {
		w.WriteString(encode(e))
		w.WriteByte('\n')
	}
	err = errors.Join(w.Flush(), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), h.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fileError(h.path, "rewrite", err)
	}
	return nil
}

// Close ends the history; later Adds fail. Every Add is already on disk.
func (h *History) Close() error {
	h.closed = true
	return nil
}

// fileError says which file, what could not be done, and why, without the
// path twice (os errors name the path themselves).
func fileError(path, what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return fmt.Errorf("history file %s: cannot %s: %w", path, what, err)
}

func readEntries(r io.Reader) ([]string, error) {
	var out []string
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			out = append(out, decode(line))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// encode writes an entry on one line: \\, \n and \r for a backslash,
// newline and carriage return.
func encode(s string) string {
	if !strings.ContainsAny(s, "\\\n\r") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// decode undoes encode; a backslash before any other character is kept.
func decode(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
