package kafkatest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestBackendsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env     string
		set     bool
		want    []string
		wantErr string
	}{
		{set: false, want: []string{"kfake", "kafka"}},
		{env: "kfake", set: true, want: []string{"kfake"}},
		{env: " kafka ", set: true, want: []string{"kafka"}},
		{env: "kafka,kfake,kafka", set: true, want: []string{"kafka", "kfake"}},
		{env: "kfake,real", set: true, wantErr: `unknown backend "real"`},
		{env: "", set: true, wantErr: "names no backend"},
		{env: ",", set: true, wantErr: "names no backend"},
	} {
		t.Run(fmt.Sprintf("%q/%v", tc.env, tc.set), func(t *testing.T) {
			if tc.set {
				t.Setenv("KQL_BACKENDS", tc.env)
			} else {
				t.Setenv("KQL_BACKENDS", "x") // restored after the test
				os.Unsetenv("KQL_BACKENDS")
			}
			got, err := Backends()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Backends() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Backends() = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestNamesAreUniqueAndValidForKafka(t *testing.T) {
	valid := regexp.MustCompile(`^[a-zA-Z0-9-]+$`)
	seen := map[string]bool{}
	for range 100 {
		for _, n := range []string{TopicName(t), GroupName(t)} {
			if !valid.MatchString(n) || len(n) > 249 {
				t.Fatalf("name %q is not a safe Kafka name", n)
			}
			if !strings.Contains(n, "TestNamesAreUniqueAndValidForKafka") {
				t.Fatalf("name %q does not say which test made it", n)
			}
			if seen[n] {
				t.Fatalf("name %q returned twice", n)
			}
			seen[n] = true
		}
	}
	t.Run(strings.Repeat("long/sub_test.name", 5), func(t *testing.T) {
		if n := TopicName(t); !valid.MatchString(n) || len(n) > 249 {
			t.Fatalf("name %q (%d chars) is not a safe Kafka name", n, len(n))
		}
	})
}

// TestFakeBrokersFollowNodeChanges checks Brokers stays true to kfake's
// Metadata as nodes are removed and added.
func TestFakeBrokersFollowNodeChanges(t *testing.T) {
	f := NewFake(t)
	cl := Client(t, f)
	metaBrokers := func() []Broker {
		t.Helper()
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{}
		resp, err := req.RequestWith(context.Background(), cl)
		if err != nil {
			t.Fatalf("metadata: %v", err)
		}
		var out []Broker
		for _, b := range resp.Brokers {
			out = append(out, Broker{ID: b.NodeID, Addr: fmt.Sprintf("%s:%d", b.Host, b.Port)})
		}
		slices.SortFunc(out, func(a, b Broker) int { return int(a.ID) - int(b.ID) })
		return out
	}
	check := func(wantIDs ...int32) {
		t.Helper()
		got := f.Brokers()
		var ids []int32
		for _, b := range got {
			ids = append(ids, b.ID)
		}
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("Brokers() ids = %v, want %v", ids, wantIDs)
		}
		if md := metaBrokers(); !slices.Equal(got, md) {
			t.Fatalf("Brokers() = %v, but Metadata says %v", got, md)
		}
		if len(f.Bootstrap()) != len(wantIDs) {
			t.Fatalf("Bootstrap() = %v, want %d addresses", f.Bootstrap(), len(wantIDs))
		}
	}
	check(0, 1, 2)
	if err := f.RemoveNode(1); err != nil {
		t.Fatal(err)
	}
	check(0, 2)
	id, _, err := f.AddNode(-1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if id != 3 {
		t.Fatalf("AddNode(-1) gave id %d, want 3", id)
	}
	check(0, 2, 3)
}

// TestSweepRemovesOnlyDeadOwnersDirs checks the clean-up of directories left
// by a test binary that died: a dead owner's directory goes, a live owner's
// stays.
func TestSweepRemovesOnlyDeadOwnersDirs(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(owner int) string {
		t.Helper()
		dir, err := os.MkdirTemp("", "kql-kafka-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.MkdirAll(filepath.Join(dir, "node-1"), 0o755)
		os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o644)
		// A recorded JVM pid that is not ours to kill: the sweep must
		// check the command line, not just the pid.
		os.WriteFile(filepath.Join(dir, "node-1", pidFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
		return dir
	}
	stale, live := mk(dead.Process.Pid), mk(os.Getpid())
	sweepStale()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the directory of a dead owner is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the directory of a live owner was removed: %v", err)
	}
}

func TestCheckLibs(t *testing.T) {
	dir := t.TempDir()
	if err := checkLibs(dir, "4.3.1"); err == nil {
		t.Fatal("checkLibs accepted an empty directory")
	}
	for _, f := range []string{"kafka_2.13-4.3.1.jar", "kafka-clients-4.3.1.jar", "kafka-server-4.3.1.jar"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	if err := checkLibs(dir, "4.3.1"); err == nil || !strings.Contains(err.Error(), "has no kafka-tools-4.3.1.jar") {
		t.Fatalf("checkLibs of a cache filled before the tools were in the pom = %v, want it incomplete", err)
	}
	os.WriteFile(filepath.Join(dir, "kafka-tools-4.3.1.jar"), nil, 0o644)
	if err := checkLibs(dir, "4.3.1"); err == nil || !strings.Contains(err.Error(), "slf4j binding") {
		t.Fatalf("checkLibs without a logging binding = %v, want an error about the slf4j binding", err)
	}
	os.WriteFile(filepath.Join(dir, "log4j-slf4j-impl-2.25.4.jar"), nil, 0o644)
	if err := checkLibs(dir, "4.3.1"); err != nil {
		t.Fatalf("checkLibs on a complete set: %v", err)
	}
	if err := checkLibs(dir, "4.2.0"); err == nil {
		t.Fatal("checkLibs accepted jars of another version")
	}
}

// TestMoveIntoCacheTopsUp: a cache filled by an older pom may be in use by
// running brokers; the fetch adds what it lacks and replaces nothing.
func TestMoveIntoCacheTopsUp(t *testing.T) {
	base := t.TempDir()
	libs, dl := filepath.Join(base, "libs"), filepath.Join(base, "dl")
	os.MkdirAll(libs, 0o755)
	os.MkdirAll(dl, 0o755)
	os.WriteFile(filepath.Join(libs, "kafka-clients-4.3.1.jar"), []byte("in use"), 0o644)
	for _, f := range []string{"kafka-clients-4.3.1.jar", "argparse4j-0.7.0.jar", "kafka-tools-4.3.1.jar"} {
		os.WriteFile(filepath.Join(dl, f), []byte("new"), 0o644)
	}
	if err := moveIntoCache(dl, libs, "4.3.1"); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"kafka-clients-4.3.1.jar": "in use", "argparse4j-0.7.0.jar": "new", "kafka-tools-4.3.1.jar": "new"} {
		got, err := os.ReadFile(filepath.Join(libs, f))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", f, got, err, want)
		}
	}
	// A fresh cache is the download itself.
	fresh := filepath.Join(base, "fresh")
	os.MkdirAll(dl, 0o755)
	os.WriteFile(filepath.Join(dl, "kafka-tools-4.3.1.jar"), []byte("x"), 0o644)
	if err := moveIntoCache(dl, fresh, "4.3.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(fresh, "kafka-tools-4.3.1.jar")); err != nil {
		t.Fatal(err)
	}
}
