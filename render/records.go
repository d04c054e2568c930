package render

import (
	"encoding/binary"
	"slices"
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

// appendJSON writes the record as the row writers write a row of
// RecordColumns: the keys are constants, so that each is stored in place
// rather than copied by a memmove call.
func (e *recordEncoder) appendJSON(buf []byte, r *result.Record) []byte {
	buf = append(buf, `{"partition":`...)
	buf = strconv.AppendInt(buf, int64(r.Partition), 10)
	buf = append(buf, `,"offset":`...)
	buf = strconv.AppendInt(buf, r.Offset, 10)
	buf = append(buf, `,"timestamp":"`...)
	buf = e.ts.append(buf, r.Timestamp)
	buf = append(buf, `","key":`...)
	buf = e.appendJSONField(buf, r.Key, r.KeySchema.Decoded)
	buf = append(buf, `,"value":`...)
	buf = e.appendJSONField(buf, r.Value, r.ValueSchema.Decoded)
	if len(r.Headers) == 0 {
		return append(buf, `,"headers":[]}`...)
	}
	buf = append(buf, `,"headers":[`...)
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
	return append(buf, "]}"...)
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
		return e.appendDelimited(buf, r, ',', "", `""`, appendCSVField, appendCSVValid)
	}
}

func newTSVEncoder() result.RecordEncoder {
	e := &recordEncoder{}
	return func(buf []byte, r *result.Record) []byte {
		return e.appendDelimited(buf, r, '\t', `\N`, "", appendTSVField, appendTSVValid)
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
// through field (CSV quoting or TSV escaping), with null for NULL. A key or
// value goes through valid, which is field with the UTF-8 check of the
// bytes rule in the same pass (ok false, buf as given, when it fails).
// noHeaders is what field makes of the empty text, for a record without
// headers.
func (e *recordEncoder) appendDelimited(buf []byte, r *result.Record, sep byte, null, noHeaders string, field func(buf, s []byte) []byte, valid func(buf, s []byte) ([]byte, bool)) []byte {
	buf = strconv.AppendInt(buf, int64(r.Partition), 10)
	buf = append(buf, sep)
	buf = strconv.AppendInt(buf, r.Offset, 10)
	buf = append(buf, sep)
	buf = e.ts.append(buf, r.Timestamp)
	buf = append(buf, sep)
	buf = e.appendDelimitedBytes(buf, r.Key, null, field, valid)
	buf = append(buf, sep)
	buf = e.appendDelimitedBytes(buf, r.Value, null, field, valid)
	buf = append(buf, sep)
	if len(r.Headers) == 0 {
		buf = append(buf, noHeaders...)
	} else {
		e.scratch = appendHeadersText(e.scratch[:0], r.Headers)
		buf = field(buf, e.scratch)
	}
	return append(buf, '\n')
}

func (e *recordEncoder) appendDelimitedBytes(buf, b []byte, null string, field func(buf, s []byte) []byte, valid func(buf, s []byte) ([]byte, bool)) []byte {
	if b == nil {
		return append(buf, null...)
	}
	if !looksHex(b) {
		if out, ok := valid(buf, b); ok {
			return out
		}
	}
	return field(buf, e.text(b))
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
		return e.appendDelimited(buf, r, ',', "", `""`, appendCSVField, appendCSVValid)
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
		return e.appendDelimited(buf, r, '\t', `\N`, "", appendTSVField, appendTSVValid)
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
// formatted once and then stored whole, with the milliseconds filled in.
type timeFormatter struct {
	ms   int64    // the first millisecond of the second text holds
	ok   bool     // text holds a second
	text [24]byte // "2006-01-02T15:04:05.000Z" of that second
}

func (f *timeFormatter) append(buf []byte, ms int64) []byte {
	// A record in the second of the one before needs no division. f.ms
	// is within the years 0000 to 9999, so ms-f.ms cannot overflow into
	// [0, 1000).
	frac := ms - f.ms
	if !f.ok || frac < 0 || frac >= 1000 {
		sec := ms / 1000
		frac = ms % 1000
		if frac < 0 { // before 1970: the millisecond counts up from the second below
			sec, frac = sec-1, frac+1000
		}
		if sec < minTextSec || sec > maxTextSec {
			// A year of more or fewer than four digits, as time writes it.
			buf = time.Unix(sec, 0).UTC().AppendFormat(buf, "2006-01-02T15:04:05.")
			return append(buf, byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10), 'Z')
		}
		f.set(sec)
	}
	n := len(buf)
	buf = slices.Grow(buf, len(f.text))[:n+len(f.text)]
	t := (*[24]byte)(buf[n:])
	*t = f.text
	binary.LittleEndian.PutUint32(t[20:], msText[frac])
	return buf
}

// msText holds the three digits of each millisecond and the Z after them.
var msText = func() (t [1000]uint32) {
	for i := range t {
		t[i] = uint32('0'+i/100) | uint32('0'+i/10%10)<<8 | uint32('0'+i%10)<<16 | 'Z'<<24
	}
	return t
}()

// Seconds of the years 0000 to 9999, which TimeLayout writes in four
// digits.
const (
	minTextSec = -62167219200 // 0000-01-01T00:00:00Z
	maxTextSec = 253402300799 // 9999-12-31T23:59:59Z
)

// set formats sec, which is within the years 0000 to 9999. The date is
// worked out from the day number directly (the civil-from-days algorithm
// of H. Hinnant's chrono date library), not through time.Time, whose
// formatting was most of what a timestamp cost: a partition's records a
// few milliseconds apart cross a second every few dozen records.
func (f *timeFormatter) set(sec int64) {
	f.ms, f.ok = sec*1000, true
	days := sec / 86400
	tod := sec - days*86400
	if tod < 0 {
		days, tod = days-1, tod+86400
	}
	// Days since 0000-03-01, in 400-year eras (sec >= minTextSec keeps z
	// at least 0 - 60 days: the era of a negative z is -1).
	z := days + 719468
	era := z / 146097
	if z < 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100) // [0, 365]
	mp := (5*doy + 2) / 153                  // [0, 11], from March
	d := doy - (153*mp+2)/5 + 1              // [1, 31]
	m := mp + 3
	if m > 12 {
		m -= 12
		y++
	}
	hh, mm, ss := tod/3600, tod/60%60, tod%60
	t := &f.text
	t[0], t[1], t[2], t[3] = byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10)
	t[4], t[5], t[6], t[7] = '-', byte('0'+m/10), byte('0'+m%10), '-'
	t[8], t[9], t[10] = byte('0'+d/10), byte('0'+d%10), 'T'
	t[11], t[12], t[13] = byte('0'+hh/10), byte('0'+hh%10), ':'
	t[14], t[15], t[16] = byte('0'+mm/10), byte('0'+mm%10), ':'
	t[17], t[18], t[19], t[23] = byte('0'+ss/10), byte('0'+ss%10), '.', 'Z'
}
