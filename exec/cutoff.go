package exec

import (
	"context"
	"errors"
	"fmt"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/result"
)

// cutOffError is a partition a read did not finish because the
// statement's deadline (--timeout) came first.
type cutOffError struct {
	tp        kafka.TopicPartition
	next, end int64
	cause     error // why the statement's context ended: "cancelled after --timeout 20s"
}

func (e *cutOffError) Error() string {
	return fmt.Sprintf("partition %s/%d: read up to offset %d (of %d), then %v", e.tp.Topic, e.tp.Partition, e.next, e.end, e.cause)
}

func (e *cutOffError) Unwrap() error { return e.cause }

// cutOff is how a read that its statement's deadline cut off ends. Once a
// partition was given up for want of a leader the result is partial
// anyway, and the rows already shown are what was read: it ends partial
// with them, naming the partitions given up (partition, broker, how long
// kql waited) and the partitions the deadline cut off with where each
// stopped, rather than with the bare timeout, which would hide the
// leaderless partition. A leaderless partition holds the (timestamp,
// partition, offset) merge until it is given up, so on a slow link the
// deadline can come while the healthy partitions are still being handed
// out. Without a partition given up, or cancelled otherwise (Ctrl-C),
// err is returned as it is.
func (mg *merger) cutOff(what string, err error) error {
	if !errors.Is(err, context.DeadlineExceeded) || mg.mx == nil || !errors.Is(mg.ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	rd := mg.mx.Reader()
	rd.GiveUpWaiting()
	missing := mg.allMissing()
	if len(missing) == 0 {
		return err
	}
	cause := context.Cause(mg.ctx)
	for _, rg := range mg.ranges {
		if _, _, failed := rd.NextUnread(rg.TP); failed {
			continue // named above
		}
		if pos, more := mg.nextUnread(rg.TP); more {
			missing = append(missing, &cutOffError{tp: rg.TP, next: pos, end: rg.End, cause: cause})
		}
	}
	return &result.PartialError{What: what, Missing: missing}
}
