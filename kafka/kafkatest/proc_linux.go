//go:build linux

package kafkatest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// The kernel sends a child's parent-death signal when the *thread* that
// forked it exits, not the process. Go may retire threads (a goroutine that
// exits while locked to its thread takes the thread with it), so every JVM is
// forked from one goroutine locked to a thread that never exits: the signal
// then fires exactly when the test binary dies, however it dies (panic,
// timeout, SIGKILL), and no JVM outlives it.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

// startProcess starts cmd in its own process group (so a Ctrl-C meant for
// the test binary or `make cluster` does not reach the JVMs directly; we stop
// them ourselves) with SIGKILL as its parent-death signal.
func startProcess(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for r := range spawner.reqs {
				r.done <- r.cmd.Start()
			}
		}()
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	done := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, done: done}
	return <-done
}
