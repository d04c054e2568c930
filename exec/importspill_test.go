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
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// lowSpillBudget makes every import's spill of checked records go to its
// temporary file after a few KiB, and every transaction hold 100 records.
func lowSpillBudget(t *testing.T) {
	oldBudget, oldTxn := spillMemBudget, importTxnRecords
	spillMemBudget, importTxnRecords = 4<<10, 100
	t.Cleanup(func() { spillMemBudget, importTxnRecords = oldBudget, oldTxn })
}

// The write pass writes what the check pass decoded: a bad line at the end
// of a file bigger than one transaction and than the in-memory spill still
// writes nothing, and a good file written from the spill file is the same
// records as its export, every awkward field kept.
func TestImportSpilledToAFile(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		lowSpillBudget(t)

		t.Run("a bad last line writes nothing", func(t *testing.T) {
			dst := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, dst, 6, 3, nil)
			var sb strings.Builder
			const good = 3000 // 30 transactions, about 60 KiB of spill
			for i := 1; i <= good; i++ {
				fmt.Fprintf(&sb, `{"key":"key-%d","value":"value %d, some text to fill the spill"}`+"\n", i, i)
			}
			sb.WriteString(`{"key":"last","value":"x'0'"}` + "\n")
			path := filepath.Join(t.TempDir(), "bad-at-the-end.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o600))
			_, err := importFile(t, s, dst, path, "jsonl", false)
			require.ErrorContains(t, err, fmt.Sprintf("%s:%d:15: value: x'0' is not a hex literal", path, good+1))
			require.ErrorContains(t, err, "nothing was written")
			requireEmpty(t, s, dst)
		})

		t.Run("a good file round-trips through the spill file", func(t *testing.T) {
			src, cl, _ := createSpreadTopic(t, b)
			var recs []*kgo.Record
			for c := range 40 { // 960 records: spilled to the file, 10 transactions
				for _, r := range awkwardRecords(src) {
					r.Timestamp = r.Timestamp.Add(time.Duration(c) * 24 * time.Second) // each its own
					recs = append(recs, r)
				}
			}
			require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
			want := committedEventually(t, s, src, len(recs))
			path := export(t, s, src, "jsonl")
			dst := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, dst, 6, 3, nil)
			_, err := importFile(t, s, dst, path, "jsonl", true)
			require.NoError(t, err)
			require.Equal(t, recordsOf(want, true), recordsOf(committedEventually(t, s, dst, len(want)), true))
		})

		t.Run("a spill that cannot be written decodes the file again", func(t *testing.T) {
			src, cl, _ := createSpreadTopic(t, b)
			var recs []*kgo.Record
			for c := range 20 { // 480 records: past the budget, 5 transactions
				for _, r := range awkwardRecords(src) {
					r.Timestamp = r.Timestamp.Add(time.Duration(c) * 24 * time.Second)
					recs = append(recs, r)
				}
			}
			require.NoError(t, cl.ProduceSync(ctxT(t), recs...).FirstErr())
			want := committedEventually(t, s, src, len(recs))
			path := export(t, s, src, "jsonl")
			dst := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, dst, 6, 3, nil)
			t.Setenv("TMPDIR", filepath.Join(filepath.Dir(path), "no such directory"))
			_, err := importFile(t, s, dst, path, "jsonl", true)
			require.NoError(t, err)
			require.Equal(t, recordsOf(want, true), recordsOf(committedEventually(t, s, dst, len(want)), true))
		})
	})
}

// spillFilesOpen counts this process's open descriptors of an import's
// spill file (unlinked, so its link ends in "(deleted)").
func spillFilesOpen(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.Contains(target, "kql-import-") && strings.Contains(target, ".spill") {
			n++
		}
	}
	return n
}

// A file import cancelled while it writes from its spill file: the error
// names the last committed line, and the spill file, unlinked from the
// start, is closed (its disk space freed) when the statement ends. The
// cancel comes while the test holds the second commit on kfake's hooks.
func TestImportFromASpillFileCancelledClosesIt(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 6)
	lowSpillBudget(t)
	var sb strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&sb, `{"key":"key-%d","value":"value %d, some text to fill the spill"}`+"\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "three-transactions.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(sb.String()), 0o600))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	commit := holdSecondCommit(t, f)

	before := spillFilesOpen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Execute(ctx, &lang.Produce{Topic: "dst", From: &lang.ImportSource{File: path, Format: "jsonl"}})
		done <- err
	}()
	select {
	case <-commit.held:
	case err := <-done:
		t.Fatalf("the import ended (%v) before its second commit", err)
	}
	require.Equal(t, before+1, spillFilesOpen(t), "the spill is in a file while the import writes")
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries, "the spill file is unlinked while open")
	cancel()
	err = <-done
	commit.now()
	require.ErrorContains(t, err, "cancelled")
	require.ErrorContains(t, err, "input lines 1-100 were committed (1 transaction)")
	require.Equal(t, before, spillFilesOpen(t), "the spill file is closed when the statement ends")
	require.Len(t, committedRows(t, f.sess, "dst"), 100)
}

// A file imported through VALUE SCHEMA keeps the encoded values in its
// spill: a value that does not fit the schema on the last line writes
// nothing and names the line, and a good file reads back as the JSON it
// was written as, every value encoded with the subject's latest schema.
func TestImportThroughAValueSchemaSpilledToAFile(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		dst, _, _ := createSpreadTopic(t, b)
		fx := registerSchemas(t, testRegistryURL(t, b), dst)
		s, _ := session(t, b)
		s.Registry = fx.reg
		lowSpillBudget(t)
		var sb strings.Builder
		const n = 250 // 3 transactions, past the in-memory budget
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&sb, `{"key":"k-%d","value":"{\"id\": %d, \"amount\": 1.5, \"at\": 0, \"status\": \"PAID\", \"note\": \"payment number %d\"}"}`+"\n", i, i, i)
		}
		good := sb.String()
		dir := t.TempDir()
		bad := filepath.Join(dir, "bad.jsonl")
		require.NoError(t, os.WriteFile(bad, []byte(good+`{"key":"k-x","value":"{\"id\": \"not a number\"}"}`+"\n"), 0o600))
		_, _, err := run(t, s, &lang.Produce{Topic: dst, From: &lang.ImportSource{File: bad, Format: "jsonl"}, ValueSchema: &lang.SchemaRef{Subject: fx.avroSubject}})
		require.ErrorContains(t, err, fmt.Sprintf("%s:%d:", bad, n+1))
		require.ErrorContains(t, err, ": value: subject "+fx.avroSubject)
		require.ErrorContains(t, err, `field id: expected an integer, got "not a number"`)
		require.Equal(t, 1, strings.Count(err.Error(), "nothing was written"), "said once: %v", err)
		requireEmpty(t, s, dst)

		path := filepath.Join(dir, "good.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(good), 0o600))
		_, _, err = run(t, s, &lang.Produce{Topic: dst, From: &lang.ImportSource{File: path, Format: "jsonl"}, ValueSchema: &lang.SchemaRef{Subject: fx.avroSubject}})
		require.NoError(t, err)
		committedEventually(t, s, dst, n)
		rows, _, _ := query(t, s, fmt.Sprintf("SELECT key, value, value_schema_id FROM %s LIMIT ALL", lang.QuoteName(dst)))
		require.Len(t, rows, n)
		got := map[string]string{}
		for _, r := range rows {
			require.EqualValues(t, fx.avroV2, r[2])
			got[string(r[0].([]byte))] = string(r[1].(result.JSON))
		}
		for i := 1; i <= n; i++ {
			require.Equal(t, fmt.Sprintf(`{"id":%d,"amount":1.50,"at":"1970-01-01T00:00:00.000Z","status":"PAID","note":"payment number %d"}`, i, i), got[fmt.Sprint("k-", i)])
		}
	})
}
