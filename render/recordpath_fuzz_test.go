package render

import (
	"bytes"
	"testing"

	"github.com/kql-dev/kql/result"
)

// Random records through every format, narrow and wide: the record writers
// write byte for byte what the row writers write.
func FuzzRecordPathMatchesRowPath(f *testing.F) {
	f.Add(int32(0), int64(0), int64(0), []byte("k"), []byte("v"), "h", []byte("hv"), false, false, uint8(0))
	f.Add(int32(-1), int64(-5), int64(-62135596800001), []byte{0xff}, []byte("x'AB'"), "x'00'", []byte{0xc3}, true, true, uint8(9))
	f.Add(int32(7), int64(1<<62), int64(1<<53), []byte("\u202e\r\n"), []byte{}, "", []byte(nil), false, true, uint8(200))
	f.Fuzz(func(t *testing.T, p int32, off, ts int64, key, value []byte, hk string, hv []byte, nullKey, nullValue bool, width uint8) {
		if nullKey {
			key = nil
		}
		if nullValue {
			value = nil
		}
		recs := func() []result.Record {
			return []result.Record{
				{Partition: p, Offset: off, Timestamp: ts, Key: key, Value: value, Headers: []result.Header{{Key: hk, Value: hv}, {Key: string(key), Value: value}}},
				{Partition: p, Offset: off, Timestamp: ts, Key: value, Value: key},
			}
		}
		for _, fm := range []Format{Table, JSON, JSONL, CSV, TSV, Expanded} {
			for _, w := range []int{0, int(width)} {
				var fast, slow bytes.Buffer
				opt := Options{Format: fm, Footer: true, Width: w}
				n1, err1 := Render(&fast, &recordSlice{recs: recs()}, opt)
				n2, err2 := Render(&slow, rowsOnly{&recordSlice{recs: recs()}}, opt)
				if (err1 == nil) != (err2 == nil) || n1 != n2 || fast.String() != slow.String() {
					t.Fatalf("%s width %d: record path (%d rows, %v):\n%q\nrow path (%d rows, %v):\n%q", fm, w, n1, err1, fast.String(), n2, err2, slow.String())
				}
			}
		}
	})
}
