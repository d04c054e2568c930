package exec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/result"
)

// explainBrokers is, per api, the brokers EXPLAIN's rows name.
func explainBrokers(rows []result.Row) map[string]map[int32]bool {
	out := map[string]map[int32]bool{}
	for _, r := range rows {
		api := r[1].(string)
		if out[api] == nil {
			out[api] = map[int32]bool{}
		}
		if b, ok := r[2].(int64); ok {
			out[api][int32(b)] = true
		}
	}
	return out
}

// EXPLAIN of an INSERT shows both sides, and the routes it names are the
// ones the statement then takes: the source's leaders for Fetch, the
// destination's leaders for Produce, the transaction coordinator of the
// very id the statement runs under for InitProducerId and EndTxn.
func TestExplainMoveNamesTheRoutesTaken(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		src, _ := spreadTopic(t, b, 2)
		dst := kafkatest.TopicName(t)
		spreadDest(t, b, dst, 3)

		stmt := fmt.Sprintf("INSERT INTO %q SELECT * FROM %q EXECUTE", dst, src)
		// A first transaction makes the cluster create __transaction_state,
		// so that EXPLAIN finds a coordinator rather than naming the rule.
		mustRun(t, s, parse(t, stmt))
		rows, _ := mustRun(t, s, parse(t, "EXPLAIN "+stmt))
		plan := explainBrokers(rows)
		require.Len(t, plan["Fetch"], 3, "the source side: Fetch from its 3 leaders")
		require.Len(t, plan["Produce"], 3, "the destination side: Produce to its 3 leaders")
		require.Len(t, plan["EndTxn"], 1)
		tr.reset()
		mustRun(t, s, parse(t, stmt))
		for api, want := range map[string]map[int32]bool{"Produce": plan["Produce"], "EndTxn": plan["EndTxn"], "InitProducerId": plan["InitProducerId"]} {
			got := map[int32]bool{}
			for id := range tr.count(api) {
				got[id] = true
			}
			require.Equal(t, want, got, "%s went where EXPLAIN said", api)
		}

		dry, _ := mustRun(t, s, parse(t, fmt.Sprintf("EXPLAIN INSERT INTO %q SELECT * FROM %q", dst, src)))
		require.NotContains(t, explainBrokers(dry), "Produce", "a dry run writes nothing")

		path := filepath.Join(t.TempDir(), "in.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(`{"key":"a","value":"b"}`+"\n"), 0o600))
		rows, _ = mustRun(t, s, parse(t, fmt.Sprintf("EXPLAIN PRODUCE INTO %q FROM FILE '%s'", dst, path)))
		plan = explainBrokers(rows)
		require.Len(t, plan["Produce"], 3)
		require.Len(t, plan["EndTxn"], 1)
	})
}

// EXPLAIN names each statement's own transaction bound, records and bytes,
// as the writer then applies it: an import's and an INSERT's differ.
func TestExplainMoveNamesItsTransactionBound(t *testing.T) {
	f := newFake(t)
	f.spread(t, "src", 3)
	f.spread(t, "dst", 3)
	path := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"key":"a","value":"b"}`+"\n"), 0o600))
	endTxn := func(stmt string) string {
		rows, _ := mustRun(t, f.sess, parse(t, stmt))
		for _, r := range rows {
			if r[1] == "EndTxn" {
				return r[4].(string)
			}
		}
		t.Fatalf("no EndTxn in EXPLAIN: %v", rows)
		return ""
	}
	require.Contains(t, endTxn(fmt.Sprintf("EXPLAIN PRODUCE INTO dst FROM FILE '%s'", path)),
		fmt.Sprintf("at most %s records, %d MiB or %s", thousands(int64(importTxnRecords)), importTxnBytes>>20, importTxnAge))
	require.Contains(t, endTxn("EXPLAIN PRODUCE INTO dst FROM STDIN"),
		fmt.Sprintf("at most %s records, 16 MiB or %s", thousands(int64(streamTxnRecords)), streamTxnAge))
	require.Contains(t, endTxn("EXPLAIN INSERT INTO dst SELECT * FROM src EXECUTE"),
		fmt.Sprintf("at most %s records or 16 MiB", thousands(int64(insertTxnRecords))))
	require.NotEqual(t, importTxnBytes, int64(kafka.DefaultMaxTxnBytes), "a file's bound differs from INSERT's: each must be named")
	require.NotEqual(t, streamTxnRecords, insertTxnRecords, "the two bounds differ: each must be named")
}

// EXPLAIN of a PRODUCE from a regular file says what the PRODUCE does:
// the file is read once (every record checked whole first and kept in a
// spill, then written), not "read twice", which is what an older build did
// and a user sizing an import of a big file on slow storage would plan for.
func TestExplainImportFromFileSaysReadOnce(t *testing.T) {
	f := newFake(t)
	f.spread(t, "dst", 3)
	path := filepath.Join(t.TempDir(), "in.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"key":"k","value":"v"}`+"\n"), 0o600))
	rows, _ := mustRun(t, f.sess, parse(t, fmt.Sprintf("EXPLAIN PRODUCE INTO dst FROM FILE '%s'", path)))
	var read string
	for _, r := range rows {
		if s, ok := r[1].(string); ok && strings.HasPrefix(s, "Read FILE") {
			read = s
		}
	}
	require.Contains(t, read, "read once", "%v", rows)
	require.Contains(t, read, "checked first", "%v", rows)
	require.NotContains(t, read, "read twice")
}
