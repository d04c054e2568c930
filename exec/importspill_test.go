package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/kafka/kafkatest"
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
