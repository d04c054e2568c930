package render

import (
	"bytes"
	"testing"
)

// sizesWriter records the size of every write.
type sizesWriter struct {
	bytes.Buffer
	sizes []int
}

func (w *sizesWriter) Write(p []byte) (int, error) {
	w.sizes = append(w.sizes, len(p))
	return w.Buffer.Write(p)
}

// The encoding read writes runs of records, most a buffer's worth or more
// (written directly, with no copy), some short (a run cut before a record
// that waits for a Fetch): every write system call but the last still
// writes a whole buffer or more, never the small rest of a run.
func TestOutputWritesWholeBuffers(t *testing.T) {
	var w sizesWriter
	o := newOutput(&w)
	var want []byte
	runs := []int{100, outputBuffer + 1, 3000, outputBuffer + 500, outputBuffer + 7, 10, 20, 2*outputBuffer + 3, 5}
	for i, n := range runs {
		run := bytes.Repeat([]byte{byte('a' + i)}, n)
		want = append(want, run...)
		require.NoError(t, o.write(run))
	}
	require.NoError(t, o.close())
	require.Equal(t, want, w.Bytes())
	for i, n := range w.sizes[:len(w.sizes)-1] {
		require.True(t, n >= outputBuffer, "write %d of %v", i, w.sizes)
	}
}
