package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// sample is one run of one contender, from the child's own rusage: the bench
// process's work (kfake serving the fetches, validating output) is not in
// user, sys or RSS, only in wall.
type sample struct {
	wall, user, sys time.Duration
	rssKiB          int64 // ru_maxrss: peak resident set, KiB on Linux
	// registry is the schema registry requests the run made (counted by
	// the bench's registry, not reported by the spawner).
	registry int64
}

// runChild runs argv through the spawner (see spawn.go) with stdout and
// stderr to files and returns the child's measurements. The spawner and the
// child run in their own process group, which is killed when the timeout or
// ctx ends them, and once more after they exit, so nothing they started
// outlives them.
func runChild(ctx context.Context, e *benchEnv, argv []string, timeout time.Duration, stdoutPath string) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stderrPath := filepath.Join(e.tmp, "stderr")
	reportPath := filepath.Join(e.tmp, "rusage")
	os.Remove(reportPath)
	out, err := os.Create(stdoutPath)
	if err != nil {
		return sample{}, err
	}
	defer out.Close()
	errf, err := os.Create(stderrPath)
	if err != nil {
		return sample{}, err
	}
	defer errf.Close()

	cmd := exec.CommandContext(ctx, e.self, append([]string{"-spawn", reportPath, "--"}, argv...)...)
	cmd.Stdout, cmd.Stderr = out, errf // files, not pipes: no copying goroutine in the bench competes with the child
	cmd.SysProcAttr = childAttrs()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if cmd.Process != nil {
		killGroup(cmd.Process.Pid)
	}
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("killed after the %s timeout", timeout)
		case ctx.Err() != nil:
			return sample{}, ctx.Err()
		}
		if tail := fileTail(stderrPath, 2000); tail != "" {
			err = fmt.Errorf("%v\n%s", err, tail)
		}
		return sample{}, fmt.Errorf("%s: %v", shortArgv(argv), err)
	}
	rep, err := os.ReadFile(reportPath)
	if err != nil {
		return sample{}, fmt.Errorf("the spawner left no report: %w", err)
	}
	return parseSample(string(rep))
}

// runContender is runChild for one run of k, which also counts the schema
// registry requests the run made: children run one at a time, so the
// requests between its start and its end are its own.
func runContender(ctx context.Context, e *benchEnv, k *contender, stdoutPath string) (sample, error) {
	if k.prepare != nil {
		if err := k.prepare(ctx); err != nil {
			return sample{}, fmt.Errorf("%s: preparing a run: %w", k.name, err)
		}
	}
	if e.registry == nil {
		return runChild(ctx, e, k.argv, k.timeout, stdoutPath)
	}
	e.registry.take()
	s, err := runChild(ctx, e, k.argv, k.timeout, stdoutPath)
	k.registryLog = e.registry.take()
	s.registry = int64(len(k.registryLog))
	return s, err
}

func shortArgv(argv []string) string {
	a := append([]string{filepath.Base(argv[0])}, argv[1:]...)
	for i, s := range a {
		if strings.ContainsAny(s, " '") {
			a[i] = "'" + s + "'"
		}
	}
	return strings.Join(a, " ")
}

func fileTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		f.Seek(fi.Size()-n, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return strings.TrimSpace(string(b))
}

// oneShotReps is how many times a one-shot statement runs per round.
const oneShotReps = 5

// timeRounds runs every contender runs times, round-robin, and starts each
// round one contender later, so that neither a slow drift of the machine's
// load nor the order within a round favours one contender. Every run's
// output is validated again (untimed).
func timeRounds(ctx context.Context, e *benchEnv, cs []*contender, progress io.Writer) (map[string][]sample, error) {
	res := make(map[string][]sample)
	out := filepath.Join(e.tmp, "out")
	defer os.Remove(out)
	for r := range e.cfg.runs {
		fmt.Fprintf(progress, "round %d/%d:", r+1, e.cfg.runs)
		for i := range cs {
			k := cs[(i+r)%len(cs)]
			// A one-shot statement takes milliseconds, so it runs a few
			// times per round: more samples for the same time.
			reps := 1
			if k.records == 0 {
				reps = oneShotReps
			}
			var walls []time.Duration
			for range reps {
				s, err := runContender(ctx, e, k, out)
				if err == nil {
					if err = k.check(out); err != nil {
						err = fmt.Errorf("wrong output: %w", err)
					}
				}
				if err != nil {
					fmt.Fprintln(progress) // end the round's line before the error
					return nil, fmt.Errorf("%s, round %d: %w", k.name, r+1, err)
				}
				os.Remove(out)
				res[k.name] = append(res[k.name], s)
				walls = append(walls, s.wall)
			}
			fmt.Fprintf(progress, " %s %s", k.name, fmtSec(median(walls)))
			if i < len(cs)-1 {
				fmt.Fprint(progress, ",")
			}
		}
		fmt.Fprintln(progress)
	}
	return res, nil
}

// writeStats is the write syscall count of one contender's run.
type writeStats struct {
	contender     string
	writes, bytes int64
	note          string // why it was not measured
}

// stdoutWrite matches strace's line for a write to fd 1 (with -f, lines
// start with the thread id).
var stdoutWrite = regexp.MustCompile(`(?m)^(\d+ +)?write\(1,`)

// countWrites runs the contender marked writeStats once under strace and
// counts its writes to stdout (Go's runtime also writes to an eventfd; those
// are not output). Untimed: strace slows every syscall.
func countWrites(ctx context.Context, e *benchEnv, cs []*contender) writeStats {
	var k *contender
	for _, c := range cs {
		if c.goal.writeStats {
			k = c
		}
	}
	if k == nil {
		return writeStats{note: "no contender to count"}
	}
	ws := writeStats{contender: k.name}
	strace, ok := lookPath("strace")
	if !ok {
		ws.note = "strace is not on PATH: write syscalls not counted (apt-get install strace)"
		return ws
	}
	log := filepath.Join(e.tmp, "strace.log")
	out := filepath.Join(e.tmp, "out")
	defer os.Remove(log)
	defer os.Remove(out)
	argv := append([]string{strace, "-f", "-qq", "-s", "0", "-e", "trace=write", "-e", "signal=none", "-o", log}, k.argv...)
	if _, err := runChild(ctx, e, argv, 2*k.timeout, out); err != nil {
		ws.note = fmt.Sprintf("strace run failed: %v", err)
		return ws
	}
	if err := k.check(out); err != nil {
		ws.note = fmt.Sprintf("strace run gave wrong output: %v", err)
		return ws
	}
	b, err := os.ReadFile(log)
	if err != nil {
		ws.note = err.Error()
		return ws
	}
	fi, err := os.Stat(out)
	if err != nil {
		ws.note = err.Error()
		return ws
	}
	ws.writes = int64(len(stdoutWrite.FindAllIndex(b, -1)))
	ws.bytes = fi.Size()
	return ws
}
