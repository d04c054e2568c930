package kafkatest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// kdcDirs lists the KDC directories under the test's own $TMPDIR.
func kdcDirs(t *testing.T, tmp string) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(tmp, "kql-kafka-kdc-*"))
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// A KDC or Kerberos bed that fails to start returns the error (no panic)
// and leaves no directory behind.
func TestKerberosStartFailureCleansUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // os.TempDir: StartKDC's directories land here only
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // kdb5_util cannot run: StartKDC fails after making its directory

	if k, err := StartKDC(ctx); err == nil {
		k.Close()
		t.Fatal("StartKDC with a cancelled context: want an error")
	} else {
		t.Logf("StartKDC: %v", err)
	}
	if d := kdcDirs(t, tmp); len(d) != 0 {
		t.Errorf("StartKDC failed and left %v", d)
	}

	if b, err := StartKerberos(ctx, RealConfig{Log: os.Stderr}); err == nil {
		b.Close()
		t.Fatal("StartKerberos with a cancelled context: want an error")
	} else {
		t.Logf("StartKerberos: %v", err)
	}
	if d := kdcDirs(t, tmp); len(d) != 0 {
		t.Errorf("StartKerberos failed and left %v", d)
	}
}

// The KDC's port is picked free and released before krb5kdc binds it, so
// another test's server can take it in between. StartKDC must then not
// take that server for its KDC (a dial to the port would succeed) but start
// again on another port.
func TestKDCPortTakenIsRetried(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	taken, err := net.Listen("tcp", "127.0.0.1:0") // another process's server
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	orig := kdcPort
	defer func() { kdcPort = orig }()
	calls := 0
	kdcPort = func() (int, error) {
		calls++
		if calls == 1 {
			return takenPort, nil
		}
		return orig()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k, err := StartKDC(ctx)
	if err != nil {
		t.Fatalf("StartKDC with its first port taken: %v", err)
	}
	defer k.Close()
	if k.Port == takenPort || calls != 2 {
		t.Fatalf("KDC on port %d after %d picks; port %d was taken by another server", k.Port, calls, takenPort)
	}
	if d := kdcDirs(t, tmp); len(d) != 1 || d[0] != k.Dir {
		t.Errorf("want only the running KDC's directory %s, got %v", k.Dir, d)
	}
	// It is the KDC that answers: a kinit from a keytab gets a ticket.
	kt, cc := filepath.Join(tmp, "u.keytab"), filepath.Join(tmp, "u.ccache")
	if err := k.AddPrincipal(ctx, "u@"+KerberosRealm, kt); err != nil {
		t.Fatal(err)
	}
	if err := k.Kinit(ctx, "u@"+KerberosRealm, kt, cc); err != nil {
		t.Fatalf("kinit against the KDC on port %d: %v\n%s", k.Port, err, k.LogTail())
	}
}
