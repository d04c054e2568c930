//go:build !linux

package main

import (
	"errors"
	"os"
	"syscall"
)

// kql-bench reads peak RSS from Linux's rusage (ru_maxrss in KiB) and kills
// children by process group; elsewhere it refuses to measure rather than
// report numbers in other units.

var errNotLinux = errors.New("kql-bench measures with Linux rusage and runs on Linux only")

func childAttrs() *syscall.SysProcAttr           { return nil }
func killGroup(int) error                        { return nil }
func fillRusage(*sample, *os.ProcessState) error { return errNotLinux }
