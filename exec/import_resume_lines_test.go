package exec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/ingest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
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
// the second commit, cancels the statement there and returns its error:
// the first 5 records are committed.
func importCancelledAtSecondCommit(t *testing.T, f *fake, st lang.Statement) error {
	t.Helper()
	return cancelledAtSecondCommit(t, f, context.Background(), st)
}

// cancelledAtSecondCommit is importCancelledAtSecondCommit under parent,
// for an import or an INSERT ... EXECUTE.
func cancelledAtSecondCommit(t *testing.T, f *fake, parent context.Context, st lang.Statement) error {
	t.Helper()
	oldFile, oldStream, oldAge, oldInsert := importTxnRecords, streamTxnRecords, streamTxnAge, insertTxnRecords
	importTxnRecords, streamTxnRecords, streamTxnAge, insertTxnRecords = 5, 5, time.Hour, 5 // commits by count only
	t.Cleanup(func() {
		importTxnRecords, streamTxnRecords, streamTxnAge, insertTxnRecords = oldFile, oldStream, oldAge, oldInsert
	})
	commit := holdSecondCommit(t, f)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- drain(f.sess.Execute(ctx, st)) }()
	select {
	case <-commit.held:
	case err := <-done:
		t.Fatalf("the statement ended (%v) before its second commit", err)
	}
	cancel()
	// The commit is answered (refused) at once: whether the writer sees
	// that or the cancel first, it aborts the transaction, and the tests
	// hold for both (held until the statement ends, the abort waited 10 s
	// for the coordinator).
	commit.now()
	err := <-done
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

// resumeCommand is the shell command a FORMAT json import's error gives to
// make the rest of the input an array again.
var resumeCommand = regexp.MustCompile(`(?:made an array again: (?:pipe the input through )?)(\(echo '\['; tail -[nc] \+\d+(?: '[^']*')?\))`)

// The resume a FORMAT json import gives after a failure works as printed,
// whatever the layout: kql's own --format json (a comma at the end of each
// record's line), pretty-printed (jq), commas leading the next line,
// several records on a line, and several arrays. It said "resume with the
// lines after N", and tail -n +N+1 of an array is not an array.
func TestImportJSONResumeWorksAsPrinted(t *testing.T) {
	const n = 12 // committed: the first 5
	rec := func(i int) string { return fmt.Sprintf(`{"key":"key-%d","value":"%d"}`, i, i) }
	layouts := map[string]func() string{
		"kql's own": func() string {
			var b strings.Builder
			for i := 1; i <= n; i++ {
				b.WriteString(map[bool]string{true: "[\n", false: ",\n"}[i == 1] + rec(i))
			}
			return b.String() + "\n]\n"
		},
		"pretty": func() string {
			var b strings.Builder
			b.WriteString("[\n")
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&b, "  {\n    \"key\": \"key-%d\",\n    \"value\": \"%d\"\n  }", i, i)
				b.WriteString(map[bool]string{true: "\n", false: ",\n"}[i == n])
			}
			return b.String() + "]\n"
		},
		"leading commas": func() string {
			var b strings.Builder
			for i := 1; i <= n; i++ {
				b.WriteString(map[bool]string{true: "[ ", false: ", "}[i == 1] + rec(i) + "\n")
			}
			return b.String() + "]\n"
		},
		"several on a line": func() string {
			var b strings.Builder
			b.WriteString("[")
			for i := 1; i <= n; i++ {
				b.WriteString(rec(i))
				if i < n {
					b.WriteString(map[bool]string{true: ",\n", false: ", "}[i%4 == 0])
				}
			}
			return b.String() + "]"
		},
		"two arrays": func() string {
			var b strings.Builder
			for i := 1; i <= n; i++ {
				switch i {
				case 1, 6:
					b.WriteString("[\n")
				default:
					b.WriteString(",\n")
				}
				b.WriteString(rec(i))
				if i == 5 {
					b.WriteString("\n]\n")
				}
			}
			return b.String() + "\n]\n"
		},
	}
	for name, layout := range layouts {
		for _, stdin := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s stdin=%v", name, stdin), func(t *testing.T) {
				f := newFake(t)
				f.spread(t, "dst", 3)
				dir := t.TempDir()
				path := filepath.Join(dir, "in put.json") // a name the shell must have quoted
				require.NoError(t, os.WriteFile(path, []byte(layout()), 0o600))
				src := &lang.ImportSource{File: path, Format: "json"}
				if stdin {
					f.sess.Stdin = strings.NewReader(layout())
					src = &lang.ImportSource{Stdin: true, Format: "json"}
				}
				err := importCancelledAtSecondCommit(t, f, &lang.Produce{Topic: "dst", From: src})
				t.Log(err)
				m := resumeCommand.FindStringSubmatch(err.Error())
				require.NotNil(t, m, "the error gives a command: %v", err)
				if stdin {
					require.NotContains(t, m[1], path, "stdin has no file name")
				}
				cmd := osexec.Command("sh", "-c", m[1])
				if stdin {
					in, err := os.Open(path)
					require.NoError(t, err)
					defer in.Close()
					cmd.Stdin = in
				}
				cmd.Dir = dir
				rest, err := cmd.Output()
				require.NoError(t, err, "%s", m[1])
				f.sess.Stdin = bytes.NewReader(rest)
				mustRun(t, f.sess, &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "json"}})
				requireKeysOnce(t, f, "dst", n)
			})
		}
	}
}

// A stream cancelled while it waits for more input, after a commit: no
// record after the committed ones was read, so the rest of the input may
// begin with the , after the last one committed. The error says where the
// committed record ends, and following it (a [ before the rest, that ,
// left out) finishes the job without a duplicate.
func TestImportJSONStreamCancelledBetweenRecordsResumes(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	old := streamTxnAge
	streamTxnAge = 20 * time.Millisecond // the timer commits what came
	t.Cleanup(func() { streamTxnAge = old })
	const n = 8
	var in bytes.Buffer
	in.WriteString("[\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, `{"key":"key-%d","value":"%d"}`, i, i)
		if i < n {
			in.WriteString(" ,\n ")
		}
	}
	in.WriteString("]\n")
	data := in.Bytes()
	cut := bytes.Index(data, []byte(`{"key":"key-6"`)) - len(" ,\n ") // the first 5 records, then the pipe is quiet

	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	f.sess.Stdin = pr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Execute(ctx, &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "json"}})
		done <- err
	}()
	_, err := pw.Write(data[:cut])
	require.NoError(t, err)
	require.Len(t, committedEventually(t, f.sess, "dst", 5), 5)
	cancel()
	err = <-done
	require.Error(t, err)
	t.Log(err)
	m := regexp.MustCompile(`the input up to line (\d+), column (\d+) was committed \(\d+ transactions?\); resume with the input from byte (\d+) on \(after line \d+, column \d+\), made an array again: a \[ before it, and the , that follows the committed record left out$`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, "%v", err)
	require.Equal(t, "6", m[1])
	from, _ := strconv.Atoi(m[3])
	require.Equal(t, byte('}'), data[from-2], "byte %d is the first after the committed record", from)

	rest := bytes.TrimLeft(data[from-1:], " \n")
	require.Equal(t, byte(','), rest[0])
	f.sess.Stdin = io.MultiReader(strings.NewReader("["), bytes.NewReader(rest[1:]))
	mustRun(t, f.sess, &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "json"}})
	requireKeysOnce(t, f, "dst", n)
}

// What an import says is committed, in every case: a commit with no answer
// before anything was committed used to say "input lines 1-0 were
// committed (0 transactions)".
func TestImportResumeText(t *testing.T) {
	csvRec := importPos{line: 4, endLine: 6}
	for _, c := range []struct {
		name    string
		format  ingest.Format
		c       importCommitted
		unknown bool
		want    string
	}{
		{"nothing", ingest.CSV, importCommitted{}, false, "nothing was committed"},
		{"nothing, unknown", ingest.CSV, importCommitted{}, true, "nothing was committed before that transaction, which may be committed or not: read the topic (read_committed), and import the whole input again only if it is not there"},
		{"lines", ingest.CSV, importCommitted{last: csvRec}, false, "input lines 1-6 were committed (2 transactions); resume with the lines after 6"},
		{"lines, unknown", ingest.CSV, importCommitted{last: csvRec}, true, "input lines 1-6 were committed (2 transactions); the transaction after them may be committed or not: read the topic (read_committed), and resume with the lines after 6 only if it is not there"},
		{"json, next on a line of its own", ingest.JSON, importCommitted{
			last: importPos{line: 2, endLine: 4, span: ingest.Span{Offset: 2, End: 40, Col: 1, EndCol: 2, LineStart: true}},
			next: importPos{line: 6, endLine: 8, span: ingest.Span{Offset: 44, End: 80, Col: 1, EndCol: 2, LineStart: true}},
		}, false, "input lines 1-4 were committed (2 transactions); resume with the lines from 6 on, made an array again: (echo '['; tail -n +6 'it'\\''s.json')"},
		{"json, next after a comma on its line", ingest.JSON, importCommitted{
			last: importPos{line: 2, endLine: 2, span: ingest.Span{Offset: 2, End: 12, Col: 1, EndCol: 10, LineStart: true}},
			next: importPos{line: 3, endLine: 3, span: ingest.Span{Offset: 15, End: 25, Col: 3, EndCol: 12}},
		}, false, "input lines 1-2 were committed (2 transactions); resume with the input from line 3, column 3 (byte 16) on, made an array again: (echo '['; tail -c +16 'it'\\''s.json')"},
		{"json, next on the same line", ingest.JSON, importCommitted{
			last: importPos{line: 2, endLine: 2, span: ingest.Span{Offset: 2, End: 12, Col: 1, EndCol: 10, LineStart: true}},
			next: importPos{line: 2, endLine: 2, span: ingest.Span{Offset: 14, End: 24, Col: 13, EndCol: 22}},
		}, true, "the input up to line 2, column 10 was committed (2 transactions); the transaction after that may be committed or not: read the topic (read_committed), and only if it is not there, resume with the input from line 2, column 13 (byte 15) on, made an array again: (echo '['; tail -c +15 'it'\\''s.json')"},
		{"json, nothing read after it", ingest.JSON, importCommitted{
			last: importPos{line: 2, endLine: 2, span: ingest.Span{Offset: 2, End: 12, Col: 1, EndCol: 10, LineStart: true}},
		}, false, "the input up to line 2, column 10 was committed (2 transactions); resume with the input from byte 13 on (after line 2, column 10), made an array again: a [ before it, and the , that follows the committed record left out"},
	} {
		require.Equal(t, c.want, c.c.resumeText(c.format, "it's.json", false, "2 transactions", c.unknown), c.name)
	}
}

// The shell's summary line ("wrote N records ...") counts what is
// committed: after a failure it counted every record given to the writer,
// so a Ctrl-C'd import "wrote" records no read_committed reader sees. The
// statement says what is committed, and whether the rest was aborted or is
// in a commit that got no answer; a statement that succeeds committed all.
func TestMoveProgressEndsWithWhatIsCommitted(t *testing.T) {
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf(`{"key":"key-%d","value":"%d"}`, i, i))
	}
	for _, c := range []struct {
		name string
		st   func(f *fake, path string) lang.Statement
	}{
		{"file", func(f *fake, path string) lang.Statement {
			return &lang.Produce{Topic: "dst", From: &lang.ImportSource{File: path, Format: "jsonl"}}
		}},
		{"stdin", func(f *fake, path string) lang.Statement {
			f.sess.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
			return &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "jsonl"}}
		}},
		{"insert", func(f *fake, path string) lang.Statement {
			mustRun(t, f.sess, &lang.Produce{Topic: "src", From: &lang.ImportSource{File: path, Format: "jsonl"}})
			return parse(t, "INSERT INTO dst SELECT * FROM src EXECUTE")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.spread(t, "src", 3)
			f.spread(t, "dst", 3)
			path := filepath.Join(t.TempDir(), "in.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
			st := c.st(f, path)
			prog := &result.MoveProgress{}
			err := cancelledAtSecondCommit(t, f, result.WithMoveProgress(context.Background(), prog), st)
			s := prog.Snapshot()
			require.True(t, s.Ended, "the statement said what is committed")
			require.Equal(t, int64(10), s.Records, "records given to the writer")
			require.Equal(t, int64(5), s.Committed, "records committed")
			require.Greater(t, s.CommittedBytes, int64(0), "their bytes")
			require.Less(t, s.CommittedBytes, s.Bytes, "their bytes")
			if c.name != "insert" { // records 1-5: key-i and i
				require.Equal(t, int64(5*6), s.CommittedBytes, "their bytes")
			}
			require.Equal(t, strings.Contains(err.Error(), "its outcome is unknown"), s.Unsure, "the rest is unsure only when the commit got no answer: %v", err)

			// Success: everything given to the writer is committed.
			prog = &result.MoveProgress{}
			f.sess.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n") // as in a new run
			_, err = drainCtx(result.WithMoveProgress(context.Background(), prog), f.sess, st)
			require.NoError(t, err)
			s = prog.Snapshot()
			require.True(t, s.Ended)
			require.Equal(t, s.Records, s.Committed)
			require.Equal(t, s.Bytes, s.CommittedBytes)
			require.False(t, s.Unsure)
		})
	}
}

func drainCtx(ctx context.Context, s *Session, st lang.Statement) (struct{}, error) {
	return struct{}{}, drain(s.Execute(ctx, st))
}
