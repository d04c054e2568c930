package exec

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// NeedsConfirmation reports whether the interactive shell asks before
// running stmt: the statements that destroy or rewrite what cannot be
// brought back. Dry runs and EXPLAIN never ask.
func NeedsConfirmation(stmt lang.Statement) bool {
	switch st := stmt.(type) {
	case *lang.DropTopic, *lang.DeleteGroup, *lang.Grant, *lang.CreateUser, *lang.AlterUser, *lang.DropUser, *lang.AlterQuota:
		return true
	case *lang.Revoke:
		return st.Execute
	case *lang.ResetGroup:
		return st.Execute
	case *lang.DeleteRecords:
		return st.Execute
	case *lang.DeleteShareGroup:
		return true
	case *lang.ResetShareGroup:
		return st.Execute
	case *lang.AbortTransaction:
		return st.Execute
	case *lang.Insert:
		return st.Execute
	case *lang.AlterReplicas, *lang.CancelReassignment, *lang.ElectLeaders:
		return opsExecute(st)
	}
	return false
}

// Confirmation returns the question the shell asks before stmt, with what
// it would destroy counted from the cluster (drop topic orders: 6
// partitions, up to 12,345 records?). ask is false when there is nothing to ask
// (not a destructive statement, DROP TOPIC IF EXISTS of a topic that is
// not there). When the cluster cannot say, the question is asked without
// the counts: the statement itself then reports what went wrong.
func (s *Session) Confirmation(ctx context.Context, stmt lang.Statement) (question string, ask bool) {
	if !NeedsConfirmation(stmt) {
		return "", false
	}
	switch st := stmt.(type) {
	case *lang.CreateUser, *lang.AlterUser, *lang.DropUser, *lang.AlterQuota:
		return s.usersConfirmation(ctx, st)
	case *lang.DropTopic:
		q := "drop topic " + lang.QuoteName(st.Topic)
		m, err := s.cl.Metadata(ctx, []string{st.Topic})
		if err != nil {
			var missing *kafka.UnknownTopicError
			if errors.As(err, &missing) && st.IfExists {
				return "", false
			}
			return q + "?", true
		}
		t := m.Topics[st.Topic]
		q += fmt.Sprintf(": %d %s", len(t.Partitions), plural(len(t.Partitions), "partition", "partitions"))
		if lo, hi, err := s.logRange(ctx, m, partitionsOf(t), ""); err == nil {
			var n int64
			for tp := range hi {
				n += hi[tp] - lo[tp]
			}
			// Counted from offsets, so "up to": a transaction's commit
			// marker takes an offset, and compaction leaves gaps.
			q += ", up to " + countRecords(n)
		}
		return q + "?", true
	case *lang.DeleteGroup:
		q := "delete group " + lang.QuoteName(st.Group)
		if _, share, err := s.shareStatus(ctx, st.Group); err == nil && share {
			return "", false // DELETE GROUP refuses a share group: nothing to ask
		}
		m, err := s.cl.Metadata(ctx, nil)
		if err != nil {
			return q + "?", true
		}
		committed, err := s.committedOrFail(ctx, st.Group, m)
		if err != nil {
			return q + "?", true
		}
		topics := map[string]bool{}
		for tp := range committed {
			topics[tp.Topic] = true
		}
		return q + fmt.Sprintf(": its committed offsets for %d %s of %d %s?", len(committed), plural(len(committed), "partition", "partitions"),
			len(topics), plural(len(topics), "topic", "topics")), true
	case *lang.ResetGroup:
		q := "reset group " + lang.QuoteName(st.Group)
		plan, err := s.planReset(ctx, st)
		if err != nil {
			return q + "?", true
		}
		var before, after int64
		unknown := false
		topics := []string{}
		for _, r := range plan.rows {
			if r.current == nil {
				unknown = true
			} else {
				before += max(r.latest-*r.current, 0)
			}
			after += r.latest - r.target
			if len(topics) == 0 || topics[len(topics)-1] != r.tp.Topic {
				topics = append(topics, r.tp.Topic)
			}
		}
		lag := thousands(before)
		if unknown {
			lag += " (+ uncommitted partitions)"
		}
		return q + fmt.Sprintf(": commit new offsets for %d %s of %s, lag %s -> %s?", len(plan.rows), plural(len(plan.rows), "partition", "partitions"),
			strings.Join(topics, ", "), lag, thousands(after)), true
	case *lang.Grant, *lang.Revoke:
		return s.aclConfirmation(ctx, st), true
	case *lang.Insert:
		dest := "topic " + lang.QuoteName(st.Topic)
		if st.TopicExpr != nil {
			dest = "the topic each record's " + lang.FormatExpr(st.TopicExpr) + " names"
		}
		return "copy the records the SELECT reads from " + lang.QuoteName(st.Select.Topic) + " into " + dest + " (run it without EXECUTE to see how many)?", true
	case *lang.DeleteRecords:
		q := "delete records from " + lang.QuoteName(st.Topic)
		plan, _, err := s.planDeleteRecords(ctx, st)
		if err != nil {
			return q + "?", true
		}
		var n int64
		parts := 0
		for _, r := range plan {
			if d := r.target - r.before; d > 0 {
				n += d
				parts++
			}
		}
		return q + fmt.Sprintf(": %s in %d %s?", countRecords(n), parts, plural(parts, "partition", "partitions")), true
	case *lang.DeleteShareGroup, *lang.ResetShareGroup:
		return s.shareConfirmation(ctx, st)
	case *lang.AbortTransaction:
		return s.abortQuestion(ctx, st)
	case *lang.AlterReplicas, *lang.CancelReassignment, *lang.ElectLeaders:
		return s.confirmOps(ctx, st), true
	}
	return "", false
}
