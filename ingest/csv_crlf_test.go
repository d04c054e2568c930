package ingest

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// A CSV export of a key holding \r\n reads back to the same bytes: the
// quoted field spans two lines and its line break is kept as written.
func TestCSVQuotedCRLFSurvivesTheRoundTrip(t *testing.T) {
	recs := []result.Record{
		{Partition: 0, Offset: 0, Timestamp: 1767225600000, Key: []byte("a\r\nb"), Value: []byte("x\ny\r\nz")},
		{Partition: 0, Offset: 1, Timestamp: 1767225600000, Key: []byte("after"), Value: []byte("v")},
	}
	var out bytes.Buffer
	rf, err := render.ParseFormat("csv")
	require.NoError(t, err)
	_, err = render.Render(&out, &recordSlice{recs: recs}, render.Options{Format: rf})
	require.NoError(t, err)
	r := NewReader(&out, "x.csv", CSV, Options{})
	for _, want := range recs {
		got, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, string(want.Key), string(got.Key))
		require.Equal(t, string(want.Value), string(got.Value))
	}
}
