package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kql-dev/kql/result"
	"github.com/tidwall/gjson"
)

// origin is where a record's text starts in the input: the line, and the
// column of its first byte. A jsonl line starts at column 1; an element of
// a FORMAT json array anywhere, and it may span lines.
type origin struct{ line, col int }

// at is the line and column of byte i of text, which starts at o.
func (o origin) at(text []byte, i int) (line, col int) {
	i = min(max(i, 0), len(text))
	nl := bytes.LastIndexByte(text[:i], '\n')
	if nl < 0 {
		return o.line, o.col + i
	}
	return o.line + bytes.Count(text[:nl+1], []byte{'\n'}), i - nl
}

// jsonRecord reads one record as kql's jsonl writes it:
//
//	{"partition":0,"offset":1,"timestamp":"…","key":…,"value":…,"headers":[{"key":…,"value":…}]}
//
// Every field may be missing (a hand-written file); an unknown field is an
// error, so a typo does not silently drop data. text starts at o in the
// input: every position reported is the input's.
func (r *Reader) jsonRecord(text []byte, o origin) (*Record, error) {
	errAt := func(i int, field, msg string) error {
		line, col := o.at(text, i)
		return &Error{File: r.name, Line: line, Column: col, Field: field, Msg: msg}
	}
	fail := func(field, msg string) error {
		i := 0
		if field != "" {
			if k := bytes.Index(text, []byte(`"`+field+`"`)); k >= 0 {
				i = k
			}
		}
		return errAt(i, field, msg)
	}
	// gjson walks the text once without reflection (encoding/json's map
	// of RawMessage was three quarters of an import's CPU, measured on
	// 200k records); a text it finds invalid goes to encoding/json for
	// the error's position and text.
	if !gjson.ValidBytes(text) || !gjson.ParseBytes(text).IsObject() {
		var fields map[string]json.RawMessage
		err := json.Unmarshal(text, &fields)
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			// Offset is the bytes read up to and including the bad one.
			return nil, errAt(int(se.Offset)-1, "", "not a JSON object: "+se.Error())
		case err != nil:
			return nil, errAt(0, "", "not a JSON object of a record (partition, offset, timestamp, key, value, headers): "+err.Error())
		}
		return nil, errAt(0, "", "not a JSON object of a record (partition, offset, timestamp, key, value, headers)")
	}
	rec := &Record{Line: o.line, Partition: -1}
	var ferr error
	gjson.ParseBytes(text).ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		raw := json.RawMessage(v.Raw)
		switch name {
		case "partition":
			if v.Type == gjson.Null {
				break
			}
			p := v.Float()
			if v.Type != gjson.Number || p != math.Trunc(p) || p < 0 || p > math.MaxInt32 {
				ferr = fail(name, fmt.Sprintf("%s is not a partition number", raw))
				return false
			}
			rec.Partition = int32(p)
		case "offset":
			// The source offset: informative only, a new topic assigns its own.
		case "timestamp":
			var ts time.Time
			var err error
			if v.Type == gjson.String { // gjson has unquoted it already
				ts, err = parseTime(v.Str)
			} else {
				ts, err = jsonTime(raw)
			}
			if err != nil {
				ferr = fail(name, err.Error())
				return false
			}
			rec.Timestamp = ts
		case "key", "value":
			var b []byte
			var err error
			if v.Type == gjson.String {
				b, err = decodeText(v.Str)
			} else {
				b, err = jsonBytes(raw)
			}
			if err != nil {
				ferr = fail(name, err.Error())
				return false
			}
			if name == "key" {
				rec.Key = b
			} else {
				rec.Value = b
			}
		case "headers":
			if v.IsArray() && len(v.Array()) == 0 {
				rec.Headers = nil
				break
			}
			hs, err := jsonHeaders(raw)
			if err != nil {
				ferr = fail(name, err.Error())
				return false
			}
			rec.Headers = hs
		default:
			ferr = fail(name, fmt.Sprintf("unknown field %q: a record has partition, offset, timestamp, key, value and headers", name))
			return false
		}
		return true
	})
	if ferr != nil {
		return nil, ferr
	}
	at := func(field string) (lineOff, col int32) {
		i := bytes.Index(text, []byte(`"`+field+`"`))
		if i < 0 {
			return 0, 0
		}
		line, c := o.at(text, i)
		return int32(line - o.line), int32(c)
	}
	var c Columns
	c.PartitionLine, c.Partition = at("partition")
	c.TimestampLine, c.Timestamp = at("timestamp")
	c.KeyLine, c.Key = at("key")
	c.ValueLine, c.Value = at("value")
	rec.Cols = c
	return rec, nil
}

// jsonBytes reads a key, value or header value: a string under the bytes
// rule, null, or (a value the registry decoded on export) any other JSON,
// taken as its text.
func jsonBytes(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return decodeText(s)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func jsonTime(raw json.RawMessage) (time.Time, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return time.Time{}, nil
	}
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return time.Time{}, err
		}
		return parseTime(s)
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil || ms != math.Trunc(ms) {
		return time.Time{}, fmt.Errorf("timestamp %s is neither RFC 3339 text nor epoch milliseconds", raw)
	}
	return time.UnixMilli(int64(ms)), nil
}

func jsonHeaders(raw json.RawMessage) ([]result.Header, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf(`headers are a list of {"key": …, "value": …}: %v`, err)
	}
	out := make([]result.Header, 0, len(list))
	for i, h := range list {
		kraw, ok := h["key"]
		if !ok || len(h) > 2 {
			return nil, fmt.Errorf(`header %d: want {"key": …, "value": …}`, i+1)
		}
		k, err := jsonBytes(kraw)
		if err != nil || k == nil {
			return nil, fmt.Errorf("header %d: the key must be a string", i+1)
		}
		var v []byte
		if vraw, ok := h["value"]; ok {
			if v, err = jsonBytes(vraw); err != nil {
				return nil, fmt.Errorf("header %d value: %v", i+1, err)
			}
		} else if len(h) != 1 {
			return nil, fmt.Errorf(`header %d: want {"key": …, "value": …}`, i+1)
		}
		out = append(out, result.Header{Key: string(k), Value: v})
	}
	if len(out) == 0 {
		return nil, nil // no headers reads back as kql reads them from Kafka
	}
	return out, nil
}
