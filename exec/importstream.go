package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// streamWaiting is called when openStream starts waiting for a writer to
// open the named pipe at path (tests hold the wait still with it).
var streamWaiting = func(path string) {}

// openStream opens path for one pass that stops when ctx is done. A named
// pipe is opened without waiting (O_NONBLOCK: opening it to read would
// block in the kernel until a writer opens it, where no cancel reaches:
// if the pipe was deleted or replaced meanwhile, nothing could ever open
// its writing end to release it), then kql waits for a writer in the
// runtime's poller, which a cancel interrupts (a read deadline), as it
// interrupts a Read waiting for data.
func openStream(ctx context.Context, path string) (io.ReadCloser, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("PRODUCE ... FROM FILE: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("PRODUCE ... FROM FILE: %w", err)
	}
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		// Not pollable (a device the poller does not take; the runtime
		// made its reads blocking again): read as stdin is, on a
		// goroutine that a cancel abandons.
		return &abandonedFile{newCtxReader(ctx, f), f}, nil
	}
	s := &streamFile{ctx: ctx, f: f}
	s.stop = context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	if fi.Mode()&os.ModeNamedPipe != 0 {
		if err := waitForWriter(ctx, f, path); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// waitForWriter returns once the pipe f has data or a writer came and went
// (its end): until a writer opens it, a read of a pipe opened O_NONBLOCK
// says end of file. poll(2) tells the cases apart and consumes nothing;
// the wait between two polls is the runtime poller's, ended by the read
// deadline a cancel sets.
func waitForWriter(ctx context.Context, f *os.File, path string) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("PRODUCE ... FROM FILE: %w", err)
	}
	streamWaiting(path)
	var perr error
	err = rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err != nil && err != unix.EINTR {
			perr = err
			return true
		}
		return n > 0 // POLLIN: data; POLLHUP: a writer closed it
	})
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("cancelled while waiting for a writer to open %s: %w", path, ctx.Err())
	case err != nil:
		return fmt.Errorf("PRODUCE ... FROM FILE: waiting for a writer to open %s: %w", path, err)
	case perr != nil:
		return fmt.Errorf("PRODUCE ... FROM FILE: waiting for a writer to open %s: %w", path, perr)
	}
	return nil
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
