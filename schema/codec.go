package schema

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// codec is one compiled schema.
type codec interface {
	kind() sr.SchemaType
	// appendJSON appends payload (the bytes after the magic byte and id)
	// decoded as compact JSON text.
	appendJSON(dst, payload []byte) ([]byte, error)
	// encode returns JSON text encoded under the schema: the bytes that
	// follow the magic byte and id (Protobuf's begin with the index).
	encode(dst, text []byte) ([]byte, error)
}

func compileSchema(s sr.Schema, refs []reference) (codec, error) {
	switch s.Type {
	case sr.TypeAvro:
		return compileAvro(s, refs)
	case sr.TypeProtobuf:
		return compileProtobuf(s, refs)
	case sr.TypeJSON:
		return compileJSONSchema(s, refs)
	}
	return nil, fmt.Errorf("schema type %v is not one kql reads (AVRO, PROTOBUF, JSON)", s.Type)
}

// HeaderID returns the schema id of a Confluent wire-format payload: a zero
// magic byte and a 4-byte big-endian id, followed by at least nothing.
func HeaderID(b []byte) (id int32, ok bool) {
	if len(b) < 5 || b[0] != 0 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(b[1:5])), true
}

// Decoder decodes one statement's records. It keeps what must not repeat
// within a statement: a registry that did not answer is asked no more (every
// record would wait for it), and an id that failed fails without asking
// again. Not safe for concurrent use; the Registry behind it is.
type Decoder struct {
	reg    *Registry
	ctx    context.Context
	failed map[int32]error
	down   error     // the registry did not answer (or refused us)...
	downAt time.Time // ...at this time: asked no more until RetryDownAfter

	// The codec of the id the last record decoded with: a topic's records
	// mostly share one, and this spares each of them the registry cache's
	// lock and map.
	lastID int32
	last   codec
}

// RetryDownAfter is how long a statement's decoder leaves a registry that
// did not answer alone: long enough that a million records do not each wait
// for it, short enough that a FOLLOW running for hours picks it up again.
var RetryDownAfter = 30 * time.Second

// NewDecoder returns a statement's decoder; ctx bounds its registry requests.
func (r *Registry) NewDecoder(ctx context.Context) *Decoder {
	return &Decoder{reg: r, ctx: ctx, failed: map[int32]error{}}
}

// DecodeError says why a payload that carries a schema id was not decoded.
type DecodeError struct {
	ID int32
	// Unreachable: the registry did not answer (or refused us); the record
	// is not at fault.
	Unreachable bool
	Err         error
}

func (e *DecodeError) Error() string {
	if e.Unreachable {
		return e.Err.Error()
	}
	return fmt.Sprintf("schema id %d: %v", e.ID, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Decode appends b decoded as JSON text to dst. ok is false when b does not
// start with a wire-format header (it is not the registry's: nothing to say).
// A header whose schema is unknown, or a payload that does not decode, is a
// *DecodeError, and dst comes back as it went in.
func (d *Decoder) Decode(dst, b []byte) (out []byte, id int32, ok bool, err error) {
	id, ok = HeaderID(b)
	if !ok {
		return dst, 0, false, nil
	}
	// The last id's codec, without the registry cache's lock: a topic's
	// records mostly share one schema id.
	if d.last != nil && id == d.lastID {
		return d.appendJSON(dst, b, id, d.last)
	}
	if err := d.failed[id]; err != nil {
		return dst, id, true, err
	}
	// An id compiled already (by this statement or an earlier one) needs
	// no registry: its records decode even when the registry went down for
	// another id. (The down check came first, and failed them all.)
	c := d.reg.compiled(int(id))
	if c == nil {
		if d.down != nil && time.Since(d.downAt) < RetryDownAfter {
			return dst, id, true, &DecodeError{ID: id, Unreachable: true, Err: d.down}
		}
		var err error
		c, err = d.reg.codecFor(d.ctx, int(id))
		if err != nil {
			if statementWide(err) {
				d.down, d.downAt = err, time.Now()
				return dst, id, true, &DecodeError{ID: id, Unreachable: true, Err: err}
			}
			de := &DecodeError{ID: id, Err: err}
			if idNotFound(err) {
				de.Err = fmt.Errorf("the registry %s does not know this schema id", d.reg.urls)
			}
			d.failed[id] = de
			return dst, id, true, de
		}
	}
	d.lastID, d.last = id, c
	return d.appendJSON(dst, b, id, c)
}

func (d *Decoder) appendJSON(dst, b []byte, id int32, c codec) (out []byte, _ int32, ok bool, err error) {
	n := len(dst)
	out, err = c.appendJSON(dst, b[5:])
	if err != nil {
		return out[:n], id, true, &DecodeError{ID: id, Err: fmt.Errorf("%s payload does not decode: %w", typeName(c.kind()), err)}
	}
	return out, id, true, nil
}

// IsRegistryDown reports whether err means the registry could not be used
// at all (unreachable, or refusing kql's credentials), as opposed to an
// answer about one schema.
func IsRegistryDown(err error) bool { return statementWide(err) }

// statementWide is an error no other schema id would escape: the registry
// is unreachable or refuses our credentials.
func statementWide(err error) bool {
	if IsUnreachable(err) {
		return true
	}
	var re *sr.ResponseError
	return errors.As(err, &re) && (re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden)
}
