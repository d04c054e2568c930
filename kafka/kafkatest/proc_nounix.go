//go:build !unix

package kafkatest

import (
	"os"
	"os/exec"
)

// startProcess starts cmd. The real-Kafka test bed is developed and run on
// Linux; elsewhere it only has to build.
func startProcess(cmd *exec.Cmd) error { return cmd.Start() }

// lockFile does not lock where flock(2) is missing: concurrent first
// downloads of the same Kafka version then race, which costs a second
// download, never a broken cache (the cache directory is renamed into
// place only when complete).
func lockFile(f *os.File) error   { return nil }
func unlockFile(f *os.File) error { return nil }

func processAlive(pid int) bool { return true }

func terminate(p *os.Process) error { return p.Kill() }
