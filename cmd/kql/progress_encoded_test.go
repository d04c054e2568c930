package main

import (
	"bytes"
	"io"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/result"
)

// encodingRecords is a record stream that can hand its records out
// encoded, as a plain CONSUME does (result.EncodingStream), and says
// whether it was read that way.
type encodingRecords struct {
	n, i     int
	rec      result.Record
	enc      result.RecordEncoder
	buf      []byte
	stats    result.Stats
	encoding bool
}

func (e *encodingRecords) Columns() []result.Column { return result.RecordColumns }
func (e *encodingRecords) Err() error               { return nil }
func (e *encodingRecords) Close()                   {}
func (e *encodingRecords) Stats() *result.Stats     { return &e.stats }
func (e *encodingRecords) Next() (result.Row, bool) {
	r, ok := e.NextRecord()
	if !ok {
		return nil, false
	}
	return r.Row(), true
}

func (e *encodingRecords) NextRecord() (*result.Record, bool) {
	if e.i == e.n {
		return nil, false
	}
	e.rec = result.Record{Partition: int32(e.i % 3), Offset: int64(e.i), Timestamp: int64(e.i), Value: []byte("v" + strconv.Itoa(e.i))}
	e.i++
	return &e.rec, true
}

func (e *encodingRecords) EncodeWith(newEncoder func() result.RecordEncoder) bool {
	e.enc, e.encoding = newEncoder(), true
	return true
}

func (e *encodingRecords) NextEncoded() ([]byte, bool) {
	r, ok := e.NextRecord()
	if !ok {
		return nil, false
	}
	e.buf = e.enc(e.buf[:0], r)
	return e.buf, true
}

func (e *encodingRecords) AppendEncoded(dst []byte, size int) ([]byte, int, bool) {
	n := 0
	for len(dst) < size {
		r, ok := e.NextRecord()
		if !ok {
			return dst, n, false
		}
		dst = e.enc(dst, r)
		n++
	}
	return dst, n, true
}

// With stderr a terminal, progress counts the rows a statement writes; a
// CONSUME written as jsonl, csv or tsv keeps its encoding read through it
// (the records encoded in the reader's lanes, not on the writer's
// goroutine), writes what the record path writes, and is counted.
func TestProgressKeepsTheEncodingRead(t *testing.T) {
	for _, format := range []render.Format{render.JSONL, render.CSV, render.TSV} {
		t.Run(string(format), func(t *testing.T) {
			var want bytes.Buffer
			_, err := render.Render(&want, struct{ result.RecordStream }{&encodingRecords{n: 50}}, render.Options{Format: format})
			require.NoError(t, err)

			a := &app{ios: &IOStreams{ErrTTY: true}, stderr: io.Discard, opts: &options{}}
			res := &encodingRecords{n: 50}
			p := a.startProgress(res)
			defer p.stop()
			require.True(t, p.active, "progress runs on a terminal")
			var got bytes.Buffer
			n, err := render.Render(&got, p.result(), render.Options{Format: format})
			require.NoError(t, err)
			require.EqualValues(t, 50, n)
			require.True(t, res.encoding, "progress hid the encoding read: records were encoded on the writer's goroutine")
			require.Equal(t, want.String(), got.String())
			require.EqualValues(t, 50, p.rows.Load(), "progress counts the rows")
		})
	}
}
