package kafkatest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	ownerFile = "owner.pid" // in a cluster or registry directory: the pid of the process that started it
	pidFile   = "jvm.pid"   // in a node or registry directory: the pid of its latest JVM
)

// sweepStale removes cluster and registry directories left behind by test
// binaries that died without tearing down (a panic outside a test, a
// timeout, SIGKILL).
// Their JVMs died with them (parent-death signal); if one somehow did not, it
// is killed here, but only a pid recorded in that directory whose command
// line names that directory: nothing is ever killed by name.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "kql-kafka-*"))
	registries, _ := filepath.Glob(filepath.Join(os.TempDir(), "kql-registry-*"))
	dirs = append(dirs, registries...)
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			// Perhaps being created right now; only old ones are debris.
			if fi, err := os.Stat(dir); err != nil || time.Since(fi.ModTime()) < time.Minute {
				continue
			}
		} else if owner, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && processAlive(owner) {
			continue
		}
		pids, _ := filepath.Glob(filepath.Join(dir, "node-*", pidFile)) // a cluster's nodes
		pids = append(pids, filepath.Join(dir, pidFile))                // a registry
		for _, pf := range pids {
			data, err := os.ReadFile(pf)
			if err != nil {
				continue
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil || !processAlive(pid) || !commandNames(pid, dir) {
				continue
			}
			if p, err := os.FindProcess(pid); err == nil {
				fmt.Fprintf(os.Stderr, "kafkatest: killing leftover JVM %d of %s\n", pid, dir)
				p.Kill()
			}
		}
		os.RemoveAll(dir)
	}
}

// commandNames reports whether process pid's command line mentions dir
// (Linux /proc; elsewhere it reports false, so nothing is killed).
func commandNames(pid int, dir string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && bytes.Contains(cmdline, []byte(dir+string(filepath.Separator)))
}

// ownedTempDir makes a test-bed directory whose owner file names this
// process, so that sweepStale removes it (and kills what it records) if the
// process dies without tearing down. what names it in errors.
func ownedTempDir(prefix, what string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", fmt.Errorf("creating the %s directory: %w", what, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("writing the %s owner file: %w", what, err)
	}
	return dir, nil
}
