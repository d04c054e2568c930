package kafkatest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
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
