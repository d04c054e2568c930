package kafkatest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DefaultRegistryVersion is the Apicurio Registry release the test bed runs
// as its schema registry unless KQL_REGISTRY_VERSION says otherwise. 3.0.9
// is the newest release that runs on Java 17 (3.3.x needs Java 21), the JDK
// the Kafka test bed already needs.
const DefaultRegistryVersion = "3.0.9"

// RegistryVersion is the Apicurio Registry release to run:
// $KQL_REGISTRY_VERSION, or DefaultRegistryVersion.
func RegistryVersion() string {
	if v := strings.TrimSpace(os.Getenv("KQL_REGISTRY_VERSION")); v != "" {
		return v
	}
	return DefaultRegistryVersion
}

// RegistryAppDir returns where this Apicurio Registry version is cached,
// unpacked: $KQL_REGISTRY_APP if set (an unpacked apicurio-registry-app
// distribution you provide: the *-runner.jar and its lib/), else
// ${XDG_CACHE_HOME:-$HOME/.cache}/kql/apicurio-registry-<version>/app, beside
// the Kafka jars.
func RegistryAppDir(version string) (string, error) {
	if d := os.Getenv("KQL_REGISTRY_APP"); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a cache directory for Apicurio Registry (set XDG_CACHE_HOME or HOME, or KQL_REGISTRY_APP): %w", err)
	}
	return filepath.Join(cache, "kql", "apicurio-registry-"+version, "app"), nil
}

// registryArtifact is the Maven coordinate of Apicurio Registry's runnable
// distribution: a tar.gz of the Quarkus runner jar and its lib/.
func registryArtifact(version string) string {
	return "io.apicurio:apicurio-registry-app:" + version + ":tar.gz:all"
}

// mavenCopyPlugin is the maven-dependency-plugin that fetches the registry.
// Pinned to 2.8 on purpose: the 3.x plugins read the artifact's full POM
// hierarchy, and the parent POM of apicurio-registry-app 3.0.9
// (io.apicurio:apicurio-registry:3.0.9) is not on Maven Central, so they fail
// with "Failed to read artifact descriptor"; 2.8 copies the artifact without
// it (measured with Maven 3.8.7, from an empty local repository).
const mavenCopyPlugin = "org.apache.maven.plugins:maven-dependency-plugin:2.8:copy"

// EnsureRegistry returns the path of Apicurio Registry's runner jar at the
// given version, downloading the distribution from Maven Central with Maven
// (mvn) and unpacking it into the cache on first use. Like EnsureJars it
// fetches under a lock into a directory beside the cache that is renamed into
// place only when complete, so parallel test binaries neither fetch twice nor
// see half an installation. Progress goes to log (may be nil).
func EnsureRegistry(ctx context.Context, version string, log io.Writer) (string, error) {
	if log == nil {
		log = io.Discard
	}
	app, err := RegistryAppDir(version)
	if err != nil {
		return "", err
	}
	if os.Getenv("KQL_REGISTRY_APP") != "" {
		jar, err := registryRunner(app)
		if err != nil {
			return "", fmt.Errorf("KQL_REGISTRY_APP=%s: %w", app, err)
		}
		return jar, nil
	}
	if jar, err := registryRunner(app); err == nil {
		return jar, nil
	}

	base := filepath.Dir(app)
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("creating the Apicurio Registry cache: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(base, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("opening the Apicurio Registry cache lock: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", fmt.Errorf("locking the Apicurio Registry cache %s: %w", base, err)
	}
	defer unlockFile(lock)
	// Another test binary may have fetched while we waited for the lock.
	if jar, err := registryRunner(app); err == nil {
		return jar, nil
	}

	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("Apicurio Registry %s is not cached in %s and Maven (mvn) is not installed to fetch it: "+
			"run `make deps` (installs Java 17 and Maven on Debian/Ubuntu as root), or install Maven yourself "+
			"(Debian/Ubuntu: apt-get install maven), or point KQL_REGISTRY_APP at an unpacked apicurio-registry-app distribution", version, app)
	}
	tmp, err := os.MkdirTemp(base, "app.partial-")
	if err != nil {
		return "", fmt.Errorf("creating a download directory in the Apicurio Registry cache: %w", err)
	}
	defer os.RemoveAll(tmp) // holds only the tarball after a successful rename

	fmt.Fprintf(log, "kafkatest: fetching Apicurio Registry %s (%s) with Maven into %s\n", version, registryArtifact(version), app)
	start := time.Now()
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "-Dstyle.color=never",
		mavenCopyPlugin, "-Dartifact="+registryArtifact(version), "-DoutputDirectory="+tmp)
	cmd.Dir = tmp // no pom.xml here: Maven runs its stub project
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("fetching Apicurio Registry %s with Maven (%s) failed: %w\n%s\n"+
			"Check the version exists (KQL_REGISTRY_VERSION; the tar.gz is at https://repo.maven.apache.org/maven2/io/apicurio/apicurio-registry-app/%s/) "+
			"and that Maven Central is reachable, then run `make deps` again",
			version, strings.Join(cmd.Args, " "), err, tail(out.String(), 40), version)
	}
	tgzs, _ := filepath.Glob(filepath.Join(tmp, "*.tar.gz"))
	if len(tgzs) != 1 {
		return "", fmt.Errorf("Maven finished but left %d tar.gz files in %s, want the one of %s\n%s", len(tgzs), tmp, registryArtifact(version), tail(out.String(), 40))
	}
	tgz := tgzs[0]
	dl := filepath.Join(tmp, "app")
	if err := untarGz(tgz, dl); err != nil {
		return "", fmt.Errorf("unpacking %s (fetched by Maven): %w; delete it from your local Maven repository (~/.m2/repository/io/apicurio/apicurio-registry-app/%s) and run `make deps` again", tgz, err, version)
	}
	if _, err := registryRunner(dl); err != nil {
		return "", fmt.Errorf("the Apicurio Registry %s download is incomplete: %w", version, err)
	}
	if err := os.Rename(dl, app); err != nil {
		return "", fmt.Errorf("moving Apicurio Registry into the cache: %w", err)
	}
	fmt.Fprintf(log, "kafkatest: fetched and unpacked Apicurio Registry %s in %s\n", version, time.Since(start).Round(100*time.Millisecond))
	return registryRunner(app)
}

// registryRunner returns the runner jar of an unpacked Apicurio Registry
// distribution (apicurio-registry-app-<version>-runner.jar, found by
// pattern, not by name), after checking its lib/ is there.
func registryRunner(dir string) (string, error) {
	jars, _ := filepath.Glob(filepath.Join(dir, "*-runner.jar"))
	if len(jars) != 1 {
		return "", fmt.Errorf("%s has %d *-runner.jar files, want exactly one", dir, len(jars))
	}
	libs, _ := filepath.Glob(filepath.Join(dir, "lib", "*.jar"))
	if len(libs) < 100 { // 3.0.9 has 358
		return "", fmt.Errorf("%s/lib has %d jars: not a complete Apicurio Registry", dir, len(libs))
	}
	return jars[0], nil
}

// untarGz unpacks the gzipped tar file src into the directory dst (created),
// refusing entries that would land outside it. Only directories and regular
// files are unpacked: that is all the registry distribution holds.
func untarGz(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	defer zr.Close()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return fmt.Errorf("tar entry %q points outside the target directory", h.Name)
		}
		p := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
	}
}
