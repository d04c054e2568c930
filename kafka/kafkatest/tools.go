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
// org.apache.kafka.tools.AclCommand) on the cluster's jars and returns what
// it printed on stdout. Tests use it to compare kql's answers with Kafka's.
// The JVM is bounded by ctx, and dies with the test binary however that
// ends (it is forked like the brokers, with the parent-death signal). A
// tool that exits non-zero is an error with its stderr.
func (r *Real) RunTool(ctx context.Context, mainClass string, args ...string) (string, error) {
	argv := []string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
		"-cp", filepath.Join(r.libs, "*"), mainClass}
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
