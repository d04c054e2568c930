package lang

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseImport(t *testing.T) {
	colon := ":"
	for _, c := range []struct {
		in   string
		want *ImportSource
	}{
		{"PRODUCE INTO orders FROM FILE 'orders.jsonl'", &ImportSource{File: "orders.jsonl", Format: "jsonl"}},
		{"produce orders from stdin format lines key delimiter ':' timestamp now", &ImportSource{Stdin: true, Format: "lines", KeyDelimiter: &colon, StampNow: true}},
		{"PRODUCE orders FROM FILE 'a.csv' FORMAT CSV KEEP PARTITION KEEP TIMESTAMP", &ImportSource{File: "a.csv", Format: "csv", KeepPartition: true}},
		{"PRODUCE orders FORMAT tsv PARTITION BY KEY FROM FILE 'a.tsv'", &ImportSource{File: "a.tsv", Format: "tsv"}},
	} {
		st, err := Parse(c.in)
		require.NoError(t, err, c.in)
		p := st.(*Produce)
		require.Equal(t, c.want, p.From, c.in)
		// The text form parses back to the same statement.
		again, err := Parse(Format(st))
		require.NoError(t, err, Format(st))
		require.Equal(t, st, again)
	}
	st, err := Parse("PRODUCE orders FROM FILE 'a' VALUE SCHEMA 'orders-value'")
	require.NoError(t, err)
	require.NotNil(t, st.(*Produce).ValueSchema, "a schema clause needs no literal in an import")
}
