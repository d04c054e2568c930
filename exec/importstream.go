package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// A FROM FILE that is not a regular file (a named pipe, a character
// device, /dev/stdin) can be read only once, like stdin: a check pass
// would consume it and leave the write pass nothing. Such a file is
// imported as stdin is, in one pass and in transactions of bounded size,
// and a cancel (Ctrl-C) ends it at once, also while it waits for a writer
// or for data.

// isStream reports whether path names something other than a regular
// file. A path that cannot be stat'ed is left to the open to explain.
func isStream(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular()
}

// openStream opens path for one pass that stops when ctx is done. Opening
// a named pipe blocks until a writer opens it: a cancel then opens its
// writing end itself (non-blocking, which succeeds because this reader
// waits) and closes it, so the open returns and sees the end at once. A
// Read waiting for data ends with ctx's error: a pipe's reads go through
// the runtime's poller, which a read deadline interrupts.
func openStream(ctx context.Context, path string) (io.ReadCloser, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-ch:
	case <-ctx.Done():
		// The writing end opens only once the open above waits (ENXIO
		// before): try until it does, or the open returned on its own.
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		fi, err := os.Stat(path)
		pipe := err == nil && fi.Mode()&os.ModeNamedPipe != 0
		for released := false; !released; {
			if !pipe {
				o, released = <-ch, true // a device's open does not wait for a writer
				break
			}
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			select {
			case o = <-ch:
				released = true
			case <-tick.C:
			}
		}
		if o.err == nil {
			o.f.Close()
		}
		return nil, fmt.Errorf("cancelled while waiting for a writer to open %s: %w", path, ctx.Err())
	}
	if o.err != nil {
		return nil, fmt.Errorf("PRODUCE ... FROM FILE: %w", o.err)
	}
	if err := o.f.SetReadDeadline(time.Time{}); err != nil {
		// Not pollable (a device the poller does not take): read as stdin
		// is, on a goroutine that a cancel abandons.
		return &abandonedFile{newCtxReader(ctx, o.f), o.f}, nil
	}
	s := &streamFile{ctx: ctx, f: o.f}
	s.stop = context.AfterFunc(ctx, func() { _ = o.f.SetReadDeadline(time.Unix(1, 0)) })
	return s, nil
}

type streamFile struct {
	ctx  context.Context
	f    *os.File
	stop func() bool
}

func (s *streamFile) Read(p []byte) (int, error) {
	n, err := s.f.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && s.ctx.Err() != nil {
		return n, s.ctx.Err()
	}
	return n, err
}

func (s *streamFile) Close() error {
	s.stop()
	return s.f.Close()
}

type abandonedFile struct {
	*ctxReader
	f *os.File
}

func (a *abandonedFile) Close() error {
	a.ctxReader.Close()
	return a.f.Close()
}
