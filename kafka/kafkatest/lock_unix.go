//go:build unix

package kafkatest

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on f, waiting for it: it serialises the
// first download of a Kafka version between test binaries that `go test
// ./...` runs in parallel.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// processAlive reports whether a process with this pid exists (signal 0
// checks without sending anything; EPERM means it exists but is not ours).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// terminate asks a JVM to shut down cleanly (its shutdown hook runs Kafka's
// controlled shutdown).
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
