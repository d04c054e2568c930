package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// recordDecoder decodes one statement's keys and values through the schema
// registry, before WHERE sees them, so paths work on decoded values exactly
// as on JSON ones. Without a registry it does nothing (the eval node of
// key_schema_id and value_schema_id reads the header itself).
//
// A record that does not decode is still shown, as its raw bytes, and the
// statement gets one warning per schema id that failed (and one for a
// registry that could not be reached), naming the first record it happened
// at and how many records it hit.
type recordDecoder struct {
	dec *schema.Decoder // nil: no registry configured
	// key and value, when set, are the local schemas (KEY/VALUE AS, \set
	// schema.*, kql.schema.*) the sides decode with instead of the registry.
	key, value *schema.LocalCodec
	// localHeadered: per side, whether its last Avro payload that decoded
	// one way only had a wire-format header; it picks the reading of an
	// ambiguous one (ambiguous, ambiguousOrder: their warnings).
	localHeadered  map[string]bool
	ambiguous      map[string]*ambiguousReads
	ambiguousOrder []string
	kbuf, vbuf     []byte // the decoded key and value, reused per record
	fails          map[failKey]*decodeFailure
	order          []failKey
	// counted: per partition, the offset below which a tail read's key
	// scan has counted the records already. The page it then reads lies
	// below it, and counting the page's records again said "2 records"
	// for one; FOLLOW reads on from there, and those records count.
	counted map[int32]int64
	// live, when set, is told of each new failure as it happens (FOLLOW).
	live func(string)
}

type failKey struct {
	id          int32
	unreachable bool
	local       string // the side whose local schema failed; "" for the registry's
}

type decodeFailure struct {
	err       error
	side      string // key or value, of the first record
	partition int32
	offset    int64
	records   int64
	// The record counted last: its key and value may both fail with one
	// failKey (a registry that cannot be reached, one id for both), and
	// they are one record, not two.
	lastPartition int32
	lastOffset    int64
}

func (s *Session) newRecordDecoder(ctx context.Context) *recordDecoder {
	d := &recordDecoder{}
	if s.Registry != nil {
		d.dec = s.Registry.NewDecoder(ctx)
	}
	return d
}

// decode fills r's KeySchema and ValueSchema and, with a registry, replaces
// a decodable Key or Value with its JSON text (valid until the next call).
func (d *recordDecoder) decode(r *result.Record) {
	if d.key != nil || d.value != nil {
		r.KeySchema = d.sideWith(r, &r.Key, &d.kbuf, "key", d.key)
		r.ValueSchema = d.sideWith(r, &r.Value, &d.vbuf, "value", d.value)
		return
	}
	if d.dec == nil {
		// No registry: nothing to decode, and no header is read per
		// record (key_schema_id reads it when asked: 2% of a CONSUME's CPU
		// went here). KeySchema and ValueSchema stay zero.
		return
	}
	r.KeySchema = d.side(r, &r.Key, &d.kbuf, "key")
	r.ValueSchema = d.side(r, &r.Value, &d.vbuf, "value")
}

// sideWith decodes one side with its local schema, else the registry's.
func (d *recordDecoder) sideWith(r *result.Record, b *[]byte, buf *[]byte, side string, local *schema.LocalCodec) result.WireSchema {
	switch {
	case local != nil:
		return d.localSide(r, b, buf, side, local)
	case d.dec == nil:
		return result.WireSchema{}
	}
	return d.side(r, b, buf, side)
}

func (d *recordDecoder) side(r *result.Record, b *[]byte, buf *[]byte, side string) result.WireSchema {
	out, id, ok, err := d.dec.Decode((*buf)[:0], *b)
	if !ok {
		return result.WireSchema{}
	}
	if err != nil {
		d.fail(r, side, id, err)
		return result.WireSchema{ID: id, HasID: true}
	}
	*buf = out
	if len(out) > 0 && out[0] == '"' {
		// A string (the usual key schema) is its text, as an unencoded
		// key is: WHERE key = 'k-1' finds it, and a table shows k-1.
		if text, ok := unquoteJSON(out); ok {
			*b = text
			return result.WireSchema{ID: id, HasID: true}
		}
	}
	*b = out
	return result.WireSchema{ID: id, HasID: true, Decoded: true}
}

// unquoteJSON returns the text of a JSON string: the bytes between the
// quotes when nothing is escaped (no copy), else the unescaped copy.
func unquoteJSON(q []byte) ([]byte, bool) {
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

func (d *recordDecoder) fail(r *result.Record, side string, id int32, err error) {
	var de *schema.DecodeError
	k := failKey{id: id}
	var lf *localFailure
	switch {
	case errors.As(err, &de) && de.Unreachable:
		k = failKey{unreachable: true}
	case errors.As(err, &lf):
		k = failKey{local: lf.side}
	}
	if d.fails == nil {
		d.fails = map[failKey]*decodeFailure{}
	}
	f := d.fails[k]
	if f == nil {
		f = &decodeFailure{err: err, side: side, partition: r.Partition, offset: r.Offset}
		d.fails[k] = f
		d.order = append(d.order, k)
		if d.live != nil {
			d.live(f.line(k.unreachable, "records like it are left as raw bytes"))
		}
	} else if end, ok := d.counted[r.Partition]; ok && r.Offset < end {
		return // the key scan counted this record
	} else if f.lastPartition == r.Partition && f.lastOffset == r.Offset {
		return // its key failed, now its value: one record
	}
	f.lastPartition, f.lastOffset = r.Partition, r.Offset
	f.records++
}

// warnings says what did not decode, one line per schema id (and one for an
// unreachable registry), in the order they first happened.
func (d *recordDecoder) warnings() []string {
	if d == nil {
		return nil
	}
	if len(d.order) == 0 {
		return d.ambiguousWarnings()
	}
	keys := append([]failKey(nil), d.order...)
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].unreachable && !keys[j].unreachable })
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		f := d.fails[k]
		// "left as", not "shown with": WHERE may have left the record out
		// (or an aggregate counted it), and then it was never shown.
		shown := fmt.Sprintf("%d %s left as raw bytes", f.records, plural(int(f.records), "record", "records"))
		out = append(out, f.line(k.unreachable, shown))
	}
	return append(out, d.ambiguousWarnings()...)
}

// line is the warning for one failure, ending with what became of records.
func (f *decodeFailure) line(unreachable bool, tail string) string {
	if unreachable {
		return fmt.Sprintf("%v (first needed for the %s of partition %d offset %d); %s",
			f.err, f.side, f.partition, f.offset, tail)
	}
	return fmt.Sprintf("%s of partition %d offset %d: %v; %s",
		f.side, f.partition, f.offset, strings.TrimSpace(f.err.Error()), tail)
}
