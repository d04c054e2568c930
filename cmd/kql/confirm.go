package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/lang"
)

// confirmer is implemented by an executor that can say what a destructive
// statement would destroy (exec.Session does).
type confirmer interface {
	Confirmation(ctx context.Context, stmt lang.Statement) (question string, ask bool)
}

// confirmed asks, in the interactive shell only, before a statement that
// destroys or rewrites data: DROP TOPIC, DELETE GROUP, DELETE SHARE GROUP,
// RESET ... EXECUTE, RESET SHARE GROUP ... EXECUTE, DELETE RECORDS ... EXECUTE,
// and the replica moves and elections (ALTER TOPIC ... REPLICAS, CANCEL
// REASSIGNMENT, ELECT LEADERS ... EXECUTE). The answer defaults to no; Ctrl-C and Ctrl-D
// are no. Scripts and -e never ask: they were written on purpose.
func (r *repl) confirmed(ctx context.Context, stmt lang.Statement) bool {
	a := r.a
	if !a.confirm || !exec.NeedsConfirmation(stmt) || a.refusal(stmt) != nil {
		// A statement the read-only guard refuses is not asked about
		// (the question would ask the cluster): execute refuses it.
		return true
	}
	question := strings.ToLower(formatStatement(stmt)) + "?"
	if c, ok := a.conn.exec.(confirmer); ok {
		// Counting what would go asks the cluster: Ctrl-C stops that.
		qctx, stop := a.rt.statementContext(ctx)
		q, ask := c.Confirmation(qctx, stmt)
		cancelled := qctx.Err() != nil
		stop()
		if cancelled {
			a.errorf("not run: cancelled (Ctrl-C)")
			return false
		}
		if !ask {
			return true
		}
		question = q
	}
	answer, err := r.ed.ReadLine(question + " [y/N] ")
	switch {
	case errors.Is(err, errInterrupted):
		a.errorf("not run: cancelled (Ctrl-C)")
		return false
	case err != nil:
		a.errorf("not run: no answer")
		return false
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	fmt.Fprintln(a.stderr, `not run (answer y to run it; \set confirm off stops asking)`)
	return false
}

func (a *app) metaSet(_ context.Context, arg string) error {
	name, value, _ := strings.Cut(strings.TrimSpace(arg), " ")
	if strings.HasPrefix(strings.ToLower(name), "schema.") {
		return a.setLocalSchema(name, value)
	}
	switch strings.ToLower(name) {
	case "":
		fmt.Fprintf(a.stderr, "confirm %s\n", onOff(a.confirm))
		a.showLocalSchemas()
		return nil
	case "confirm":
		if err := toggle("set confirm", &a.confirm, strings.TrimSpace(value)); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "Confirmation is %s.\n", onOff(a.confirm))
		return nil
	}
	return fmt.Errorf(`\set: unknown setting %q: the settings are: confirm, schema.TOPIC.key and schema.TOPIC.value`, name)
}
