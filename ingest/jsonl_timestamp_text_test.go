package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// jsonl takes epoch milliseconds as a string too, as csv does.
func TestJSONLTimestampAsEpochMillisecondText(t *testing.T) {
	r := NewReader(strings.NewReader(`{"timestamp":"1700000000000","value":"v"}`+"\n"), "in.jsonl", JSONL, Options{})
	rec, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, time.UnixMilli(1700000000000).UTC(), rec.Timestamp.UTC())
}
