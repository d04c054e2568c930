package exec

import (
	"context"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// An INSERT whose SELECT list only names record columns (SELECT *, or any
// of key, value, headers, timestamp, partition as they are) copies records,
// not rows: the source is read on the record path (the scan's reused
// Record, no projection, no row per record) and each record's bytes go to
// the producer as they came off the wire. The read, WHERE, SKIP, LIMIT and
// the merge order are the same as the row path's; only the per-record
// evaluation and copies are gone, which were most of an INSERT's CPU.

// passCols says which record columns a pass-through INSERT copies.
type passCols struct {
	key, value, headers, timestamp, partition bool
}

// passThrough returns the columns a plain INSERT copies, or nil when its
// SELECT list computes something (an expression, a rename), names the
// destination per record, aggregates or orders: those take the row path.
func passThrough(in *lang.Insert) *passCols {
	sel := in.Select
	if in.TopicExpr != nil || sel.HasAggregates() || sel.OrderBy != nil {
		return nil
	}
	if sel.Projection == nil { // SELECT *: key, value, headers, timestamp
		return &passCols{key: true, value: true, headers: true, timestamp: true}
	}
	pc := &passCols{}
	for _, it := range sel.Projection {
		c, ok := it.X.(*lang.Column)
		if !ok || c.Path != nil || (it.As != "" && it.As != c.Name) {
			return nil
		}
		switch c.Name {
		case "key":
			pc.key = true
		case "value":
			pc.value = true
		case "headers":
			pc.headers = true
		case "timestamp":
			pc.timestamp = true
		case "partition":
			pc.partition = true
		default:
			return nil
		}
	}
	return pc
}

// passThroughFor is passThrough for this session: a source whose keys or
// values would be decoded (a schema registry, a local schema) takes the row
// path, which maps decoded values as a SELECT shows them.
func (s *Session) passThroughFor(in *lang.Insert) (*passCols, error) {
	pc := passThrough(in)
	if pc == nil || s.Registry != nil {
		return nil, nil
	}
	st := in.Select
	for _, side := range []struct {
		name string
		as   *lang.LocalSchema
	}{{"key", st.KeyAs}, {"value", st.ValueAs}} {
		c, err := s.localCodec(st.Topic, side.name, side.as)
		if err != nil {
			return nil, err
		}
		if c != nil {
			return nil, nil
		}
	}
	return pc, nil
}

// recordRows is rows for a pass-through INSERT: rs's records, mapped onto
// one insertRow reused from record to record (fn must not keep it; the
// writer copies what it needs).
func (p *insertPlan) recordRows(ctx context.Context, rs result.RecordStream, fn func(*insertRow) error) error {
	var r insertRow
	for {
		rec, ok := rs.NextRecord()
		if !ok {
			break
		}
		if p.upTo != nil {
			if last, seen := p.upTo[rec.Partition]; !seen || rec.Offset > last {
				continue // arrived after the check (see insertPlan.upTo)
			}
		}
		if err := p.mapRecord(ctx, rec, &r); err != nil {
			return err
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return rs.Err()
}

// mapRecord is mapRow for a record of the scan: the same record written,
// from the record's fields instead of a row's cells.
func (p *insertPlan) mapRecord(ctx context.Context, rec *result.Record, r *insertRow) error {
	pc := p.pass
	r.srcPart, r.srcOff, r.hasPart = rec.Partition, rec.Offset, false
	r.rec = kafka.OutRecord{Headers: r.rec.Headers[:0]}
	// Nothing is decoded (see passThroughFor): the bytes are the wire's,
	// and no later record overwrites them.
	if pc.key {
		r.rec.Key = rec.Key
	}
	if pc.value {
		r.rec.Value = rec.Value
	}
	if pc.headers {
		for _, h := range rec.Headers {
			r.rec.Headers = append(r.rec.Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
	}
	if (pc.timestamp || p.in.KeepTimestamp) && !p.in.StampNow {
		r.rec.Timestamp = time.UnixMilli(rec.Timestamp)
	} else {
		r.rec.Timestamp = time.Now()
	}
	var part any
	if pc.partition {
		part = int64(rec.Partition)
	}
	return p.place(ctx, r, p.in.Topic, part, pc.partition)
}
