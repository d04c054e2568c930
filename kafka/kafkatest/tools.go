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
// org.apache.kafka.tools.TransactionsCommand) from the jar cache against
// this cluster, so a test can compare kql's answer with Kafka's. It returns
// the tool's standard output; a non-zero exit is an error carrying its
// standard error. The JVM is bounded by ctx and, like the brokers, dies
// with the test binary (parent-death signal); pass the cluster's bootstrap
// address in args yourself (Bootstrap()).
func (r *Real) RunTool(ctx context.Context, mainClass string, args ...string) (string, error) {
	argv := []string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", filepath.Join(r.libs, "*"), mainClass}
	cmd := exec.CommandContext(ctx, r.java, append(argv, args...)...)
	cmd.Dir = r.dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := startProcess(cmd); err != nil {
		return "", fmt.Errorf("starting %s: %w", mainClass, err)
	}
	if err := cmd.Wait(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w\n%s", mainClass, strings.Join(args, " "), err, tail(stderr.String(), 20))
	}
	return stdout.String(), nil
}
