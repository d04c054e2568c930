package kafkatest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// RunTool runs one of Kafka's own command-line tools (mainClass, e.g.
// org.apache.kafka.tools.LogDirsCommand) from the jar cache, with args, and
// returns what it printed on stdout. Tests run it beside kql on the same
// cluster and compare the answers. The JVM is bounded by ctx and, like the
// brokers, dies with the test binary (parent-death signal); a tool that
// fails returns its stderr in the error.
func (r *Real) RunTool(ctx context.Context, mainClass string, args ...string) (string, error) {
	argv := []string{"-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true", "-cp", filepath.Join(r.libs, "*"), mainClass}
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, r.java, argv...)
	cmd.Dir = r.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := startProcess(cmd); err != nil {
		return "", fmt.Errorf("starting %s: %w", mainClass, err)
	}
	if err := cmd.Wait(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", mainClass, strings.Join(args, " "), err, tail(stderr.String(), 30))
	}
	return stdout.String(), nil
}
