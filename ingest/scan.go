package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
)

// Batch is a run of consecutive records of the input, in input order.
type Batch struct {
	Records []Record
	slab    slab
}

// ScanConfig tunes Scan.
type ScanConfig struct {
	// Parallel reads the input on a goroutine of its own and decodes jsonl
	// in lanes, one per CPU. The input must then be one whose Read returns
	// by itself (a file, not a terminal or a pipe that may stay quiet): Scan
	// waits for it before returning. Other formats are read in order on the
	// caller's goroutine either way.
	Parallel bool
	// KeepBytes: the records' Key, Value and header Values stay valid after
	// fn returns (they are handed to a producer that sends them later).
	// Without it Scan reuses their memory for the next batch (a check pass).
	// A batch's Records and Headers slices are reused in either case.
	KeepBytes bool
}

// chunkSize is what the parallel reader hands a lane at a time: big enough
// that passing it costs nothing per record, small enough that the chunks in
// flight (two per lane) hold a few MiB.
const chunkSize = 128 << 10

// Scan reads every record of in (format f; name is what errors call it) and
// calls fn with them batch by batch, in input order, on the caller's
// goroutine. It stops at the first record that cannot be read (its *Error
// comes back after fn has had the records before it) or the first error fn
// returns. Every goroutine it starts has ended when it returns.
func Scan(ctx context.Context, in io.Reader, name string, f Format, opt Options, cfg ScanConfig, fn func(*Batch) error) error {
	if cfg.Parallel && f == JSONL {
		return scanParallel(ctx, in, name, cfg, fn)
	}
	r := NewReader(in, name, f, opt)
	b := &Batch{}
	flush := func() error {
		if len(b.Records) == 0 {
			return nil
		}
		err := fn(b)
		b.Records = b.Records[:0]
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.Next()
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			if ferr := flush(); ferr != nil {
				return ferr
			}
			return err
		}
		b.Records = append(b.Records, *rec)
		// A batch goes when full, or when the next record would wait for
		// the input (stdin from a slow writer is not held back).
		if len(b.Records) == 1024 || r.br.Buffered() == 0 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// chunk is a run of whole lines for a lane, and what the lane made of it.
type chunk struct {
	data      []byte // whole lines; nil with err set: the input failed
	firstLine int    // the line data starts on
	batch     *Batch
	err       error
	done      chan struct{}
}

func scanParallel(ctx context.Context, in io.Reader, name string, cfg ScanConfig, fn func(*Batch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	lanes := max(runtime.GOMAXPROCS(0), 1)
	order := make(chan *chunk, 2*lanes) // chunks in input order, bounded
	work := make(chan *chunk, 2*lanes)
	bufs := make(chan []byte, 2*lanes+3)
	batches := make(chan *Batch, 2*lanes+3)
	getBatch := func() *Batch {
		select {
		case b := <-batches:
			return b
		default:
			return &Batch{}
		}
	}
	var wg sync.WaitGroup
	wg.Add(1 + lanes)
	go func() { // the reader: cuts the input into whole lines
		defer wg.Done()
		defer close(order)
		defer close(work)
		line := 1
		var carry []byte
		send := func(c *chunk) bool {
			select {
			case order <- c:
			case <-ctx.Done():
				return false
			}
			if c.data == nil {
				close(c.done)
				return true
			}
			select {
			case work <- c:
				return true
			case <-ctx.Done():
				close(c.done)
				return false
			}
		}
		for {
			var buf []byte
			if len(carry) >= chunkSize/2 {
				// A line longer than the buffers so far: a bigger one.
				buf = make([]byte, 0, 2*len(carry))
			} else {
				select {
				case buf = <-bufs:
				default:
					buf = make([]byte, 0, chunkSize)
				}
			}
			buf = append(buf[:0], carry...)
			var rerr error
			for len(buf) < cap(buf) && rerr == nil {
				n, err := in.Read(buf[len(buf):cap(buf)])
				buf, rerr = buf[:len(buf)+n], err
			}
			cut := len(buf)
			if rerr == nil {
				if cut = bytes.LastIndexByte(buf, '\n') + 1; cut == 0 {
					carry = buf // no line ends in it yet
					continue
				}
			}
			carry = append(carry[:0:0], buf[cut:]...)
			if cut > 0 {
				c := &chunk{data: buf[:cut], firstLine: line, done: make(chan struct{})}
				if line == 1 {
					c.data = trimBOM(c.data)
				}
				line += bytes.Count(c.data, []byte{'\n'})
				if !send(c) {
					return
				}
			}
			if rerr != nil {
				if rerr != io.EOF {
					send(&chunk{firstLine: line, err: &readError{name: name, line: line, err: rerr}, done: make(chan struct{})})
				}
				return
			}
		}
	}()
	for range lanes {
		go func() {
			defer wg.Done()
			r := &Reader{name: name, f: JSONL}
			for c := range work {
				if ctx.Err() != nil {
					close(c.done)
					continue
				}
				b := getBatch()
				c.batch = b
				c.err = parseChunk(r, c, cfg.KeepBytes)
				select {
				case bufs <- c.data[:0]:
				default:
				}
				close(c.done)
			}
		}()
	}
	finish := func(err error) error {
		cancel()
		for c := range order { // let the reader and the lanes end
			<-c.done
		}
		wg.Wait()
		return err
	}
	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
			return finish(ctx.Err())
		}
		if c.batch != nil && len(c.batch.Records) > 0 {
			if err := fn(c.batch); err != nil {
				return finish(err)
			}
		}
		if c.err != nil {
			return finish(c.err)
		}
		if c.batch != nil {
			select {
			case batches <- c.batch:
			default:
			}
		}
		if err := ctx.Err(); err != nil {
			return finish(err)
		}
	}
	return finish(ctx.Err())
}

// readError is the input failing (not a record that is wrong).
type readError struct {
	name string
	line int
	err  error
}

func (e *readError) Error() string {
	return e.name + ": reading line " + itoa(e.line) + ": " + e.err.Error()
}

func (e *readError) Unwrap() error { return e.err }

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// parseChunk decodes c's lines into c.batch: each by the fast path, or, when
// it gives up, by jsonRecord.
func parseChunk(r *Reader, c *chunk, keepBytes bool) error {
	b := c.batch
	b.Records = b.Records[:0]
	b.slab.reset()
	if keepBytes || cap(b.slab.bytes) < len(c.data) {
		// Decoded bytes are never longer than their JSON text.
		b.slab.bytes = make([]byte, 0, len(c.data))
	}
	data := c.data
	for n := c.firstLine; len(data) > 0; n++ {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if k := len(line); k > 0 && line[k-1] == '\r' {
			line = line[:k-1]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		b.Records = append(b.Records, Record{Line: n})
		rec := &b.Records[len(b.Records)-1]
		mark := len(b.slab.bytes)
		hmark := len(b.slab.headers)
		if fastJSONL(line, &b.slab, rec) {
			continue
		}
		b.slab.bytes, b.slab.headers = b.slab.bytes[:mark], b.slab.headers[:hmark]
		got, err := r.jsonRecord(line, origin{n, 1})
		if err != nil {
			b.Records = b.Records[:len(b.Records)-1]
			var e *Error
			if !errors.As(err, &e) {
				return err
			}
			return e
		}
		*rec = *got
	}
	return nil
}
