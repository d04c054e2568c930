package render

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// flushDelay is how long written bytes may wait in the buffer. A result's
// Next can block (a slow CONSUME waiting on a fetch); a background flusher
// then writes out what is buffered, so rows already rendered show promptly
// without a write system call per row.
var flushDelay = 100 * time.Millisecond

// outputBuffer is the size of output's buffer: what one write system call
// writes at least, but for a flush.
const outputBuffer = 64 << 10

// output is the one buffered writer a render goes through. Writes and the
// background flush are serialised by mu.
type output struct {
	mu         sync.Mutex
	bw         *bufio.Writer
	dirtySince time.Time // when the buffer went from empty to non-empty; zero if empty

	stop chan struct{}
	done chan struct{}
}

func newOutput(w io.Writer) *output {
	o := &output{
		bw:   bufio.NewWriterSize(w, outputBuffer),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go o.flushLoop()
	return o
}

func (o *output) flushLoop() {
	defer close(o.done)
	t := time.NewTicker(flushDelay / 2)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case now := <-t.C:
			o.mu.Lock()
			if !o.dirtySince.IsZero() && now.Sub(o.dirtySince) >= flushDelay {
				// An error sticks in bw and is returned by the next write.
				_ = o.flushLocked()
			}
			o.mu.Unlock()
		}
	}
}

// write writes p to the buffer.
func (o *output) write(p []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dirtySince.IsZero() && len(p) > 0 {
		o.dirtySince = time.Now()
	}
	if a := o.bw.Available(); len(p) > a && o.bw.Buffered() > 0 {
		// The buffer is filled up and written out whole, and what is
		// left of p starts the next one, or, a buffer's worth or more,
		// is written directly: bufio would write that rest directly
		// whatever its size, a small write.
		o.bw.Write(p[:a]) // fits: no write yet
		if err := o.bw.Flush(); err != nil {
			return err
		}
		p = p[a:]
	}
	_, err := o.bw.Write(p)
	return err
}

// flush writes out everything buffered.
func (o *output) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.flushLocked()
}

func (o *output) flushLocked() error {
	o.dirtySince = time.Time{}
	return o.bw.Flush()
}

// close stops the flusher and flushes what is left.
func (o *output) close() error {
	close(o.stop)
	<-o.done
	return o.flush()
}
