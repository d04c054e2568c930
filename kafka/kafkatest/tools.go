package kafkatest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// toolJVMOpts keeps a tool's JVM small and quick to start, like a broker's.
var toolJVMOpts = []string{"-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"}

// RunTool runs one of Kafka's command-line tools (mainClass, e.g.
// org.apache.kafka.tools.consumer.group.ShareGroupCommand) from the jar
// cache against this cluster and returns what it printed on stdout. It is
// bounded by ctx and, like the brokers, dies with the test binary. A
// non-zero exit is an error carrying stderr.
func (r *Real) RunTool(ctx context.Context, mainClass string, args ...string) (string, error) {
	cmd := r.toolCmd(ctx, mainClass, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := startProcess(cmd); err != nil {
		return "", fmt.Errorf("starting %s: %w", mainClass, err)
	}
	if err := cmd.Wait(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\nstderr:\n%s\nstdout:\n%s", mainClass, strings.Join(args, " "), err,
			tail(stderr.String(), 30), tail(stdout.String(), 30))
	}
	return stdout.String(), nil
}

func (r *Real) toolCmd(ctx context.Context, mainClass string, args ...string) *exec.Cmd {
	argv := append([]string(nil), toolJVMOpts...)
	argv = append(argv, "-cp", filepath.Join(r.libs, "*"), mainClass)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, r.java, argv...)
	cmd.Dir = r.dir
	return cmd
}
