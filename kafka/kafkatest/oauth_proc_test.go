//go:build linux

package kafkatest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestOAuthServerLifecycle: the OAUTHBEARER test bed's provider listens on
// loopback only, and its JVM never outlives the test: Close stops it and
// removes its directory, and if the test binary that started it died, the
// next test binary's sweep recognises and kills it.
func TestOAuthServerLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := StartOAuthServer(ctx, OAuthServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pid := srv.jvm.proc.Pid
	listening, err := listeningAddrs(pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(listening) == 0 {
		t.Errorf("found no listening socket of mock-oauth2-server (pid %d)", pid)
	}
	for _, a := range listening {
		if !loopback(a) {
			t.Errorf("mock-oauth2-server listens on %s, want loopback only (all: %v)", a, listening)
		}
	}

	// As if the test binary had died: the sweep must know the JVM by its
	// command line and kill it.
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	dead := exited.Process.Pid
	if err := os.WriteFile(filepath.Join(srv.dir, ownerFile), []byte(strconv.Itoa(dead)), 0o644); err != nil {
		t.Fatal(err)
	}
	sweepStale()
	select {
	case <-srv.jvm.exited:
	case <-time.After(time.Minute):
		t.Fatalf("the sweep left mock-oauth2-server (pid %d) of a dead owner running", pid)
	}
	if _, err := os.Stat(srv.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the sweep left %s behind (%v)", srv.dir, err)
	}
	srv.Close() // the proxy; the JVM is gone already
	if !gone(pid) {
		t.Errorf("mock-oauth2-server (pid %d) still runs after Close", pid)
	}
}
