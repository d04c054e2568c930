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

// jsonRecord reads one record as kql's jsonl writes it:
//
//	{"partition":0,"offset":1,"timestamp":"…","key":…,"value":…,"headers":[{"key":…,"value":…}]}
//
// Every field may be missing (a hand-written file); an unknown field is an
// error, so a typo does not silently drop data. base is the line's column
// offset (0 for jsonl).
func (r *Reader) jsonRecord(line []byte, n, base int) (*Record, error) {
	fail := func(field, msg string) error {
		col := 1
		if field != "" {
			if i := bytes.Index(line, []byte(`"`+field+`"`)); i >= 0 {
				col = i + 1
			}
		}
		return &Error{File: r.name, Line: n, Column: base + col, Field: field, Msg: msg}
	}
	// gjson walks the line once without reflection (encoding/json's map
	// of RawMessage was three quarters of an import's CPU, measured on
	// 200k records); a line it finds invalid goes to encoding/json for
	// the error's column and text.
	if !gjson.ValidBytes(line) || !gjson.ParseBytes(line).IsObject() {
		var fields map[string]json.RawMessage
		err := json.Unmarshal(line, &fields)
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, &Error{File: r.name, Line: n, Column: base + int(se.Offset), Msg: "not a JSON object: " + se.Error()}
		case err != nil:
			return nil, &Error{File: r.name, Line: n, Column: base + 1, Msg: "not a JSON object of a record (partition, offset, timestamp, key, value, headers): " + err.Error()}
		}
		return nil, &Error{File: r.name, Line: n, Column: base + 1, Msg: "not a JSON object of a record (partition, offset, timestamp, key, value, headers)"}
	}
	rec := &Record{Line: n, Partition: -1}
	var ferr error
	gjson.ParseBytes(line).ForEach(func(k, v gjson.Result) bool {
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
	col := func(field string) int32 {
		if i := bytes.Index(line, []byte(`"`+field+`"`)); i >= 0 {
			return int32(base + i + 1)
		}
		return 0
	}
	rec.Cols = Columns{Partition: col("partition"), Timestamp: col("timestamp"), Key: col("key"), Value: col("value")}
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
