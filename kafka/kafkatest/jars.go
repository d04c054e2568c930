package kafkatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// DefaultKafkaVersion is the Apache Kafka release the test bed runs unless
// KQL_KAFKA_VERSION says otherwise: the version kql's routing rules were
// measured against.
const DefaultKafkaVersion = "4.3.1"

// KafkaVersion is the Kafka release to run: $KQL_KAFKA_VERSION, or
// DefaultKafkaVersion.
func KafkaVersion() string {
	if v := strings.TrimSpace(os.Getenv("KQL_KAFKA_VERSION")); v != "" {
		return v
	}
	return DefaultKafkaVersion
}

// LibsDir returns where the jars of this Kafka version are cached:
// $KQL_KAFKA_LIBS if set (a directory of jars you provide, e.g. the libs/ of
// an unpacked Kafka release), else
// ${XDG_CACHE_HOME:-$HOME/.cache}/kql/kafka-<version>/libs.
func LibsDir(version string) (string, error) {
	if d := os.Getenv("KQL_KAFKA_LIBS"); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a cache directory for the Kafka jars (set XDG_CACHE_HOME or HOME, or KQL_KAFKA_LIBS): %w", err)
	}
	return filepath.Join(cache, "kql", "kafka-"+version, "libs"), nil
}

// EnsureJars returns a directory holding Apache Kafka's broker and its
// runtime dependencies at the given version, downloading them from Maven
// Central with Maven (mvn) on first use. The cache is shared by every test
// binary and checkout; a download is written beside it and renamed into place
// only when complete, under a lock, so parallel test binaries neither fetch
// twice nor see half a cache. Progress goes to log (may be nil).
func EnsureJars(ctx context.Context, version string, log io.Writer) (string, error) {
	if log == nil {
		log = io.Discard
	}
	libs, err := LibsDir(version)
	if err != nil {
		return "", err
	}
	if os.Getenv("KQL_KAFKA_LIBS") != "" {
		if err := checkLibs(libs, version); err != nil {
			return "", fmt.Errorf("KQL_KAFKA_LIBS=%s: %w", libs, err)
		}
		return libs, nil
	}
	if checkLibs(libs, version) == nil {
		return libs, nil
	}

	base := filepath.Dir(libs)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("creating the Kafka jar cache: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(base, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("opening the Kafka jar cache lock: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", fmt.Errorf("locking the Kafka jar cache %s: %w", base, err)
	}
	defer unlockFile(lock)
	// Another test binary may have fetched while we waited for the lock.
	if checkLibs(libs, version) == nil {
		return libs, nil
	}

	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("the Kafka %s jars are not cached in %s and Maven (mvn) is not installed to fetch them: "+
			"run `make deps` (installs Java 17 and Maven on Debian/Ubuntu as root), or install Maven yourself "+
			"(Debian/Ubuntu: apt-get install maven), or point KQL_KAFKA_LIBS at a directory of Kafka jars", version, libs)
	}
	pom, err := TestdataFile("pom.xml")
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(base, "libs.partial-")
	if err != nil {
		return "", fmt.Errorf("creating a download directory in the Kafka jar cache: %w", err)
	}
	defer os.RemoveAll(tmp) // empty after a successful rename

	fmt.Fprintf(log, "kafkatest: fetching Apache Kafka %s jars with Maven into %s\n", version, libs)
	start := time.Now()
	dl := filepath.Join(tmp, "libs")
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-Dstyle.color=never",
		"-f", pom, "-Dkafka.version="+version,
		"dependency:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+dl)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("fetching Apache Kafka %s with Maven (%s) failed: %w\n%s\n"+
			"Check the version exists (KQL_KAFKA_VERSION) and that Maven Central is reachable",
			version, strings.Join(cmd.Args, " "), err, tail(out.String(), 40))
	}
	if err := checkLibs(dl, version); err != nil {
		return "", fmt.Errorf("Maven finished but the download is incomplete: %w", err)
	}
	if err := moveIntoCache(dl, libs, version); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "kafkatest: fetched Apache Kafka %s jars in %s\n", version, time.Since(start).Round(100*time.Millisecond))
	return libs, nil
}

// toolsJar is the jar of Kafka's command-line tools, which tests run beside
// kql to compare answers. A cache filled before the tools were added to the
// pom lacks it (and their dependencies), so checkLibs asks for it and the
// cache is topped up.
func toolsJar(version string) string { return "kafka-tools-" + version + ".jar" }

// moveIntoCache puts a complete download in place. A cache that already
// exists (filled by an older pom) may be in use by running brokers, whose
// JVMs open jars lazily: nothing in it is removed or replaced, only the
// missing jars are added, the tools jar last, so that no reader ever sees
// it complete before it is.
func moveIntoCache(dl, libs, version string) error {
	if _, err := os.Stat(libs); errors.Is(err, os.ErrNotExist) {
		if err := os.Rename(dl, libs); err != nil {
			return fmt.Errorf("moving the Kafka jars into the cache: %w", err)
		}
		return nil
	}
	entries, err := os.ReadDir(dl)
	if err != nil {
		return fmt.Errorf("reading the Kafka jar download: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Name() != toolsJar(version) {
			names = append(names, e.Name())
		}
	}
	names = append(names, toolsJar(version))
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(libs, name)); err == nil {
			continue
		}
		if err := os.Rename(filepath.Join(dl, name), filepath.Join(libs, name)); err != nil {
			return fmt.Errorf("adding %s to the Kafka jar cache: %w", name, err)
		}
	}
	return nil
}

// checkLibs says whether dir looks like a complete set of broker and tool jars.
func checkLibs(dir, version string) error {
	want := []string{"kafka_2.13-" + version + ".jar", "kafka-clients-" + version + ".jar", "kafka-server-" + version + ".jar", toolsJar(version)}
	for _, w := range want {
		if _, err := os.Stat(filepath.Join(dir, w)); err != nil {
			return fmt.Errorf("%s has no %s", dir, w)
		}
	}
	bindings, _ := filepath.Glob(filepath.Join(dir, "log4j-slf4j*-impl-*.jar"))
	if len(bindings) == 0 {
		return fmt.Errorf("%s has no slf4j binding (log4j-slf4j-impl): the brokers would log nothing", dir)
	}
	return nil
}

// TestdataFile returns the path of a file in the repository's testdata/kafka
// directory (the Maven pom and the broker config templates). It looks beside
// this source file first, which works for tests and `go run`, then walks up
// from the working directory; $KQL_ROOT overrides both.
func TestdataFile(name string) (string, error) {
	var roots []string
	if r := os.Getenv("KQL_ROOT"); r != "" {
		roots = append(roots, r)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		roots = append(roots, filepath.Join(filepath.Dir(file), "..", ".."))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			roots = append(roots, d)
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, r := range roots {
		p := filepath.Join(r, "testdata", "kafka", name)
		if _, err := os.Stat(p); err == nil {
			return filepath.Clean(p), nil
		}
	}
	return "", errors.New("cannot find testdata/kafka/" + name + " of the kql repository: run from inside the repository or set KQL_ROOT to it")
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
