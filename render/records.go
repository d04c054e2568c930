package render

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kql-dev/kql/jsontext"
	"github.com/kql-dev/kql/result"
)

// The record path. A CONSUME hands out typed records (result.RecordStream)
// rather than rows of boxed values, and these writers encode them straight
// into the output buffer: no allocation per record, the same text as the
// row writers produce for the same values (render_test checks both paths
// against each other).

// recordStream returns res as a record stream when its columns are the six
// record columns, so the record writers apply.
func recordStream(res result.Result) (result.RecordStream, bool) {
	rs, ok := res.(result.RecordStream)
	if !ok {
		return nil, false
	}
	cols := rs.Columns()
	if len(cols) != len(result.RecordColumns) {
		return nil, false
	}
	for i, c := range cols {
		if c != result.RecordColumns[i] {
			return nil, false
		}
	}
	return rs, true
}

// eachRecord reads rs to the end and writes encode's bytes for every record.
// Output is flushed when the buffer fills and by the background flusher,
// not per row batch: a fast stream writes about once per 64 KiB.
func eachRecord(o *output, rs result.RecordStream, encode func(buf []byte, n int64, rec *result.Record) []byte) (int64, error) {
	var buf []byte
	var n int64
	for {
		rec, ok := rs.NextRecord()
		if !ok {
			return n, nil
		}
		buf = encode(buf[:0], n, rec)
		if err := o.write(buf); err != nil {
			return n, err
		}
		n++
	}
}

// recordEncoder holds the buffers the record writers reuse.
type recordEncoder struct {
	ts      timeFormatter
	scratch []byte
}

// text returns b's text form under the bytes rule: b itself when it is
// valid UTF-8 that does not look like a hex literal, else its hex literal
// (in the encoder's scratch buffer).
func (e *recordEncoder) text(b []byte) []byte {
	if utf8.Valid(b) && !looksHex(b) {
		return b
	}
	e.scratch = appendHex(e.scratch[:0], b)
	return e.scratch
}

var jsonRecordKeys = func() [6][]byte {
	var k [6][]byte
	for i, c := range result.RecordColumns {
		b := []byte{','}
		if i == 0 {
			b[0] = '{'
		}
		b = appendJSONString(b, []byte(c.Name))
		k[i] = append(b, ':')
	}
	return k
}()

func (e *recordEncoder) appendJSON(buf []byte, r *result.Record) []byte {
	buf = append(buf, jsonRecordKeys[0]...)
	buf = strconv.AppendInt(buf, int64(r.Partition), 10)
	buf = append(buf, jsonRecordKeys[1]...)
	buf = strconv.AppendInt(buf, r.Offset, 10)
	buf = append(buf, jsonRecordKeys[2]...)
	buf = append(buf, '"')
	buf = e.ts.append(buf, r.Timestamp)
	buf = append(buf, '"')
	buf = append(buf, jsonRecordKeys[3]...)
	buf = e.appendJSONField(buf, r.Key, r.KeySchema.Decoded)
	buf = append(buf, jsonRecordKeys[4]...)
	buf = e.appendJSONField(buf, r.Value, r.ValueSchema.Decoded)
	buf = append(buf, jsonRecordKeys[5]...)
	buf = append(buf, '[')
	for i, h := range r.Headers {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"key":`...)
		e.scratch = appendStringText(e.scratch[:0], h.Key)
		buf = appendJSONString(buf, e.scratch)
		buf = append(buf, `,"value":`...)
		buf = e.appendJSONBytes(buf, h.Value)
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	return append(buf, '}')
}

// appendJSONField writes a key or value: decoded by the schema registry, it
// is JSON text already and nests as it is.
func (e *recordEncoder) appendJSONField(buf, b []byte, decoded bool) []byte {
	if decoded && b != nil {
		return append(buf, b...)
	}
	return e.appendJSONBytes(buf, b)
}

func (e *recordEncoder) appendJSONBytes(buf, b []byte) []byte {
	if b == nil {
		return append(buf, "null"...)
	}
	// Text is checked as UTF-8 while it is escaped (one pass, not two);
	// what is not text, or reads as a hex literal, is written as hex.
	if !looksHex(b) {
		if out, ok := jsontext.AppendValidString(buf, b); ok {
			return out
		}
	}
	return appendJSONString(buf, e.text(b))
}

// eachEncoded is eachRecord for a stream that encodes its records itself,
// ahead of the writer and in parallel with it (result.EncodingStream), with
// encoders from newEncoder; ok is false, and nothing is read, when rs
// cannot.
func eachEncoded(o *output, rs result.RecordStream, newEncoder func() result.RecordEncoder) (n int64, ok bool, err error) {
	es, is := rs.(result.EncodingStream)
	if !is || !es.EncodeWith(newEncoder) {
		return 0, false, nil
	}
	// Runs of records are appended to one buffer and written at once:
	// one call (and one lock of the output) per run instead of per
	// record. Each record is still copied once, from its chunk into the
	// run, but a run of outputBuffer bytes or more then goes to the
	// output without a second copy into its buffer (bufio writes it
	// directly); a run cut short, before a record that waits for a
	// Fetch, is written (and flushed in time) before the wait.
	buf := make([]byte, 0, outputBuffer+outputBuffer/4)
	for {
		var k int
		var more bool
		buf, k, more = es.AppendEncoded(buf[:0], outputBuffer+1)
		if len(buf) > 0 {
			if err := o.write(buf); err != nil {
				return n, true, err
			}
		}
		n += int64(k)
		if !more {
			return n, true, nil
		}
		if cap(buf) > 4*outputBuffer {
			buf = make([]byte, 0, outputBuffer+outputBuffer/4) // an outsized record's
		}
	}
}

func newJSONLEncoder() result.RecordEncoder {
	e := &recordEncoder{}
	return func(buf []byte, r *result.Record) []byte {
		buf = e.appendJSON(buf, r)
		return append(buf, '\n')
	}
}

func newCSVEncoder() result.RecordEncoder {
	e := &recordEncoder{}
	return func(buf []byte, r *result.Record) []byte {
		return e.appendDelimited(buf, r, ',', "", appendCSVField)
	}
}

func newTSVEncoder() result.RecordEncoder {
	e := &recordEncoder{}
	return func(buf []byte, r *result.Record) []byte {
		return e.appendDelimited(buf, r, '\t', `\N`, appendTSVField)
	}
}

func writeJSONLRecords(o *output, rs result.RecordStream) (int64, error) {
	if n, ok, err := eachEncoded(o, rs, newJSONLEncoder); ok {
		return n, err
	}
	e := &recordEncoder{}
	return eachRecord(o, rs, func(buf []byte, _ int64, r *result.Record) []byte {
		buf = e.appendJSON(buf, r)
		return append(buf, '\n')
	})
}

func writeJSONRecords(o *output, rs result.RecordStream) (int64, error) {
	e := &recordEncoder{}
	n, err := eachRecord(o, rs, func(buf []byte, n int64, r *result.Record) []byte {
		return e.appendJSON(appendArraySeparator(buf, n), r)
	})
	return n, endArray(o, n, err)
}

// appendDelimited appends the record's six fields as text, each passed
// through field (CSV quoting or TSV escaping), with null for NULL.
func (e *recordEncoder) appendDelimited(buf []byte, r *result.Record, sep byte, null string, field func(buf, s []byte) []byte) []byte {
	buf = strconv.AppendInt(buf, int64(r.Partition), 10)
	buf = append(buf, sep)
	buf = strconv.AppendInt(buf, r.Offset, 10)
	buf = append(buf, sep)
	buf = e.ts.append(buf, r.Timestamp)
	buf = append(buf, sep)
	if r.Key == nil {
		buf = append(buf, null...)
	} else {
		buf = field(buf, e.text(r.Key))
	}
	buf = append(buf, sep)
	if r.Value == nil {
		buf = append(buf, null...)
	} else {
		buf = field(buf, e.text(r.Value))
	}
	buf = append(buf, sep)
	e.scratch = appendHeadersText(e.scratch[:0], r.Headers)
	buf = field(buf, e.scratch)
	return append(buf, '\n')
}

func writeCSVRecords(o *output, rs result.RecordStream) (int64, error) {
	if err := writeDelimitedHeader(o, ',', appendCSVField); err != nil {
		return 0, err
	}
	if n, ok, err := eachEncoded(o, rs, newCSVEncoder); ok {
		return n, err
	}
	e := &recordEncoder{}
	return eachRecord(o, rs, func(buf []byte, _ int64, r *result.Record) []byte {
		return e.appendDelimited(buf, r, ',', "", appendCSVField)
	})
}

func writeTSVRecords(o *output, rs result.RecordStream) (int64, error) {
	if err := writeDelimitedHeader(o, '\t', appendTSVField); err != nil {
		return 0, err
	}
	if n, ok, err := eachEncoded(o, rs, newTSVEncoder); ok {
		return n, err
	}
	e := &recordEncoder{}
	return eachRecord(o, rs, func(buf []byte, _ int64, r *result.Record) []byte {
		return e.appendDelimited(buf, r, '\t', `\N`, appendTSVField)
	})
}

func writeDelimitedHeader(o *output, sep byte, field func(buf, s []byte) []byte) error {
	var head []byte
	for i, c := range result.RecordColumns {
		if i > 0 {
			head = append(head, sep)
		}
		head = field(head, []byte(c.Name))
	}
	return o.write(append(head, '\n'))
}

// timeFormatter writes millisecond timestamps in TimeLayout without
// allocating: records close in time share their second, whose text is
// formatted once.
type timeFormatter struct {
	sec    int64
	prefix []byte // "2006-01-02T15:04:05." of sec
}

func (f *timeFormatter) append(buf []byte, ms int64) []byte {
	sec, frac := ms/1000, ms%1000
	if frac < 0 { // before 1970: the millisecond counts up from the second below
		sec, frac = sec-1, frac+1000
	}
	if f.prefix == nil || sec != f.sec {
		f.prefix = time.Unix(sec, 0).UTC().AppendFormat(f.prefix[:0], "2006-01-02T15:04:05.")
		f.sec = sec
	}
	buf = append(buf, f.prefix...)
	return append(buf, byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10), 'Z')
}
