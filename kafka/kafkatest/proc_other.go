//go:build unix && !linux

package kafkatest

import (
	"os/exec"
	"syscall"
)

// startProcess starts cmd in its own process group. Without Linux's
// parent-death signal a JVM can outlive a test binary that is killed
// outright; a normal exit, a failed test and a panic inside a test still tear
// it down through Main and the stale-directory sweep.
func startProcess(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}
