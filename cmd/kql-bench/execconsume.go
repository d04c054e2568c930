package main

// This file is the bench's only use of kql's internal packages. It runs
// CONSUME through kql's exec API where the kql binary cannot yet: when the
// parser does not accept LIMIT ALL (the flatness check), and when kql has no
// --schema-registry flag (the Avro contenders); once both land in cmd/kql,
// this file can go.

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	kqlexec "github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
	"github.com/kql-dev/kql/schema"
)

// execConsumeMain (-exec-consume) runs CONSUME topic FROM OLDEST LIMIT limit
// through kql's own packages, exactly as cmd/kql does (kafka.Dial, an exec
// session, render's jsonl writer), decoding through the schema registry at
// registryURL when it is not "". KQL_CPUPROFILE=file profiles it as it does
// kql.
func execConsumeMain(ctx context.Context, bootstrap []string, topic string, limit int64, registryURL string, out io.Writer) error {
	if path := os.Getenv("KQL_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cl, err := kafka.Dial(ctx, kafka.Config{Bootstrap: bootstrap})
	if err != nil {
		return err
	}
	defer cl.Close()
	s := kqlexec.NewSession(cl)
	if registryURL != "" {
		if s.Registry, err = schema.Open(schema.Config{URLs: []string{registryURL}}); err != nil {
			return err
		}
	}
	res, err := s.Execute(ctx, &lang.Consume{Topic: topic, From: &lang.Start{Kind: lang.FromOldest}, Limit: &limit})
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = render.Render(out, res, render.Options{Format: render.JSONL, Footer: true, BatchSize: 1000})
	if err != nil {
		return err
	}
	// What did not decode is still written (raw), with warnings: say so, as
	// kql does, so the output check is not the only one to notice.
	for _, m := range res.Stats().Warnings() {
		fmt.Fprintln(os.Stderr, "warning:", m)
	}
	return nil
}
