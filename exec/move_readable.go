package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/result"
)

// readableWait bounds how long an import or INSERT waits, after its last
// commit, for what it committed to be readable (read_committed): markers
// take milliseconds, a few seconds is a broker in trouble. A variable for
// the test of a bound that runs out.
var readableWait = 5 * time.Second

// awaitReadable waits until a read_committed read begun now sees every
// record w committed (kafka.WaitStable), within readableWait and the
// statement's own bound (ctx: --timeout, Ctrl-C). Without it the next
// statement's read can capture the last stable offset from before the
// commit's markers and miss the last transaction. The records are
// committed either way: a wait that runs out is a warning, "" when none.
func (s *Session) awaitReadable(ctx context.Context, w *kafka.Writer) string {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, readableWait)
	defer cancel()
	short, err := s.cl.WaitStable(wctx, w.Written())
	if len(short) == 0 {
		return ""
	}
	why := fmt.Sprintf("after %s", time.Since(start).Round(time.Millisecond))
	switch {
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		why = fmt.Sprintf("after %s (the bound of the wait)", readableWait)
	case ctx.Err() != nil:
		why = fmt.Sprintf("after %s, when the statement was cut short (%v)", time.Since(start).Round(time.Millisecond), context.Cause(ctx))
	case err != nil:
		why = fmt.Sprintf("after %s (%v)", time.Since(start).Round(time.Millisecond), err)
	}
	var parts []string
	for i, sp := range short {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(short)-3))
			break
		}
		stable := "not answered"
		if sp.Stable >= 0 {
			stable = fmt.Sprint(sp.Stable)
		}
		item := fmt.Sprintf("%s (last stable offset %s, last record written at %d", sp.TopicPartition, stable, sp.LastWritten)
		if sp.Err != nil {
			item += ": " + sp.Err.Error()
		}
		parts = append(parts, item+")")
	}
	return fmt.Sprintf("every record is committed, but %s the last stable offset (ListOffsets read_committed) of %s was not yet past the last record written: a read_committed read started right now may miss the last transaction; read again in a moment",
		why, strings.Join(parts, ", "))
}

// explainReadable is awaitReadable's step in EXPLAIN: after the last
// commit, ListOffsets (latest, read_committed) to the leader of each
// partition written, again for those still short. parts are the
// partitions the records may go to (nil: not known before the records
// are read; what names them).
func explainReadable(p *planner, m *kafka.Metadata, parts []kafka.TopicPartition, what string) {
	until := fmt.Sprintf("after the last commit, until its last stable offset is past the last record written there, at most %s", readableWait)
	if parts == nil {
		p.step++
		p.rows = append(p.rows, result.Row{p.step, "ListOffsets", nil, "each partition's leader", "last stable offset, read_committed, of " + what + " (only if written: " + until + ")"})
		return
	}
	p.leadersCarrying("ListOffsets", "last stable offset, read_committed", " (only if written: "+until+")", m, parts)
}
