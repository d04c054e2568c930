package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/lang"
)

// multiLineCSV is a header row and n csv records whose values hold a line
// break: record i is on lines 2i and 2i+1.
func multiLineCSV(n int) []string {
	lines := []string{"partition,offset,timestamp,key,value,headers"}
	for i := 1; i <= n; i++ {
		lines = append(lines, fmt.Sprintf(`,,,key-%d,"first line of %d`, i, i), fmt.Sprintf(`second line of %d",`, i))
	}
	return lines
}

// importCancelledAtSecondCommit runs st with 5-record transactions, holds
// the second commit, cancels the statement there and returns its error.
func importCancelledAtSecondCommit(t *testing.T, f *fake, st *lang.Produce) error {
	t.Helper()
	oldFile, oldStream, oldAge := importTxnRecords, streamTxnRecords, streamTxnAge
	importTxnRecords, streamTxnRecords, streamTxnAge = 5, 5, time.Hour // commits by count only
	t.Cleanup(func() { importTxnRecords, streamTxnRecords, streamTxnAge = oldFile, oldStream, oldAge })
	commit := holdSecondCommit(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Execute(ctx, st)
		done <- err
	}()
	select {
	case <-commit.held:
	case err := <-done:
		t.Fatalf("the import ended (%v) before its second commit", err)
	}
	cancel()
	err := <-done
	commit.now()
	require.Error(t, err)
	return err
}

// requireKeysOnce checks that topic holds key-1 ... key-n, each once.
func requireKeysOnce(t *testing.T, f *fake, topic string, n int) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range committedEventually(t, f.sess, topic, n) {
		seen[string(r[3].([]byte))]++
	}
	for i := 1; i <= n; i++ {
		require.Equal(t, 1, seen[fmt.Sprintf("key-%d", i)], "key-%d", i)
	}
	require.Len(t, seen, n)
}

// After a failure the import says which input lines were committed: up to
// the LAST line of the last record committed. It named that record's first
// line, so for records that span lines (a csv value with a line break) the
// resume began inside a committed record: its second half read as a record
// of its own, or the record was written twice.
func TestImportCommittedLinesEndWithTheLastCommittedRecord(t *testing.T) {
	const n = 12
	lines := multiLineCSV(n)
	// Records 1-5 are committed: record 5 ends on line 11.
	const last = 11

	t.Run("file", func(t *testing.T) {
		f := newFake(t)
		f.spread(t, "dst", 3)
		path := filepath.Join(t.TempDir(), "multi.csv")
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
		err := importCancelledAtSecondCommit(t, f, &lang.Produce{Topic: "dst", From: &lang.ImportSource{File: path, Format: "csv"}})
		require.ErrorContains(t, err, fmt.Sprintf("input lines 1-%d were committed (1 transaction)", last))
		require.ErrorContains(t, err, fmt.Sprintf("resume with the lines after %d", last))

		rest := filepath.Join(t.TempDir(), "rest.csv")
		require.NoError(t, os.WriteFile(rest, []byte(strings.Join(lines[last:], "\n")+"\n"), 0o600))
		mustRun(t, f.sess, &lang.Produce{Topic: "dst", From: &lang.ImportSource{File: rest, Format: "csv"}})
		requireKeysOnce(t, f, "dst", n)
	})

	t.Run("stdin", func(t *testing.T) {
		f := newFake(t)
		f.spread(t, "dst", 3)
		f.sess.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
		err := importCancelledAtSecondCommit(t, f, &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "csv"}})
		require.ErrorContains(t, err, fmt.Sprintf("input lines 1-%d were committed (1 transaction)", last))

		f.sess.Stdin = strings.NewReader(strings.Join(lines[last:], "\n") + "\n")
		mustRun(t, f.sess, &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "csv"}})
		requireKeysOnce(t, f, "dst", n)
	})
}
