package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kql-dev/kql/result"
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
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &Error{File: r.name, Line: n, Column: base + int(se.Offset), Msg: "not a JSON object: " + se.Error()}
		}
		return nil, &Error{File: r.name, Line: n, Column: base + 1, Msg: "not a JSON object of a record (partition, offset, timestamp, key, value, headers): " + err.Error()}
	}
	rec := &Record{Line: n, Partition: -1}
	for name, raw := range fields {
		switch name {
		case "partition":
			var p *float64
			if err := json.Unmarshal(raw, &p); err != nil || p != nil && (*p != math.Trunc(*p) || *p < 0 || *p > math.MaxInt32) {
				return nil, fail(name, fmt.Sprintf("%s is not a partition number", raw))
			}
			if p != nil {
				rec.Partition = int32(*p)
			}
		case "offset":
			// The source offset: informative only, a new topic assigns its own.
		case "timestamp":
			ts, err := jsonTime(raw)
			if err != nil {
				return nil, fail(name, err.Error())
			}
			rec.Timestamp = ts
		case "key", "value":
			b, err := jsonBytes(raw)
			if err != nil {
				return nil, fail(name, err.Error())
			}
			if name == "key" {
				rec.Key = b
			} else {
				rec.Value = b
			}
		case "headers":
			hs, err := jsonHeaders(raw)
			if err != nil {
				return nil, fail(name, err.Error())
			}
			rec.Headers = hs
		default:
			return nil, fail(name, fmt.Sprintf("unknown field %q: a record has partition, offset, timestamp, key, value and headers", name))
		}
	}
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
