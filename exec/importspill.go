package exec

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kql-dev/kql/ingest"
	"github.com/kql-dev/kql/kafka"
)

// An import of a file checks every record before it writes the first (a
// bad line anywhere writes nothing), and decoding a jsonl line was half of
// the import's CPU when both passes did it. So the check pass keeps what it
// decoded, the records as they will be written (partition chosen, schema
// encoded), in a compact binary spill, and the write pass reads them back
// from it: a memcpy's worth of work a record instead of a JSON decode. The
// spill stays in memory up to spillMemBudget (a small import touches no
// disk) and goes to a temporary file beyond it, so the import's memory is
// as flat as before; the file is unlinked as soon as it is created, so
// nothing is left behind whatever becomes of the statement. A spill that
// cannot be written (no temporary directory, a full disk) is dropped and
// the write pass decodes the file again, as it did before.
//
// Writing in one transaction for the whole file, aborted on a bad line,
// would decode once without a spill, but an aborted transaction is still
// written: its records take offsets, and read_uncommitted readers (kcat,
// a Java consumer's default) see them. That is not "nothing is written".

// spillMemBudget is how much spill stays in memory before it goes to a
// file; tests lower it.
var spillMemBudget = 8 << 20

// spillBlock is the unit the spill is written and read in: whole records,
// a block of its own for a record larger than that.
const spillBlock = 256 << 10

// record flags
const (
	spillKey       = 1 << iota // the key is not NULL
	spillValue                 // the value is not NULL
	spillTime                  // the record has a timestamp (else: the time of writing)
	spillSpan                  // the record has a FORMAT json span (where its bytes are in the input)
	spillLineStart             // that span starts its line
)

type importSpill struct {
	blocks  [][]byte // in memory, while the whole spill is under the budget
	inMem   int
	f       *os.File // the spill file once over the budget
	cur     []byte
	last    int   // the first line of the last record added
	lastEnd int64 // the end of its span
	records int64
	err     error // the spill failed: it is dropped
	made    int   // blocks allocated to read the file into (tests)
}

func newImportSpill() *importSpill { return &importSpill{cur: make([]byte, 0, spillBlock)} }

// add appends rec, read at at in the input. A zero Timestamp means the
// time of writing.
func (s *importSpill) add(rec *kafka.OutRecord, at importPos) {
	if s.err != nil {
		return
	}
	need := 96 + len(rec.Key) + len(rec.Value) // an upper bound of its encoding
	for _, h := range rec.Headers {
		need += 20 + len(h.Key) + len(h.Value)
	}
	if len(s.cur) > 0 && len(s.cur)+need > cap(s.cur) {
		s.seal() // a block is never reallocated by growing past its size
	}
	b := s.cur
	b = binary.AppendUvarint(b, uint64(at.line-s.last))
	b = binary.AppendUvarint(b, uint64(at.endLine-at.line))
	s.last = at.line
	b = binary.AppendUvarint(b, uint64(rec.Partition))
	var flags byte
	if at.span != (ingest.Span{}) {
		flags |= spillSpan
		if at.span.LineStart {
			flags |= spillLineStart
		}
	}
	if rec.Key != nil {
		flags |= spillKey
	}
	if rec.Value != nil {
		flags |= spillValue
	}
	if !rec.Timestamp.IsZero() {
		flags |= spillTime
	}
	b = append(b, flags)
	if flags&spillSpan != 0 {
		// Offsets only grow: each after the last record's end.
		b = binary.AppendUvarint(b, uint64(at.span.Offset-s.lastEnd))
		b = binary.AppendUvarint(b, uint64(at.span.End-at.span.Offset))
		b = binary.AppendUvarint(b, uint64(at.span.Col))
		b = binary.AppendUvarint(b, uint64(at.span.EndCol))
		s.lastEnd = at.span.End
	}
	if flags&spillTime != 0 {
		b = binary.AppendVarint(b, rec.Timestamp.UnixMilli()) // what Kafka keeps
	}
	if rec.Key != nil {
		b = binary.AppendUvarint(b, uint64(len(rec.Key)))
		b = append(b, rec.Key...)
	}
	if rec.Value != nil {
		b = binary.AppendUvarint(b, uint64(len(rec.Value)))
		b = append(b, rec.Value...)
	}
	b = binary.AppendUvarint(b, uint64(len(rec.Headers)))
	for _, h := range rec.Headers {
		b = binary.AppendUvarint(b, uint64(len(h.Key)))
		b = append(b, h.Key...)
		if h.Value == nil {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(h.Value))+1)
		b = append(b, h.Value...)
	}
	s.cur = b
	s.records++
}

// seal ends the block being filled.
func (s *importSpill) seal() {
	if len(s.cur) == 0 || s.err != nil {
		return
	}
	if s.f == nil && s.inMem+len(s.cur) <= spillMemBudget {
		s.blocks = append(s.blocks, s.cur)
		s.inMem += len(s.cur)
		s.cur = make([]byte, 0, spillBlock)
		return
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "kql-import-*.spill")
		if err != nil {
			s.fail(err)
			return
		}
		os.Remove(f.Name()) // the open file is all that is left of it
		s.f = f
		for _, blk := range s.blocks {
			s.writeBlock(blk)
		}
		s.blocks, s.inMem = nil, 0
	}
	s.writeBlock(s.cur)
	s.cur = s.cur[:0]
}

func (s *importSpill) writeBlock(b []byte) {
	if s.err != nil {
		return
	}
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(b)))
	if _, err := s.f.Write(n[:]); err != nil {
		s.fail(err)
		return
	}
	if _, err := s.f.Write(b); err != nil {
		s.fail(err)
	}
}

func (s *importSpill) fail(err error) {
	s.err = fmt.Errorf("the import's spill of checked records: %w", err)
	s.blocks, s.inMem, s.cur = nil, 0, nil
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

// finish ends the spill after the last add. An error means the spill is
// gone and the input must be decoded again.
func (s *importSpill) finish() error {
	s.seal()
	if s.err == nil && s.f != nil {
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			s.fail(err)
		}
	}
	return s.err
}

// Close drops the spill.
func (s *importSpill) Close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.blocks = nil
}

// each hands fn every record added (of topic), in order, with where it
// was in the input. The record is reused for the next one; its Key, Value and header
// Values stay valid after fn returns (a producer sends them later) until
// answered says the producer is done with them: answered() is how many of
// the records handed out so far, counted from the first, are no longer
// read (kafka.Writer.Answered). A block read from the file is read into
// again once every record of it is, not at the transaction's commit, so
// the spill's memory is that of the records in flight.
func (s *importSpill) each(ctx context.Context, topic string, answered func() int64, fn func(*kafka.OutRecord, importPos) error) error {
	d := spillDecoder{topic: topic, keys: map[string]string{}}
	if s.f == nil {
		for _, blk := range s.blocks {
			if err := d.block(ctx, blk, fn); err != nil {
				return err
			}
		}
		return nil
	}
	type used struct {
		blk []byte
		end int64 // records handed out after its last one
	}
	var inUse []used
	var free [][]byte
	for {
		if n := len(inUse); n > 0 {
			inUse[n-1].end = d.handed
			done := answered()
			k := 0
			for k < n && inUse[k].end <= done {
				if len(free) < maxFreeSpillBlocks {
					free = append(free, inUse[k].blk)
				}
				k++
			}
			inUse = append(inUse[:0], inUse[k:]...)
		}
		var n [4]byte
		if _, err := io.ReadFull(s.f, n[:]); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("reading the import's spill of checked records: %w", err)
		}
		size := int(binary.LittleEndian.Uint32(n[:]))
		var blk []byte
		if k := len(free) - 1; k >= 0 && cap(free[k]) >= size {
			blk, free = free[k][:size], free[:k]
		} else {
			// Every block as big as the largest of its kind, so that
			// any free one takes the next.
			blk = make([]byte, size, max(size, spillBlock))
			s.made++
		}
		inUse = append(inUse, used{blk: blk})
		if _, err := io.ReadFull(s.f, blk); err != nil {
			return fmt.Errorf("reading the import's spill of checked records: %w", err)
		}
		if err := d.block(ctx, blk, fn); err != nil {
			return err
		}
	}
}

// maxFreeSpillBlocks bounds the answered blocks kept to be read into
// again; more go to the GC.
const maxFreeSpillBlocks = 16

type spillDecoder struct {
	topic  string
	rec    kafka.OutRecord
	at     importPos
	end    int64             // the last span's end
	keys   map[string]string // header keys, one string each
	handed int64             // records handed to fn
}

var errSpillCorrupt = errors.New("the import's spill of checked records is corrupt")

func (d *spillDecoder) block(ctx context.Context, b []byte, fn func(*kafka.OutRecord, importPos) error) error {
	bad := false // b ended inside a record: the spill is corrupt
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			bad, b = true, nil
			return 0
		}
		b = b[n:]
		return v
	}
	take := func(n uint64) []byte {
		if n > uint64(len(b)) {
			bad, b = true, nil
			return nil
		}
		v := b[:n:n]
		b = b[n:]
		return v
	}
	for len(b) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		d.at.line += int(uv())
		d.at.endLine = d.at.line + int(uv())
		r := &d.rec
		r.Partition = int32(uv())
		var flags byte
		if f := take(1); f != nil {
			flags = f[0]
		}
		r.Topic = d.topic
		r.Key, r.Value, r.Headers = nil, nil, r.Headers[:0]
		d.at.span = ingest.Span{}
		if flags&spillSpan != 0 {
			sp := &d.at.span
			sp.Offset = d.end + int64(uv())
			sp.End = sp.Offset + int64(uv())
			sp.Col, sp.EndCol = int32(uv()), int32(uv())
			sp.LineStart = flags&spillLineStart != 0
			d.end = sp.End
		}
		if flags&spillTime != 0 {
			ms, n := binary.Varint(b)
			if n <= 0 {
				return errSpillCorrupt
			}
			b = b[n:]
			r.Timestamp = time.UnixMilli(ms)
		} else {
			r.Timestamp = time.Now()
		}
		if flags&spillKey != 0 {
			r.Key = take(uv())
		}
		if flags&spillValue != 0 {
			r.Value = take(uv())
		}
		for range uv() {
			k := take(uv())
			key, ok := d.keys[string(k)]
			if !ok {
				key = string(k)
				if len(d.keys) < 4096 {
					d.keys[key] = key
				}
			}
			var v []byte
			if n := uv(); n > 0 {
				v = take(n - 1)
			}
			r.Headers = append(r.Headers, kafka.Header{Key: key, Value: v})
		}
		if bad {
			return errSpillCorrupt
		}
		d.handed++
		if err := fn(r, d.at); err != nil {
			return err
		}
	}
	return nil
}
