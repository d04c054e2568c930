package exec

import (
	"fmt"
	"math"

	"github.com/kql-dev/kql/result"
)

// EncodeWith makes the read encode its records in the reader's lanes, in
// parallel with the writer (result.EncodingStream), when they go out as
// they were read: a forward read with no WHERE, no SKIP and no schema
// decoding, not started yet. Anything else is read record by record.
func (r *consumeResult) EncodeWith(newEncoder func() result.RecordEncoder) bool {
	if r.done || r.mg.mx != nil || r.plan.tail || (r.q != nil && r.q.where != nil) || r.toSkip > 0 || r.dec.decodes() {
		return false
	}
	r.mg.newEncoder = newEncoder
	return true
}

// NextEncoded is NextRecord for a read that EncodeWith made encoding.
func (r *consumeResult) NextEncoded() ([]byte, bool) {
	if r.done || r.emitted >= r.plan.limit {
		r.endRead()
		return nil, false
	}
	b, ok, err := r.mg.nextEncoded()
	if err != nil {
		r.finish()
		r.err = r.mg.cutOff(fmt.Sprintf("CONSUME %q (some partitions could not be read)", r.plan.stmt.Topic), err)
		return nil, false
	}
	if !ok {
		r.endRead()
		return nil, false
	}
	r.stats.AddScanned(1)
	r.emitted++
	return b, true
}

// AppendEncoded is NextEncoded for a run of records: their bytes appended
// to dst (result.EncodingStream).
func (r *consumeResult) AppendEncoded(dst []byte, size int) ([]byte, int, bool) {
	if r.done || r.emitted >= r.plan.limit {
		r.endRead()
		return dst, 0, false
	}
	dst, n, more, err := r.mg.appendEncoded(dst, int(min(r.plan.limit-r.emitted, math.MaxInt32)), size)
	r.stats.AddScanned(int64(n))
	r.emitted += int64(n)
	if err != nil {
		r.finish()
		r.err = r.mg.cutOff(fmt.Sprintf("CONSUME %q (some partitions could not be read)", r.plan.stmt.Topic), err)
		return dst, n, false
	}
	if !more {
		r.endRead()
		return dst, n, false
	}
	return dst, n, true
}

// decodes reports whether records are decoded (a registry, or a local
// schema): their output then is not their bytes as read.
func (d *recordDecoder) decodes() bool {
	return d.dec != nil || d.key != nil || d.value != nil
}
