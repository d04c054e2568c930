package exec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// RESET SHARE GROUP and DELETE SHARE GROUP: what changes a share group,
// mirroring RESET GROUP and DELETE GROUP (groupadmin.go).

// shareMembersError refuses to change a share group with members, naming
// them (kafka-share-groups.sh: "Share group 'g' is not empty").
func shareMembersError(what string, g kafka.ShareGroup) error {
	st := groupState{exists: true, state: g.State}
	for _, m := range g.Members {
		st.members = append(st.members, groupMember{m.MemberID, m.ClientID, m.ClientHost})
	}
	if len(st.members) == 0 {
		return fmt.Errorf("%s: share group %q is not empty (state %s); stop its consumers first (Kafka accepts this only for a group with no members)", what, g.Group, g.State)
	}
	return activeMembersError(what, g.Group, st)
}

type shareResetPlan struct {
	resetTargets
	lag    map[kafka.TopicPartition]int64 // the broker's lag before, where it counts lag (-1: it cannot)
	create bool                           // there is no such share group yet: EXECUTE creates it
}

func shareResetWhat(st *lang.ResetShareGroup) string {
	return fmt.Sprintf("RESET SHARE GROUP %q", st.Group)
}

// planShareReset computes the new start offsets without changing
// anything: the dry run shows exactly these rows, and EXECUTE computes
// them again and sends them. As kafka-share-groups.sh, it refuses a group
// with members.
func (s *Session) planShareReset(ctx context.Context, st *lang.ResetShareGroup) (*shareResetPlan, error) {
	what := shareResetWhat(st)
	g, found, err := s.shareStatus(ctx, st.Group)
	if err != nil {
		return nil, err
	}
	if found && (len(g.Members) > 0 || g.State != "Empty") {
		return nil, shareMembersError(what, g)
	}
	if !found {
		// Every group type shares one namespace: a consumer group's name
		// cannot become a share group (Kafka refuses the
		// AlterShareGroupOffsets), so "EXECUTE creates it" would be false.
		if gs, err := s.groupStatus(ctx, st.Group); err == nil && gs.exists {
			return nil, fmt.Errorf("%s: %q is a consumer group, not a share group: RESET GROUP %s ... moves its committed offsets", what, st.Group, lang.QuoteName(st.Group))
		}
	}
	m, err := s.cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	plan := &shareResetPlan{create: !found, lag: map[kafka.TopicPartition]int64{}}
	current := map[kafka.TopicPartition]int64{}
	// Every partition the group has share state for, including those
	// with no start offset yet (-1: initialized when a member subscribed,
	// never fetched). kafka-share-groups.sh resets them too; left out,
	// they would start at share.auto.offset.reset when first fetched.
	stateful := map[kafka.TopicPartition]bool{}
	if found {
		offs, ofail, err := s.cl.ShareGroupOffsets(ctx, []string{st.Group})
		if err != nil {
			return nil, err
		}
		if ge := ofail[st.Group]; ge != nil {
			return nil, ge
		}
		var failed []error
		for _, so := range offs[st.Group] {
			switch {
			case so.Err != nil:
				failed = append(failed, so.Err)
			case so.StartOffset >= 0:
				current[so.TP] = so.StartOffset
				if so.BrokerCountsLag {
					plan.lag[so.TP] = so.Lag
				}
				stateful[so.TP] = true
			default:
				stateful[so.TP] = true
			}
		}
		if len(failed) > 0 {
			return nil, fmt.Errorf("%s: could not read the start offsets of every partition, so nothing was planned: %w", what, errors.Join(failed...))
		}
	}
	if st.Topic == nil && len(stateful) == 0 {
		if !found {
			return nil, fmt.Errorf("%s: %w; to give a new share group start offsets, name the topic: RESET SHARE GROUP %s TOPIC name TO ...", what, noShareGroup(st.Group), lang.QuoteName(st.Group))
		}
		return nil, fmt.Errorf("%s: the share group has no share state for any partition yet, so there is nothing to reset; name the topic: RESET SHARE GROUP %s TOPIC name TO ...", what, lang.QuoteName(st.Group))
	}
	parts, m, err := s.resetPartitions(ctx, m, st.Topic, st.Partitions, slices.Collect(maps.Keys(stateful)), "the share group has start offsets", what, &plan.notes)
	if err != nil {
		return nil, err
	}
	if plan.create {
		plan.notes = append(plan.notes, fmt.Sprintf("notice: there is no share group %q yet: EXECUTE creates it with these start offsets", st.Group))
	}
	// RESET SHARE GROUP takes no SHIFT BY (the grammar refuses it), so
	// every partition has a target.
	if _, err := s.resolveReset(ctx, m, parts, current, st.To, what, &plan.resetTargets); err != nil {
		return nil, err
	}
	return plan, nil
}

// lagBefore is a row's lag before the reset: the broker's when it counts
// lag (nil where it cannot), else latest - start.
func (p *shareResetPlan) lagBefore(r resetRow) any {
	if r.current == nil {
		return nil
	}
	if l, ok := p.lag[r.tp]; ok {
		if l < 0 {
			return nil
		}
		return l
	}
	return r.lagBefore()
}

func (s *Session) resetShareGroup(ctx context.Context, st *lang.ResetShareGroup) (result.Result, error) {
	plan, err := s.planShareReset(ctx, st)
	if err != nil {
		return nil, err
	}
	var failed map[kafka.TopicPartition]*kafka.PartitionError
	if st.Execute {
		offsets := make(map[kafka.TopicPartition]int64, len(plan.rows))
		for _, r := range plan.rows {
			offsets[r.tp] = r.target
		}
		if failed, err = s.cl.AlterShareGroupOffsets(ctx, st.Group, offsets); err != nil {
			if kafka.IsGroupNotEmpty(err) {
				if g, found, serr := s.shareStatus(ctx, st.Group); serr == nil && found {
					return nil, fmt.Errorf("nothing was changed: %w", shareMembersError(shareResetWhat(st), g))
				}
			}
			return nil, fmt.Errorf("%s: nothing was changed: %w", shareResetWhat(st), err)
		}
		s.forgetNames()
	}
	res := result.NewSlice(resetCols, resetAnswerRows(plan.rows, failed, plan.lagBefore))
	res.Notes = plan.notes
	run := *st
	run.Execute = true
	var pinned string
	run.To, pinned = pinAgo(st.To, plan.at, func(to lang.ResetTarget) lang.Statement { return &lang.ResetShareGroup{Group: st.Group, To: to} })
	resetOutcome{
		what: shareResetWhat(st), group: fmt.Sprintf("share group %q", st.Group),
		did: "moved", doing: "moved the start offsets of", dryRun: "nothing was changed; to move these start offsets",
	}.report(res, len(plan.rows), failed, st.Execute, lang.Format(&run)+";"+pinned)
	return res, nil
}

var deleteShareOffsetsCols = []result.Column{col("group", result.String), col("topic", result.String), col("result", result.String)}

// deleteShareGroup deletes a whole share group (DeleteGroups, which Kafka
// uses for every group type) or, with TOPIC, its state for those topics
// (DeleteShareGroupOffsets), at the coordinator. It asks first whether the
// group exists and is empty, so a consumer group of the same name is never
// deleted by DELETE SHARE GROUP, and a refusal names the members.
func (s *Session) deleteShareGroup(ctx context.Context, st *lang.DeleteShareGroup) (result.Result, error) {
	what := fmt.Sprintf("DELETE SHARE GROUP %q", st.Group)
	g, found, err := s.shareStatus(ctx, st.Group)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%s: %w", what, noShareGroup(st.Group))
	}
	if len(g.Members) > 0 {
		return nil, shareMembersError(what, g)
	}
	if st.Topics == nil {
		err := s.cl.DeleteGroup(ctx, st.Group)
		switch {
		case err == nil:
			s.forgetNames()
			return result.NewSlice(deleteGroupCols, []result.Row{{st.Group, "deleted"}}), nil
		case kafka.IsGroupNotFound(err):
			return nil, fmt.Errorf("%s: %w", what, noShareGroup(st.Group))
		case kafka.IsGroupNotEmpty(err):
			if g, found, serr := s.shareStatus(ctx, st.Group); serr == nil && found {
				return nil, shareMembersError(what, g)
			}
		}
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	failed, coordinator, err := s.cl.DeleteShareGroupOffsets(ctx, st.Group, st.Topics)
	if err != nil {
		if kafka.IsGroupNotEmpty(err) {
			if g, found, serr := s.shareStatus(ctx, st.Group); serr == nil && found {
				return nil, shareMembersError(what, g)
			}
		}
		return nil, fmt.Errorf("%s: nothing was deleted: %w", what, err)
	}
	res := result.NewSlice(deleteShareOffsetsCols, nil)
	var missing []error
	for _, t := range st.Topics {
		var r any = "deleted"
		if ferr := failed[t]; ferr != nil {
			r = nil
			missing = append(missing, fmt.Errorf("DeleteShareGroupOffsets: topic %q on coordinator broker %d (%s): %s", t, coordinator, s.cl.Latest().Addr(coordinator), kafka.Describe(ferr)))
		}
		res.Rows = append(res.Rows, result.Row{st.Group, t, r})
	}
	if len(missing) > 0 {
		res.Failure = &result.PartialError{What: fmt.Sprintf("%s (%d of %d topics deleted; the rows with a NULL result were not)", what, len(st.Topics)-len(missing), len(st.Topics)), Missing: missing}
	} else {
		s.forgetNames()
	}
	return res, nil
}
