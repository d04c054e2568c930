package render

// The record encoders as they were before issue 22's second round (the
// reference the differential tests compare the new ones with, byte for
// byte): the JSON string writer of jsontext, the record writers, the time
// formatter and the CSV and TSV field writers, each renamed old*.

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kql-dev/kql/internal/oldjson"
	"github.com/kql-dev/kql/result"
)

type oldRecordEncoder struct {
	ts      oldTimeFormatter
	scratch []byte
}

type oldTimeFormatter struct {
	sec    int64
	prefix []byte
}

func oldAppendJSONString(buf, s []byte) []byte {
	out, _ := oldjson.AppendString(buf, s, false)
	return out
}

func oldAppendValidString(buf, s []byte) ([]byte, bool) { return oldjson.AppendString(buf, s, true) }

func newOldJSONLEncoder() result.RecordEncoder {
	e := &oldRecordEncoder{}
	return func(buf []byte, r *result.Record) []byte {
		buf = e.appendJSON(buf, r)
		return append(buf, '\n')
	}
}

func newOldCSVEncoder() result.RecordEncoder {
	e := &oldRecordEncoder{}
	return func(buf []byte, r *result.Record) []byte {
		return e.appendDelimited(buf, r, ',', "", oldAppendCSVField)
	}
}

func newOldTSVEncoder() result.RecordEncoder {
	e := &oldRecordEncoder{}
	return func(buf []byte, r *result.Record) []byte {
		return e.appendDelimited(buf, r, '\t', `\N`, oldAppendTSVField)
	}
}

var oldJSONRecordKeys = func() [6][]byte {
	var k [6][]byte
	for i, c := range result.RecordColumns {
		b := []byte{','}
		if i == 0 {
			b[0] = '{'
		}
		b = oldAppendJSONString(b, []byte(c.Name))
		k[i] = append(b, ':')
	}
	return k
}()

func (e *oldRecordEncoder) appendJSON(buf []byte, r *result.Record) []byte {
	buf = append(buf, oldJSONRecordKeys[0]...)
	buf = strconv.AppendInt(buf, int64(r.Partition), 10)
	buf = append(buf, oldJSONRecordKeys[1]...)
	buf = strconv.AppendInt(buf, r.Offset, 10)
	buf = append(buf, oldJSONRecordKeys[2]...)
	buf = append(buf, '"')
	buf = e.ts.append(buf, r.Timestamp)
	buf = append(buf, '"')
	buf = append(buf, oldJSONRecordKeys[3]...)
	buf = e.appendJSONField(buf, r.Key, r.KeySchema.Decoded)
	buf = append(buf, oldJSONRecordKeys[4]...)
	buf = e.appendJSONField(buf, r.Value, r.ValueSchema.Decoded)
	buf = append(buf, oldJSONRecordKeys[5]...)
	buf = append(buf, '[')
	for i, h := range r.Headers {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"key":`...)
		e.scratch = appendStringText(e.scratch[:0], h.Key)
		buf = oldAppendJSONString(buf, e.scratch)
		buf = append(buf, `,"value":`...)
		buf = e.appendJSONBytes(buf, h.Value)
		buf = append(buf, '}')
	}
	buf = append(buf, ']')
	return append(buf, '}')
}

func (e *oldRecordEncoder) appendJSONField(buf, b []byte, decoded bool) []byte {
	if decoded && b != nil {
		return append(buf, b...)
	}
	return e.appendJSONBytes(buf, b)
}

func (e *oldRecordEncoder) appendJSONBytes(buf, b []byte) []byte {
	if b == nil {
		return append(buf, "null"...)
	}
	// Text is checked as UTF-8 while it is escaped (one pass, not two);
	// what is not text, or reads as a hex literal, is written as hex.
	if !looksHex(b) {
		if out, ok := oldAppendValidString(buf, b); ok {
			return out
		}
	}
	return oldAppendJSONString(buf, e.text(b))
}

func (e *oldRecordEncoder) text(b []byte) []byte {
	if utf8.Valid(b) && !looksHex(b) {
		return b
	}
	e.scratch = appendHex(e.scratch[:0], b)
	return e.scratch
}

func (e *oldRecordEncoder) appendDelimited(buf []byte, r *result.Record, sep byte, null string, field func(buf, s []byte) []byte) []byte {
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

func (f *oldTimeFormatter) append(buf []byte, ms int64) []byte {
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

func oldAppendCSVField(buf, s []byte) []byte {
	if !oldCSVNeedsQuotes(s) {
		return append(buf, s...)
	}
	// Stored into buf's spare capacity eight bytes at a time, up to each
	// quote, which is then doubled (a JSON value has a quote every few
	// bytes: an append, or an IndexByte call, per run was most of a CSV
	// record). The worst case, all quotes, doubles s.
	n := len(buf)
	dst := slices.Grow(buf, 2*len(s)+10)
	dst = dst[:cap(dst)]
	j := n
	dst[j] = '"'
	j++
	i := 0
	for i+8 <= len(s) {
		w := binary.LittleEndian.Uint64(s[i:])
		binary.LittleEndian.PutUint64(dst[j:], w)
		x := w ^ (0x0101010101010101 * '"')
		m := (x - 0x0101010101010101) &^ x & 0x8080808080808080
		if m == 0 {
			i += 8
			j += 8
			continue
		}
		k := bits.TrailingZeros64(m)>>3 + 1 // through the quote
		i += k
		j += k
		dst[j] = '"'
		j++
	}
	for ; i < len(s); i++ {
		dst[j] = s[i]
		j++
		if s[i] == '"' {
			dst[j] = '"'
			j++
		}
	}
	dst[j] = '"'
	return dst[:j+1]
}

func oldCSVNeedsQuotes(s []byte) bool {
	if len(s) == 0 || s[0] == ' ' || s[0] == '\t' || string(s) == `\.` {
		return true
	}
	for _, c := range s {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			return true
		}
	}
	return false
}

func oldAppendTSVField(buf, s []byte) []byte {
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time up to the first that needs escaping: few
		// values hold one, and a switch per byte was most of a TSV record.
		if i+8 <= len(s) {
			m := oldTSVEscMask(binary.LittleEndian.Uint64(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		esc := tsvEscape[s[i]]
		if esc == 0 {
			i++
			continue
		}
		buf = append(buf, s[start:i]...)
		buf = append(buf, '\\', esc)
		i++
		start = i
	}
	return append(buf, s[start:]...)
}

func oldTSVEscMask(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	has := func(c uint64) uint64 {
		x := w ^ (lo * c)
		return (x - lo) &^ x
	}
	return (has('\\') | has('\t') | has('\n') | has('\r')) & hi
}
