package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Why a spawner: Linux's ru_maxrss of a process counts the memory of the
// process it was forked from. Go forks with CLONE_VM|CLONE_VFORK, so at exec
// the child's peak RSS starts at the parent's whole resident set, and a
// child of the bench (which holds kfake and its 11M records) would report
// the bench's RSS, hundreds of MiB, whatever it used itself. So each child is
// started by a small, fresh re-execution of this binary (-spawn), whose own
// resident set is a few MiB: the child's ru_maxrss is then its own peak, or
// the spawner's few MiB if that is larger. The spawner also times the child
// itself, so its own start-up is not in the wall time.

// spawnMain (-spawn FILE -- argv...) runs argv with the spawner's stdin,
// stdout and stderr, in the spawner's process group, and writes the child's
// wall time, user and system CPU and peak RSS to FILE. It fails if the child
// fails.
func spawnMain(report string, argv []string) error {
	if len(argv) == 0 {
		return fmt.Errorf("-spawn: no command")
	}
	// The parent-death signal follows the forking thread (see run).
	runtime.LockOSThread()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if a := childAttrs(); a != nil {
		a.Setpgid = false // stay in the group the bench kills on timeout
		cmd.SysProcAttr = a
	}
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s: %w", shortArgv(argv), err)
	}
	s := sample{wall: wall}
	if err := fillRusage(&s, cmd.ProcessState); err != nil {
		return err
	}
	return os.WriteFile(report, []byte(formatSample(s)), 0o644)
}

// formatSample and parseSample carry a sample from the spawner to the bench.
func formatSample(s sample) string {
	return fmt.Sprintf("%d %d %d %d\n", s.wall, s.user, s.sys, s.rssKiB)
}

func parseSample(text string) (sample, error) {
	f := strings.Fields(text)
	if len(f) != 4 {
		return sample{}, fmt.Errorf("bad spawner report %q", text)
	}
	var v [4]int64
	for i := range f {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return sample{}, fmt.Errorf("bad spawner report %q", text)
		}
		v[i] = n
	}
	return sample{wall: time.Duration(v[0]), user: time.Duration(v[1]), sys: time.Duration(v[2]), rssKiB: v[3]}, nil
}
