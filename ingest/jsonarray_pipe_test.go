package ingest

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A FORMAT json record from a pipe is handed on as soon as it has come
// whole, whatever follows it in the same write (its comma, the array's
// closing ], whitespace), before the writer sends anything more: a stream
// import commits what it was handed within a second, so a record held back
// until the next one came would not be readable while the writer is quiet.
// And a mistake right after a record is reported while the writer is
// quiet, not once it writes 20 more bytes or closes the pipe.
func TestJSONFromAQuietPipeHandsOnWhatCameWhole(t *testing.T) {
	for _, c := range []struct{ first, rest string }{
		{"[\n{\"key\":\"a\"}", ",\n{\"key\":\"b\"}]\n"},
		{"[\n{\"key\":\"a\"},\n", "{\"key\":\"b\"}]\n"},    // kql --format json writes the comma before the next record; most writers after
		{"[\n{\"key\":\"a\"}\n]\n", "[{\"key\":\"b\"}]\n"}, // an array closed, the next statement's still to come
		{"[{\"key\":\"a\"} , ", "{\"key\":\"b\"} ]"},
	} {
		pr, pw := io.Pipe()
		got := make(chan string, 10)
		done := make(chan error, 1)
		go func() {
			done <- Scan(context.Background(), pr, "stdin", JSON, Options{}, ScanConfig{}, func(b *Batch) error {
				for _, r := range b.Records {
					got <- string(r.Key)
				}
				return nil
			})
		}()
		_, err := pw.Write([]byte(c.first))
		require.NoError(t, err)
		select {
		case k := <-got:
			require.Equal(t, "a", k, "%q", c.first)
		case <-time.After(10 * time.Second):
			t.Fatalf("%q: the record was not handed on while the pipe stayed quiet", c.first)
		}
		_, err = pw.Write([]byte(c.rest))
		require.NoError(t, err)
		require.NoError(t, pw.Close())
		require.NoError(t, <-done)
		require.Equal(t, "b", <-got)
	}

	// Something wrong after a record, the pipe then quiet.
	pr, pw := io.Pipe()
	defer pw.Close()
	done := make(chan error, 1)
	go func() {
		done <- Scan(context.Background(), pr, "stdin", JSON, Options{}, ScanConfig{}, func(*Batch) error { return nil })
	}()
	_, err := pw.Write([]byte("[{\"key\":\"a\"}] x\n"))
	require.NoError(t, err)
	select {
	case err := <-done:
		require.ErrorContains(t, err, `stdin:1:15: "x" after the array that ends at 1:13`)
	case <-time.After(10 * time.Second):
		t.Fatal("the mistake was not reported while the pipe stayed quiet")
	}
}
