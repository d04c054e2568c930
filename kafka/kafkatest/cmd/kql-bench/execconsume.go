package main

// This file is the bench's only use of kql's internal packages; when the
// parser accepts LIMIT ALL (or LIMIT 10000000), the flatness check can run
// the kql binary instead and this file can go.

import (
	"context"
	"io"

	kqlexec "github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/render"
)

// execConsumeMain (-exec-consume) runs CONSUME topic FROM OLDEST LIMIT limit
// through kql's own packages, exactly as cmd/kql does (kafka.Dial, an exec
// session, render's jsonl writer), for the flatness check: kql's parser caps
// LIMIT at 1000000 until LIMIT ALL lands, the exec API does not.
func execConsumeMain(ctx context.Context, bootstrap []string, topic string, limit int64, out io.Writer) error {
	cl, err := kafka.Dial(ctx, kafka.Config{Bootstrap: bootstrap})
	if err != nil {
		return err
	}
	defer cl.Close()
	res, err := kqlexec.NewSession(cl).Execute(ctx, &lang.Consume{Topic: topic, From: &lang.Start{Kind: lang.FromOldest}, Limit: &limit})
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = render.Render(out, res, render.Options{Format: render.JSONL, Footer: true, BatchSize: 1000})
	return err
}
