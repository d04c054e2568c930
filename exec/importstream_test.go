package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// mkfifo makes a named pipe in a temporary directory of the test.
func mkfifo(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records.jsonl")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	return path
}

// writeTwentyRecords opens the named pipe at path for writing (waiting for
// a reader), writes 20 jsonl records and closes it, and sends the outcome.
func writeTwentyRecords(path string, wrote chan<- error) {
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		wrote <- err
		return
	}
	for i := range 20 {
		fmt.Fprintf(w, `{"key":"k%d","value":"v%d"}`+"\n", i, i)
	}
	wrote <- w.Close()
}

// requireImportedTwenty checks that an import's rows count the 20 records
// writeTwentyRecords sent, and that dst holds them.
func requireImportedTwenty(t *testing.T, f *fake, rows []result.Row) {
	t.Helper()
	var n int64
	for _, r := range rows {
		n += r[2].(int64)
	}
	require.Equal(t, int64(20), n, "every record the writer sent: %v", rows)
	require.Len(t, committedEventually(t, f.sess, "dst", 20), 20)
}

// PRODUCE ... FROM FILE of a named pipe reads it once, as stdin: every
// record the writer sends is imported (a check pass would have read them
// all and left the write nothing).
func TestImportFromNamedPipeReadsItOnce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	path := mkfifo(t)
	wrote := make(chan error, 1)
	go writeTwentyRecords(path, wrote)
	rows, err := importFile(t, f.sess, "dst", path, "jsonl", false)
	require.NoError(t, err)
	require.NoError(t, <-wrote)
	requireImportedTwenty(t, f, rows)
}

// Ctrl-C during an import from a named pipe whose writer is quiet (open,
// not writing, not closing) ends it at once, with nothing committed. The
// cancel comes once the records written so far reached a Produce (held on
// kfake's hooks), so the import is waiting on the pipe for more.
func TestImportFromNamedPipeStopsAtCancel(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	path := mkfifo(t)
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			opened <- nil
			return
		}
		for i := range 3 {
			fmt.Fprintf(w, `{"key":"k%d","value":"v%d"}`+"\n", i, i)
		}
		opened <- w // kept open and quiet until the test ends
	}()
	var w *os.File
	t.Cleanup(func() {
		if w != nil {
			w.Close()
		}
	})
	produced := make(chan struct{})
	var once sync.Once
	f.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		once.Do(func() { close(produced) })
		return nil, nil, false
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Execute(ctx, &lang.Produce{Topic: "dst", From: &lang.ImportSource{File: path, Format: "jsonl"}})
		done <- err
	}()
	select {
	case <-produced:
	case err := <-done:
		t.Fatalf("the import ended (%v) before it produced", err)
	}
	w = <-opened
	require.NotNil(t, w)
	cancel()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "cancelled")
		require.ErrorContains(t, err, "nothing was committed")
	case <-time.After(time.Minute):
		t.Fatal("Ctrl-C did not end an import waiting on a named pipe")
	}
	require.Empty(t, committedRows(t, f.sess, "dst"), "the open transaction was aborted")
}

// Ctrl-C while the import waits for a writer to open the pipe ends it too:
// the open is released, and nothing of it outlives the call.
func TestOpenStreamStopsWaitingForAWriterAtCancel(t *testing.T) {
	path := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		r, err := openStream(ctx, path)
		if r != nil {
			r.Close()
		}
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
		require.True(t, strings.Contains(err.Error(), "cancelled while waiting for a writer to open "+path), err.Error())
	case <-time.After(time.Minute):
		t.Fatal("Ctrl-C did not end the wait for a writer")
	}
}

// EXPLAIN of a PRODUCE from a named pipe says it is read once, as the
// PRODUCE then does, not "read twice" as a regular file is: EXPLAIN opens
// nothing, so no writer is needed.
func TestExplainImportFromNamedPipeSaysReadOnce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	path := mkfifo(t)
	rows, _ := mustRun(t, f.sess, parse(t, fmt.Sprintf("EXPLAIN PRODUCE INTO dst FROM FILE '%s'", path)))
	var read string
	for _, r := range rows {
		if s, ok := r[1].(string); ok && strings.HasPrefix(s, "Read FILE") {
			read = s
		}
	}
	require.Contains(t, read, "read once", "%v", rows)
	require.NotContains(t, read, "read twice")
}

// Ctrl-C while the import waits for a writer, after the pipe was deleted
// or replaced by another (a writer can no longer reach the one kql holds):
// the import still ends at once, with the cancel as its error, and leaves
// no descriptor of the pipe open. The test deletes the pipe once kql
// waits on it (streamWaiting), not after a sleep.
func TestImportFromNamedPipeDeletedWhileWaitingStopsAtCancel(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(map[bool]string{false: "deleted", true: "replaced"}[replace], func(t *testing.T) {
			f := newFake(t)
			f.spread(t, "dst", 3)
			path := mkfifo(t)
			waiting := make(chan struct{})
			old := streamWaiting
			streamWaiting = func(string) { close(waiting) }
			t.Cleanup(func() { streamWaiting = old })

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				done <- drain(f.sess.Execute(ctx, parse(t, fmt.Sprintf("PRODUCE INTO dst FROM FILE %s", lang.Quote([]byte(path))))))
			}()
			select {
			case <-waiting:
			case err := <-done:
				t.Fatalf("the import ended (%v) before it waited for a writer", err)
			}
			require.NoError(t, os.Remove(path))
			if replace {
				require.NoError(t, syscall.Mkfifo(path, 0o600))
			}
			cancel()
			select {
			case err := <-done:
				require.Error(t, err)
				require.Contains(t, err.Error(), "cancelled while waiting for a writer to open "+path)
			case <-time.After(time.Minute):
				t.Fatal("Ctrl-C did not end an import waiting for a writer of a deleted pipe")
			}
			require.Empty(t, openFilesOf(t, path), "no descriptor of the pipe outlives the statement")
			require.Empty(t, committedRows(t, f.sess, "dst"))
		})
	}
}

// openFilesOf lists this process's descriptors open on path (also on a
// file deleted from it).
func openFilesOf(t *testing.T, path string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, path) {
			out = append(out, e.Name()+" -> "+target)
		}
	}
	return out
}

// A writer that opens the named pipe only after kql opened it and waits
// (streamWaiting), as `kql -e "PRODUCE ... FROM FILE 'p'" & sleep 5; cat
// x > p` does, is read in full: the non-blocking open that found no writer
// is no end of file (an empty import).
func TestImportFromNamedPipeWaitsForALateWriter(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	path := mkfifo(t)
	wrote := make(chan error, 1)
	old := streamWaiting
	streamWaiting = func(string) {
		go writeTwentyRecords(path, wrote)
	}
	t.Cleanup(func() { streamWaiting = old })
	rows, err := importFile(t, f.sess, "dst", path, "jsonl", false)
	require.NoError(t, err)
	require.NoError(t, <-wrote)
	requireImportedTwenty(t, f, rows)
	require.Empty(t, openFilesOf(t, path), "no descriptor of the pipe outlives the statement")
}

// FROM FILE '/dev/stdin' (here /proc/self/fd/N) of an anonymous pipe whose
// writer already closed it, as `echo '{...}' | kql -e "PRODUCE ... FROM FILE
// '/dev/stdin'"`: the import reads what it holds and ends at its end (no
// wait for a writer that can never come).
func TestImportFromClosedAnonymousPipeEnds(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	fmt.Fprintln(w, `{"key":"k","value":"v"}`)
	require.NoError(t, w.Close())
	path := fmt.Sprintf("/proc/self/fd/%d", r.Fd())
	rows, err := importFile(t, f.sess, "dst", path, "jsonl", false)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, int64(1), rows[0][2], "the one record the closed pipe held: %v", rows)
}
