//go:build linux

package kafkatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
)

// TestRegistryLifecycle starts a registry of its own and checks what the
// shared one relies on: the JVM carries the run marker the Makefile's leak
// check looks for, listens on loopback only, takes RegistryConfig.Props, and
// is gone with its directory after Close.
func TestRegistryLifecycle(t *testing.T) {
	marker := os.Getenv("KQL_TEST_RUN")
	if marker == "" {
		marker = fmt.Sprintf("registry-lifecycle-%d", os.Getpid())
		t.Setenv("KQL_TEST_RUN", marker)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var log bytes.Buffer
	// max-subjects 2 proves Props reach the registry, and shows what a real
	// Apicurio with its default of 1000 does to a longer list.
	r, err := StartRegistry(ctx, RegistryConfig{Log: &log, Props: map[string]string{"apicurio.ccompat.max-subjects": "2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Logf("%s", strings.TrimSpace(log.String()))
	pid := r.jvm.proc.Pid

	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(environ, []byte("\x00KQL_TEST_RUN="+marker+"\x00")) && !bytes.HasPrefix(environ, []byte("KQL_TEST_RUN="+marker+"\x00")) {
		t.Errorf("the registry JVM (pid %d) does not carry KQL_TEST_RUN=%s: the Makefile's leak check would not see it", pid, marker)
	}
	listening, err := listeningAddrs(pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(listening) == 0 {
		t.Errorf("found no listening socket of the registry JVM (pid %d)", pid)
	}
	for _, a := range listening {
		if !loopback(a) {
			t.Errorf("the registry JVM listens on %s, want loopback only (all: %v)", a, listening)
		}
	}
	t.Logf("registry pid %d listens on %v", pid, listening)

	cl, err := sr.NewClient(sr.URLs(r.URL()))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "b", "c"} {
		if _, err := cl.CreateSchema(ctx, s, sr.Schema{Schema: `"string"`}); err != nil {
			t.Fatal(err)
		}
	}
	if subjects, err := cl.Subjects(ctx); err != nil || len(subjects) != 2 {
		t.Errorf("Subjects() with apicurio.ccompat.max-subjects=2 and 3 subjects = %v, %v; want 2 of them", subjects, err)
	}

	dir := r.Dir()
	r.Close()
	if !gone(pid) {
		t.Errorf("the registry JVM (pid %d) is still running after Close", pid)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left %s behind (%v)", dir, err)
	}
}

// TestRegistryStartFailure checks that a registry that cannot start says why,
// with its log, and leaves nothing behind.
func TestRegistryStartFailure(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := StartRegistry(ctx, RegistryConfig{JVMOpts: []string{"-XX:+KqlNoSuchOption"}})
	if err == nil {
		r.Close()
		t.Fatal("StartRegistry with a bad JVM option succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "Unrecognized VM option 'KqlNoSuchOption'") {
		t.Errorf("the error does not carry the JVM's own message from the log: %v", err)
	}
	m := regexp.MustCompile(`\[(\S+)/` + registryLog + `\]`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("the error does not name the registry's log file: %v", err)
	}
	if _, err := os.Stat(m[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed start left %s behind (%v)", m[1], err)
	}
	t.Logf("%v", err)
}

// listeningAddrs returns the TCP addresses process pid listens on, from its
// socket descriptors and /proc/<pid>/net/tcp{,6}.
func listeningAddrs(pid int) ([]string, error) {
	fds, err := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] { // 0A: LISTEN
				continue
			}
			out = append(out, procAddr(f[1]))
		}
	}
	return out, nil
}

// procAddr turns /proc/net/tcp's hex "ADDR:PORT" (the address as 32-bit
// words in host byte order, little-endian here) into "host:port".
func procAddr(s string) string {
	hexAddr, hexPort, _ := strings.Cut(s, ":")
	var port int
	fmt.Sscanf(hexPort, "%X", &port)
	var ip net.IP
	for i := 0; i+8 <= len(hexAddr); i += 8 {
		var w uint32
		fmt.Sscanf(hexAddr[i:i+8], "%08X", &w)
		ip = append(ip, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(port))
}

// loopback reports whether "host:port" is on a loopback address (an
// IPv4-mapped 127.0.0.1 included).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	return err == nil && ip != nil && ip.IsLoopback()
}
