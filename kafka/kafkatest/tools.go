package kafkatest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// RunTool runs one of Kafka's own command-line tools from the jar cache,
// java -cp <libs>/* mainClass args..., and returns its output (stdout and
// stderr together): what kafka-configs.sh or kafka-acls.sh would print,
// for tests that compare kql's answers with Kafka's. The JVM is killed
// when ctx ends, and, like the brokers, when the test binary dies.
func (r *Real) RunTool(ctx context.Context, mainClass string, args ...string) (string, error) {
	argv := append([]string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", filepath.Join(r.libs, "*"), mainClass}, args...)
	cmd := exec.CommandContext(ctx, r.java, argv...)
	cmd.Dir = r.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := startProcess(cmd); err != nil {
		return "", fmt.Errorf("starting %s (%s): %w", mainClass, r.java, err)
	}
	if err := cmd.Wait(); err != nil {
		return out.String(), fmt.Errorf("%s %v: %w\n%s", mainClass, args, err, tail(out.String(), 20))
	}
	return out.String(), nil
}
