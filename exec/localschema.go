package exec

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// LocalSchemas maps topics to schemas from local files (.proto files, a
// descriptor set, .avsc files), for payloads without a registry header. A
// statement's KEY/VALUE AS clause wins over Session (\set schema.T.value),
// which wins over File (kql.schema.T.value in the properties file or
// profile).
type LocalSchemas struct {
	Loader *schema.Local // nil: no --proto-path nor descriptor set (.avsc files still work)

	// Keyed by MappingKey(topic, side).
	File    map[string]schema.LocalSpec
	Session map[string]schema.LocalSpec
	// FileName is the properties file File came from, for messages.
	FileName string
}

// MappingKey is the key of a topic side's mapping: "orders.value".
func MappingKey(topic, side string) string { return topic + "." + side }

// localSource is a local codec and where its mapping was given.
type localSource struct {
	codec *schema.LocalCodec
	from  string // "VALUE AS in the statement", `\set schema.orders.value`, ...
}

// localSchemas returns the session's mappings, never nil.
func (s *Session) localSchemas() *LocalSchemas {
	if s.Local == nil {
		s.Local = &LocalSchemas{}
	}
	if s.Local.Loader == nil {
		s.Local.Loader = schema.NewLocal(schema.LocalConfig{})
	}
	return s.Local
}

// localCodec is the local schema a topic side is decoded or encoded with:
// the statement's AS clause, else the session's, else the file's; nil when
// none maps it. A schema that cannot be loaded is an error saying where
// the mapping was given.
func (s *Session) localCodec(topic, side string, stmt *lang.LocalSchema) (*localSource, error) {
	var spec schema.LocalSpec
	var from string
	key := MappingKey(topic, side)
	switch {
	case stmt != nil:
		var err error
		if spec, err = schema.NewLocalSpec(stmt.Format, stmt.Name); err != nil {
			return nil, err
		}
		from = upper(side) + " " + stmt.String()
	case s.Local != nil && s.Local.Session != nil && s.Local.Session[key] != (schema.LocalSpec{}):
		spec = s.Local.Session[key]
		from = `\set schema.` + key + " " + spec.String()
	case s.Local != nil && s.Local.File != nil && s.Local.File[key] != (schema.LocalSpec{}):
		spec = s.Local.File[key]
		from = "kql.schema." + key + "=" + spec.String()
		if s.Local.FileName != "" {
			from += " in " + s.Local.FileName
		}
	default:
		return nil, nil
	}
	c, err := s.localSchemas().Loader.Codec(spec)
	if err != nil {
		return nil, fmt.Errorf("the %s of topic %q (%s): %w", side, topic, from, err)
	}
	return &localSource{codec: c, from: from}, nil
}

// localDecoders sets the local codecs of a CONSUME's decoder, before
// anything is read: a schema that does not load fails the statement.
func (s *Session) localDecoders(d *recordDecoder, st *lang.Consume) error {
	k, err := s.localCodec(st.Topic, "key", st.KeyAs)
	if err != nil {
		return err
	}
	v, err := s.localCodec(st.Topic, "value", st.ValueAs)
	if err != nil {
		return err
	}
	if k != nil {
		d.key = k.codec
	}
	if v != nil {
		d.value = v.codec
	}
	return nil
}

// localSide decodes one side with its local schema. A payload that does
// not decode stays raw bytes, and the statement warns once per schema
// (the first record it happened at, how many it hit), as for registry
// schemas.
func (d *recordDecoder) localSide(r *result.Record, b *[]byte, buf *[]byte, side string, c *schema.LocalCodec) result.WireSchema {
	if *b == nil {
		return result.WireSchema{} // a null key or a tombstone: nothing to decode
	}
	out, rd, err := c.DecodeAs((*buf)[:0], *b, d.localHeadered[side])
	ws := result.WireSchema{}
	if rd.Header {
		ws = result.WireSchema{ID: rd.ID, HasID: true}
	}
	if err != nil {
		d.failLocal(r, side, err)
		return ws
	}
	if rd.Ambiguous {
		d.ambiguousLocal(r, side, c, rd)
	} else {
		if d.localHeadered == nil {
			d.localHeadered = map[string]bool{}
		}
		d.localHeadered[side] = rd.Header
	}
	*buf = out
	if len(out) > 0 && out[0] == '"' {
		if text, ok := unquoteJSON(out); ok {
			*b = text
			return ws
		}
	}
	*b = out
	ws.Decoded = true
	return ws
}

// ambiguousLocal counts a record one side's local Avro schema read both as
// it is and after a wire-format header. The reading shown is the one of the
// side's last record that was not ambiguous (raw before any), as a topic's
// producers write all records alike; one warning per side says so, with
// the first such record and how many there were.
func (d *recordDecoder) ambiguousLocal(r *result.Record, side string, c *schema.LocalCodec, rd schema.LocalRead) {
	if d.ambiguous == nil {
		d.ambiguous = map[string]*ambiguousReads{}
	}
	a := d.ambiguous[side]
	if a == nil {
		how := "as raw Avro, as the side's records before it were"
		if rd.Header {
			how = "after the header, as the side's records before it were"
		}
		if _, seen := d.localHeadered[side]; !seen {
			how = "as raw Avro (no record before it decoded one way only)"
		}
		a = &ambiguousReads{line: fmt.Sprintf("%s of partition %d offset %d: %s decodes both as raw Avro and after a wire-format header of schema id %d; shown %s",
			side, r.Partition, r.Offset, c, rd.ID, how)}
		d.ambiguous[side] = a
		d.ambiguousOrder = append(d.ambiguousOrder, side)
		if d.live != nil {
			d.live(a.line + "; records like it are read the same way")
		}
	} else if end, ok := d.counted[r.Partition]; ok && r.Offset < end {
		return // the key scan counted this record
	}
	a.records++
}

// ambiguousReads is the warning of one side's ambiguous Avro payloads.
type ambiguousReads struct {
	line    string
	records int64
}

// ambiguousWarnings are the ambiguous-reading warnings, one per side.
func (d *recordDecoder) ambiguousWarnings() []string {
	var out []string
	for _, side := range d.ambiguousOrder {
		a := d.ambiguous[side]
		out = append(out, fmt.Sprintf("%s; %d %s read this way", a.line, a.records, plural(int(a.records), "record", "records")))
	}
	return out
}

// failLocal counts a record one side's local schema did not decode.
func (d *recordDecoder) failLocal(r *result.Record, side string, err error) {
	d.fail(r, side, 0, &localFailure{side: side, err: err})
}

// localFailure keys a local schema's failures apart from a schema id's.
type localFailure struct {
	side string
	err  error
}

func (e *localFailure) Error() string { return e.err.Error() }
func (e *localFailure) Unwrap() error { return e.err }

// encodeLocal writes a PRODUCE literal with its side's local schema (AS
// clause, \set or properties file); ok is false when none maps the side.
func (s *Session) encodeLocal(topic, side string, lit *lang.Literal, stmt *lang.LocalSchema) (b []byte, ok bool, err error) {
	src, err := s.localCodec(topic, side, stmt)
	if err != nil {
		return nil, false, fmt.Errorf("%w; nothing was written", err)
	}
	if src == nil {
		return nil, false, nil
	}
	if lit == nil || lit.Null {
		return nil, true, nil
	}
	b, err = src.codec.Encode(lit.Bytes)
	if err != nil {
		return nil, true, fmt.Errorf("the %s (%s): %w; nothing was written", side, src.from, err)
	}
	return b, true, nil
}

// explainLocal adds EXPLAIN's note of the local schemas a statement
// decodes or encodes with.
// A side with a registry SCHEMA clause (registry) is not the local schema's.
func (s *Session) explainLocal(p *planner, topic string, verb string, key, value *lang.LocalSchema, registry ...*lang.SchemaRef) error {
	for i, side := range []struct {
		name string
		as   *lang.LocalSchema
	}{{"key", key}, {"value", value}} {
		if i < len(registry) && registry[i] != nil {
			continue
		}
		src, err := s.localCodec(topic, side.name, side.as)
		if err != nil {
			return err
		}
		if src != nil {
			p.rows = append(p.rows, result.Row{nil, "Note", nil, "kql",
				fmt.Sprintf("%s the %s with the local schema %s, from %s (no registry)", verb, side.name, src.codec, src.from)})
		}
	}
	return nil
}

// Mappings lists the session's and the file's mappings, sorted, for \set.
func (l *LocalSchemas) Mappings() []string {
	if l == nil {
		return nil
	}
	var out []string
	for k, v := range l.Session {
		out = append(out, fmt.Sprintf(`schema.%s %s (\set)`, k, v))
	}
	for k, v := range l.File {
		if _, over := l.Session[k]; over {
			continue
		}
		out = append(out, fmt.Sprintf("schema.%s %s (%s)", k, v, strings.TrimSpace("kql.schema.* "+l.FileName)))
	}
	sort.Strings(out)
	return out
}

// encodeSide encodes one side of a PRODUCE: with its SCHEMA clause through
// the registry, else with its local schema (the AS clause, \set, the
// properties file), else as written.
func (s *Session) encodeSide(ctx context.Context, topic, side string, lit *lang.Literal, ref *lang.SchemaRef, as *lang.LocalSchema) ([]byte, *schema.Encoded, error) {
	if ref == nil {
		b, ok, err := s.encodeLocal(topic, side, lit, as)
		if err != nil || ok {
			return b, nil, err
		}
	}
	return s.encodeLiteral(ctx, side, lit, ref)
}

// consumePartitionKey is the key PARTITION FOR KEY hashes: with a local key
// schema (the statement's KEY AS, \set, the properties file) the key
// encoded with it, as its producers wrote it; else partitionKey's.
func (s *Session) consumePartitionKey(ctx context.Context, st *lang.Consume, key []byte) (b []byte, how, warn string, err error) {
	src, err := s.localCodec(st.Topic, "key", st.KeyAs)
	if err != nil {
		return nil, "", "", err
	}
	if src == nil {
		return s.partitionKey(ctx, st.Topic, key)
	}
	b, err = src.codec.Encode(key)
	if err != nil {
		return nil, "", "", fmt.Errorf("PARTITION FOR KEY: the key is hashed as its producers wrote it, encoded with %s (%s): %w", src.codec, src.from, err)
	}
	return b, fmt.Sprintf("the key encoded with the local schema %s, as its producers wrote it", src.codec), "", nil
}

// allLocal reports whether both sides of a CONSUME decode with local
// schemas: the registry is then never asked.
func (s *Session) allLocal(st *lang.Consume) bool {
	k, kerr := s.localCodec(st.Topic, "key", st.KeyAs)
	v, verr := s.localCodec(st.Topic, "value", st.ValueAs)
	return kerr == nil && verr == nil && k != nil && v != nil
}
