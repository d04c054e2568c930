package exec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// awkwardRecords are records whose every field is a corner case: binary
// keys and values, a tombstone, NULL and empty keys, repeated and NULL
// headers, old and distinct timestamps, on all six partitions.
func awkwardRecords(topic string) []*kgo.Record {
	// Recent: a real broker's retention (7 days) deletes older records
	// while the test runs.
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var out []*kgo.Record
	for i := 0; i < 24; i++ {
		r := &kgo.Record{Topic: topic, Partition: int32(i % 6), Timestamp: base.Add(time.Duration(i) * time.Second),
			Key: []byte(fmt.Sprintf("k%d", i)), Value: []byte(fmt.Sprintf(`{"n":%d}`, i))}
		switch i % 6 {
		case 1:
			r.Key, r.Value = []byte{0xff, 0x00, byte(i)}, []byte{0x80, 0x81} // binary
		case 2:
			r.Key = nil // NULL key
		case 3:
			r.Value = nil // a tombstone
		case 4:
			r.Key, r.Value = []byte{}, []byte("x'ab'") // empty key; text that looks like hex
		case 5:
			r.Headers = []kgo.RecordHeader{{Key: "h", Value: nil}, {Key: "h", Value: []byte("a=b, c")}, {Key: "bin", Value: []byte{0xfe}}, {Key: "h", Value: []byte{}}}
		}
		out = append(out, r)
	}
	return out
}

// export renders every record of topic as kql's --format f writes it.
func export(t *testing.T, s *Session, topic, format string) string {
	t.Helper()
	res, err := s.Execute(ctxT(t), &lang.Consume{Topic: topic, Limit: i64(1 << 30)})
	require.NoError(t, err)
	defer res.Close()
	f, err := render.ParseFormat(format)
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = render.Render(&buf, res, render.Options{Format: f})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "export."+format)
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o600))
	return path
}

// sameRecord is a record less its offset (a new topic assigns its own;
// transaction markers take offsets too).
type sameRecord struct {
	Partition int64
	Timestamp time.Time
	Key       []byte
	Value     []byte
	Headers   any
}

func recordsOf(rows []result.Row, withPartition bool) []sameRecord {
	var out []sameRecord
	for _, r := range rows {
		sr := sameRecord{Timestamp: r[2].(time.Time).UTC(), Headers: r[5]}
		if withPartition {
			sr.Partition = r[0].(int64)
		}
		if r[3] != nil {
			sr.Key = r[3].([]byte)
		}
		if r[4] != nil {
			sr.Value = r[4].([]byte)
		}
		out = append(out, sr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Timestamp.Before(out[j].Timestamp) })
	return out
}

func importFile(t *testing.T, s *Session, topic, path, format string, keep bool) ([]result.Row, error) {
	t.Helper()
	rows, _, err := run(t, s, &lang.Produce{Topic: topic, From: &lang.ImportSource{File: path, Format: format, KeepPartition: keep}})
	return rows, err
}

func TestExportThenImportRoundTrip(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, _ := session(t, b)
		src, cl, _ := createSpreadTopic(t, b)
		require.NoError(t, cl.ProduceSync(ctxT(t), awkwardRecords(src)...).FirstErr())
		want := committedRows(t, s, src)
		require.Len(t, want, 24)

		for _, format := range []string{"jsonl", "json", "csv", "tsv"} {
			path := export(t, s, src, format)

			t.Run(format+" keeping partitions", func(t *testing.T) {
				dst := kafkatest.TopicName(t)
				kafkatest.CreateTopic(t, b, dst, 6, 3, nil)
				rows, err := importFile(t, s, dst, path, format, true)
				require.NoError(t, err)
				require.Len(t, rows, 6, "one row per partition written")
				for _, r := range rows {
					require.Equal(t, int64(4), r[2], "records of partition %v", r[1])
					require.Nil(t, r[5], "no error")
				}
				require.Equal(t, recordsOf(want, true), recordsOf(committedEventually(t, s, dst, len(want)), true))
			})
			t.Run(format+" by key", func(t *testing.T) {
				dst := kafkatest.TopicName(t)
				kafkatest.CreateTopic(t, b, dst, 3, 3, nil)
				_, err := importFile(t, s, dst, path, format, false)
				require.NoError(t, err)
				got := committedEventually(t, s, dst, len(want))
				require.Equal(t, recordsOf(want, false), recordsOf(got, false))
				for _, r := range got {
					if r[3] != nil {
						require.Equal(t, int64(kafka.PartitionForKey(dst, r[3].([]byte), 3)), r[0], "a keyed record goes where the default partitioner puts it")
					}
				}
			})
		}

		t.Run("a bad line writes nothing and names the line", func(t *testing.T) {
			dst := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, dst, 6, 3, nil)
			path := filepath.Join(t.TempDir(), "bad.jsonl")
			require.NoError(t, os.WriteFile(path, []byte("{\"key\":\"a\",\"value\":\"1\"}\n{\"key\":\"b\",\"value\":\"2\"}\n{\"key\":\"c\",\"value\":\"x'0'\"}\n{\"value\":\"4\"}\n"), 0o600))
			_, err := importFile(t, s, dst, path, "jsonl", false)
			require.ErrorContains(t, err, path+":3:12: value: x'0' is not a hex literal")
			require.ErrorContains(t, err, "nothing was written")
			requireEmpty(t, s, dst)
		})

		t.Run("keeping a partition the target lacks writes nothing", func(t *testing.T) {
			dst := kafkatest.TopicName(t)
			kafkatest.CreateTopic(t, b, dst, 3, 3, nil)
			path := export(t, s, src, "jsonl")
			_, err := importFile(t, s, dst, path, "jsonl", true)
			// The first record of partition 3 is the export's 4th line; its
			// "partition" field starts at column 2.
			require.ErrorContains(t, err, fmt.Sprintf("%s:4:2: partition: KEEP PARTITION, but topic %q has no partition 3; its partitions are 0-2", path, dst))
			require.ErrorContains(t, err, "nothing was written")
			requireEmpty(t, s, dst)
		})
	})
}

// requireEmpty checks that no record, committed or not, reached topic: its
// end offsets are all 0.
func requireEmpty(t *testing.T, s *Session, topic string) {
	t.Helper()
	rows, _ := mustRun(t, s, &lang.DescribeTopic{Topic: topic})
	for _, r := range rows {
		require.Equal(t, int64(0), r[5], "partition %v end offset", r[0])
	}
}

// An import from stdin cancelled in its second transaction: the first is
// committed, the second aborted (none of it visible to read_committed,
// though some of it reached the log), the error names the last committed
// line, and importing the lines after it finishes the job without a
// duplicate. The cancel happens while the test holds a Produce of the
// second transaction on kfake's hooks.
func TestImportFromStdinCancelledMidStreamResumes(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 6)
	old, oldAge := streamTxnRecords, streamTxnAge
	streamTxnRecords, streamTxnAge = 5, time.Hour // commits by count only: the held one is the second
	t.Cleanup(func() { streamTxnRecords, streamTxnAge = old, oldAge })

	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf(`{"key":"key-%d","value":"%d"}`, i, i))
	}
	// The second EndTxn (the commit of lines 6-12, every record of which
	// is in the log by then) is held until the statement is cancelled,
	// then answered TRANSACTION_ABORTABLE: whichever the writer sees
	// first, the cancel or the answer, it aborts.
	commit := holdSecondCommit(t, f)

	f.sess.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := f.sess.Execute(ctx, &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "jsonl"}})
		done <- err
	}()
	select {
	case <-commit.held:
	case err := <-done:
		t.Fatalf("the import ended (%v) before its second commit", err)
	}
	cancel()
	err := <-done // the commit's answer is still held: kql never gets it
	commit.now()
	require.Error(t, err)
	require.ErrorContains(t, err, "cancelled")
	// No answer to the commit: kql must not claim it was aborted.
	require.ErrorContains(t, err, "its outcome is unknown")
	require.ErrorContains(t, err, "input lines 1-5 were committed (1 transaction); the transaction after them may be committed or not")
	require.ErrorContains(t, err, "resume with the lines after 5 only if it is not there")
	require.NotContains(t, err.Error(), "nothing of it is visible")

	got := committedRows(t, f.sess, "dst")
	require.Len(t, got, 5, "only the committed transaction is visible")
	var logged int64
	rows, _ := mustRun(t, f.sess, &lang.DescribeTopic{Topic: "dst"})
	for _, r := range rows {
		logged += r[5].(int64)
	}
	require.GreaterOrEqual(t, logged, int64(12), "the aborted records reached the log: only read_committed hides them")

	// The resume: the lines after 5.
	f.sess.Stdin = strings.NewReader(strings.Join(lines[5:], "\n") + "\n")
	mustRun(t, f.sess, &lang.Produce{Topic: "dst", From: &lang.ImportSource{Stdin: true, Format: "jsonl"}})
	got = committedEventually(t, f.sess, "dst", 12)
	seen := map[string]bool{}
	for _, r := range got {
		k := string(r[3].([]byte))
		require.False(t, seen[k], "%s written twice", k)
		seen[k] = true
	}
	require.Len(t, seen, 12, "every line exactly once")
}
