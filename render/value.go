package render

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/kql-dev/kql/result"
)

// TimeLayout is how every format writes a timestamp: RFC 3339 in UTC with
// milliseconds, the precision of a Kafka record timestamp.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Value returns the text form of one value, the form every text format is
// built on (table, expanded, csv and tsv add only their own quoting or
// escaping; json writes the same text inside its strings). A nil value, or a
// nil []byte, is NULL and comes back as "NULL": formats that must tell NULL
// from the string "NULL" (csv, tsv, json) never ask Value for a NULL.
//
//   - Bytes and String: the bytes rule (see bytesText): valid UTF-8 is the
//     text itself; anything else, and any text that looks like a hex literal,
//     is the KafkaQL hex literal x'…'.
//   - Int: decimal. Bool: true or false. Time: TimeLayout in UTC.
//   - Ints: decimal numbers joined by commas, e.g. 1,2,3 (empty list: empty).
//   - Headers: the headers text form (see appendHeadersText).
//
// t is the column's type; the value's Go type decides how it is written, so a
// value that does not match its column is still shown rather than lost.
func Value(v any, t result.Type) string {
	if isNull(v) {
		return "NULL"
	}
	return string(appendText(nil, v, t))
}

// isNull reports whether v is NULL. A nil []byte counts as NULL as well: that
// is how franz-go hands over a null key or value, so an executor that passes
// a record's Value straight through still shows a tombstone as NULL, never as
// an empty value. Other nil slices (no headers, no replicas) are empty lists.
func isNull(v any) bool {
	if v == nil {
		return true
	}
	switch b := v.(type) {
	case []byte:
		return b == nil
	case result.JSON:
		return b == nil
	}
	return false
}

// appendText appends the text form of a non-NULL value to buf.
func appendText(buf []byte, v any, t result.Type) []byte {
	switch x := v.(type) {
	case []byte:
		return appendBytesText(buf, x)
	case result.JSON:
		return append(buf, x...)
	case string:
		return appendStringText(buf, x)
	case int64:
		return strconv.AppendInt(buf, x, 10)
	case int:
		return strconv.AppendInt(buf, int64(x), 10)
	case int32:
		return strconv.AppendInt(buf, int64(x), 10)
	case int16:
		return strconv.AppendInt(buf, int64(x), 10)
	case int8:
		return strconv.AppendInt(buf, int64(x), 10)
	case uint64:
		return strconv.AppendUint(buf, x, 10)
	case uint32:
		return strconv.AppendUint(buf, uint64(x), 10)
	case bool:
		return strconv.AppendBool(buf, x)
	case time.Time:
		return x.UTC().AppendFormat(buf, TimeLayout)
	case []int32:
		for i, n := range x {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(n), 10)
		}
		return buf
	case []result.Header:
		return appendHeadersText(buf, x)
	default:
		// A value that breaks the column contract is still shown, visibly,
		// rather than dropped; the text says what it was.
		return appendStringText(buf, fmt.Sprintf("%v", v))
	}
}

// The bytes rule, the same in every format: bytes that are valid UTF-8 are
// shown as that text; anything else is shown as the KafkaQL hex literal
// x'…' (lower-case hex digits). So that every shown value maps back to exactly
// one byte string, text that itself looks like a hex literal (x'…' or X'…'
// holding only hex digits) is shown in hex form too: the text x'ab' is shown
// as x'78276162'.

func appendBytesText(buf, b []byte) []byte {
	if utf8.Valid(b) && !looksHex(b) {
		return append(buf, b...)
	}
	return appendHex(buf, b)
}

func appendStringText(buf []byte, s string) []byte {
	if utf8.ValidString(s) && !looksHex(s) {
		return append(buf, s...)
	}
	return appendHex(buf, s)
}

func appendHex[T string | []byte](buf []byte, b T) []byte {
	buf = append(buf, 'x', '\'')
	buf = hex.AppendEncode(buf, []byte(b))
	return append(buf, '\'')
}

// looksHex reports whether b matches ^[xX]'[0-9a-fA-F]*'$.
func looksHex[T string | []byte](b T) bool {
	if len(b) < 3 || (b[0] != 'x' && b[0] != 'X') || b[1] != '\'' || b[len(b)-1] != '\'' {
		return false
	}
	for i := 2; i < len(b)-1; i++ {
		c := b[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// appendHeadersText appends the headers text form used by table, expanded,
// csv and tsv:
//
//	k1=v1, k2=v2, k3
//
// Entries keep their order and duplicates and are joined by ", ". An entry
// without "=" has a null value; "k=" has an empty value. Key and value follow
// the bytes rule, then a backslash, comma or equals sign inside them is
// escaped as \\, \, or \=, so the text splits back unambiguously. An empty
// key is written x” (the hex literal of nothing), so that one header with an
// empty key and a null value is not mistaken for no headers at all.
func appendHeadersText(buf []byte, hs []result.Header) []byte {
	for i, h := range hs {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		switch {
		case h.Key == "":
			buf = append(buf, "x''"...)
		case !utf8.ValidString(h.Key) || looksHex(h.Key):
			buf = appendHex(buf, h.Key) // hex needs no escaping
		default:
			buf = appendHeaderEscaped(buf, h.Key)
		}
		if h.Value != nil {
			buf = append(buf, '=')
			if !utf8.Valid(h.Value) || looksHex(h.Value) {
				buf = appendHex(buf, h.Value)
			} else {
				buf = appendHeaderEscaped(buf, h.Value)
			}
		}
	}
	return buf
}

func appendHeaderEscaped[T string | []byte](buf []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', ',', '=':
			buf = append(buf, '\\', c)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}
