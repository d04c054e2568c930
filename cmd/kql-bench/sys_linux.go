package main

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// childAttrs puts a child in its own process group (so the bench can kill
// it with everything it started) and asks the kernel to kill it if the
// bench dies first.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

func fillRusage(s *sample, ps *os.ProcessState) error {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return errors.New("no rusage for the child")
	}
	s.user = time.Duration(ru.Utime.Nano())
	s.sys = time.Duration(ru.Stime.Nano())
	s.rssKiB = ru.Maxrss
	return nil
}
