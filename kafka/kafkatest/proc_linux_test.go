package kafkatest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChildDiesWithTestBinary checks the guarantee behind "no JVM outlives
// the test binary": a process started with startProcess is killed when the
// process that started it dies, here by SIGKILL, where no Go code runs.
func TestChildDiesWithTestBinary(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessStartsChildThenDies$", "-test.v")
	cmd.Env = append(os.Environ(), "KQL_KAFKATEST_HELPER=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := -1
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "child pid "); ok {
			child, _ = strconv.Atoi(s)
		}
	}
	err = cmd.Wait()
	if child <= 0 {
		t.Fatalf("the helper did not report its child's pid (exit: %v)", err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the helper was supposed to die by SIGKILL, got %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !gone(child) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("child %d outlived the process that started it", child)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHelperProcessStartsChildThenDies is the helper process of
// TestChildDiesWithTestBinary, run as a separate test binary; it does nothing
// in a normal run.
func TestHelperProcessStartsChildThenDies(t *testing.T) {
	if os.Getenv("KQL_KAFKATEST_HELPER") != "1" {
		return
	}
	cmd := exec.Command("sleep", "300")
	if err := startProcess(cmd); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("child pid %d\n", cmd.Process.Pid)
	os.Stdout.Sync()
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
}

// gone reports whether pid has exited (a zombie awaiting its new parent's
// reaping counts as exited).
func gone(pid int) bool {
	if !processAlive(pid) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

