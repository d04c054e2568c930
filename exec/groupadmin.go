package exec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

var resetCols = []result.Column{
	col("topic", result.String), col("partition", result.Int), col("current_offset", result.Int),
	col("new_offset", result.Int), col("lag_before", result.Int), col("lag_after", result.Int),
}

// groupState is what RESET and DELETE GROUP need to know of a group.
type groupState struct {
	exists  bool
	state   string
	members []groupMember
}

// groupStatus asks the coordinator for the group's state and members:
// DescribeGroups, then ConsumerGroupDescribe for a KIP-848 group, which
// the classic call does not know.
func (s *Session) groupStatus(ctx context.Context, group string) (groupState, error) {
	desc, dfail, err := s.cl.DescribeGroups(ctx, []string{group})
	if err != nil {
		return groupState{}, err
	}
	if ge := dfail[group]; ge != nil {
		if !kafka.IsGroupNotFound(ge.Err) {
			return groupState{}, ge
		}
		return s.consumerGroupStatus(ctx, group)
	}
	g := desc[group]
	st := groupState{exists: g.State != "Dead", state: g.State}
	for _, mem := range g.Members {
		st.members = append(st.members, groupMember{mem.MemberID, mem.ClientID, mem.Host})
	}
	return st, nil
}

// explainGroupStatus lists the requests groupStatus sends, on the
// conditions it sends them, to the group's coordinator id: EXPLAIN of the
// statements that ask it (RESET GROUP).
func explainGroupStatus(p *planner, m *kafka.Metadata, id int32, group string) {
	p.explainSteps(m, groupStatusSteps(id, group, ""))
}

func (s *Session) consumerGroupStatus(ctx context.Context, group string) (groupState, error) {
	got, failed, err := s.cl.ConsumerGroupDescribe(ctx, []string{group})
	if err != nil {
		return groupState{}, err
	}
	if ge := failed[group]; ge != nil {
		if kafka.IsGroupNotFound(ge.Err) || kafka.IsUnsupportedVersion(ge.Err) || kafka.IsBrokerTooOld(ge.Err) {
			return groupState{}, nil
		}
		return groupState{}, ge
	}
	g := got[group]
	st := groupState{exists: g.State != "Dead", state: g.State}
	for _, mem := range g.Members {
		st.members = append(st.members, groupMember{mem.MemberID, mem.ClientID, mem.Host})
	}
	return st, nil
}

// activeMembersError refuses to change a group that has members, naming
// them, as kafka-consumer-groups.sh does.
func activeMembersError(what, group string, st groupState) error {
	names := make([]string, 0, len(st.members))
	for _, m := range st.members {
		names = append(names, fmt.Sprintf("%s (client %s on %s)", m.memberID, m.clientID, m.host))
	}
	slices.Sort(names)
	const show = 5
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(" and %d more", len(names)-show)
		names = names[:show]
	}
	return fmt.Errorf("%s: group %q has %d active %s (state %s): %s%s; stop its consumers first (Kafka accepts this only for a group with no members)",
		what, group, len(st.members), plural(len(st.members), "member", "members"), st.state, strings.Join(names, ", "), more)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// resetRow is one partition of a RESET plan.
type resetRow struct {
	tp       kafka.TopicPartition
	current  *int64 // nil: the group never committed this partition
	target   int64
	earliest int64
	latest   int64
}

// resetTargets is what RESET GROUP and RESET SHARE GROUP plan alike: the
// rows and the notices for them.
type resetTargets struct {
	rows  []resetRow
	notes []string
	at    int64 // TO d AGO: the time it resolved to, epoch milliseconds
}

// lagBefore is a row's lag before the reset: latest - current, or nil
// where there is no current offset.
func (r resetRow) lagBefore() any {
	if r.current == nil {
		return nil
	}
	return max(r.latest-*r.current, 0)
}

// resetAnswerRows is the answer of RESET GROUP and RESET SHARE GROUP, a
// row a partition; one that failed has a NULL new_offset and lag_after.
func resetAnswerRows(plan []resetRow, failed map[kafka.TopicPartition]*kafka.PartitionError, lagBefore func(resetRow) any) []result.Row {
	rows := make([]result.Row, 0, len(plan))
	for _, r := range plan {
		var cur, newOff, lagAfter any
		if r.current != nil {
			cur = *r.current
		}
		if failed[r.tp] == nil {
			newOff, lagAfter = r.target, r.latest-r.target
		}
		rows = append(rows, result.Row{r.tp.Topic, int64(r.tp.Partition), cur, newOff, lagBefore(r), lagAfter})
	}
	return rows
}

type resetPlan struct {
	resetTargets
	meta    *kafka.Metadata
	created bool // the group does not exist yet: EXECUTE creates it
}

func resetWhat(st *lang.ResetGroup) string { return fmt.Sprintf("RESET GROUP %q", st.Group) }

// planReset computes the new offsets without changing anything: the dry
// run shows exactly these rows, and EXECUTE computes them again and commits.
func (s *Session) planReset(ctx context.Context, st *lang.ResetGroup) (*resetPlan, error) {
	what := resetWhat(st)
	gs, err := s.groupStatus(ctx, st.Group)
	if err != nil {
		return nil, err
	}
	if len(gs.members) > 0 {
		return nil, activeMembersError(what, st.Group, gs)
	}
	if !gs.exists {
		if _, share, err := s.shareStatus(ctx, st.Group); err == nil && share {
			return nil, fmt.Errorf("%s: %q is a share group, not a consumer group: RESET SHARE GROUP %s ... moves its start offsets", what, st.Group, lang.QuoteName(st.Group))
		}
	}
	m, err := s.cl.Metadata(ctx, nil)
	if err != nil {
		return nil, err
	}
	// The commits are read even when the coordinator describes no such
	// group: one that has just taken over (the old one stopped) describes
	// from a state that may not have caught up with the group's last
	// commits, while the stable read below waits for the newest. A group
	// with commits exists, whatever the describe said.
	committed, unknown, err := s.stableCommittedOffsets(ctx, st.Group, m)
	if err != nil {
		return nil, err
	}
	if !gs.exists && (len(committed) > 0 || len(unknown) > 0) {
		gs.exists = true
	}
	plan := &resetPlan{created: !gs.exists, meta: m}
	if st.Topic == nil && len(unknown) > 0 {
		// Without TOPIC the partitions to move are those the group has
		// offsets for, and some of those are unknown.
		return nil, fmt.Errorf("%s: the committed offsets of group %q: %w", what, st.Group, unknown[0])
	}
	if st.Topic == nil && len(committed) == 0 {
		if !gs.exists {
			return nil, fmt.Errorf("%s: no consumer group named %q (SHOW GROUPS lists the groups); to give a new group offsets, name the topic: RESET GROUP %s TOPIC name TO ...", what, st.Group, lang.QuoteName(st.Group))
		}
		return nil, fmt.Errorf("%s: the group has no committed offsets, so there is nothing to reset; name the topic: RESET GROUP %s TOPIC name TO ...", what, lang.QuoteName(st.Group))
	}
	parts, m, err := s.resetPartitions(ctx, m, st.Topic, st.Partitions, slices.Collect(maps.Keys(committed)), "the group has offsets", what, &plan.notes)
	if err != nil {
		return nil, err
	}
	plan.meta = m
	for _, pe := range unknown {
		// Only a partition this reset moves needs its commit known: one
		// of another topic, or left out with PARTITION, stays as it is.
		if slices.Contains(parts, kafka.TopicPartition{Topic: pe.Topic, Partition: pe.Partition}) {
			return nil, fmt.Errorf("%s: the committed offsets of group %q: %w", what, st.Group, pe)
		}
	}
	if plan.created {
		plan.notes = append(plan.notes, fmt.Sprintf("notice: there is no group %q yet: EXECUTE creates it with these offsets", st.Group))
	}
	noCommit, err := s.resolveReset(ctx, m, parts, committed, st.To, what, &plan.resetTargets)
	if err != nil {
		return nil, err
	}
	if len(noCommit) > 0 {
		return nil, fmt.Errorf("%s: SHIFT BY moves committed offsets, and the group has none for %s; reset those partitions TO an offset first, or leave them out with PARTITION",
			what, strings.Join(noCommit, ", "))
	}
	return plan, nil
}

// resetPartitions is the partitions a RESET moves, sorted: with TOPIC, the
// named ones of that topic; without, those in have whose topic still
// exists, with a notice (holder says who has the offsets) for each topic
// that does not. It returns the metadata it asked, which knows the topic.
func (s *Session) resetPartitions(ctx context.Context, m *kafka.Metadata, topic *string, partitions []int32, have []kafka.TopicPartition, holder, what string, notes *[]string) ([]kafka.TopicPartition, *kafka.Metadata, error) {
	var parts []kafka.TopicPartition
	if topic == nil {
		var gone []string
		for _, tp := range have {
			if _, ok := m.Topics[tp.Topic]; !ok {
				if !slices.Contains(gone, tp.Topic) {
					gone = append(gone, tp.Topic)
				}
				continue
			}
			parts = append(parts, tp)
		}
		slices.Sort(gone)
		for _, t := range gone {
			*notes = append(*notes, fmt.Sprintf("notice: %s for topic %q, which no longer exists; they are left as they are", holder, t))
		}
	} else {
		// The all-topics answer's broker may not know a topic created a
		// moment ago; ask by name before calling it missing.
		var err error
		if m, err = s.cl.WithTopic(ctx, m, *topic); err != nil {
			return nil, nil, err
		}
		if parts, err = pickPartitions(m.Topics[*topic], partitions, "PARTITION"); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	slices.SortFunc(parts, compareTP)
	if len(parts) == 0 {
		return nil, nil, fmt.Errorf("%s: nothing to reset", what)
	}
	return parts, m, nil
}

// resolveReset resolves to for each of parts against its log, read from
// the leaders, and adds the rows to plan, clamped to the log with a notice.
// current is where each partition is now (missing: nowhere yet); it
// returns the partitions SHIFT BY cannot move, having no current offset.
func (s *Session) resolveReset(ctx context.Context, m *kafka.Metadata, parts []kafka.TopicPartition, current map[kafka.TopicPartition]int64, to lang.ResetTarget, what string, plan *resetTargets) (noCurrent []string, err error) {
	lo, hi, err := s.logRange(ctx, m, parts, what)
	if err != nil {
		return nil, err
	}
	var byTime map[kafka.TopicPartition]kafka.OffsetAnswer
	if to.Kind == lang.ResetTimestamp || to.Kind == lang.ResetAgo {
		ts := to.Timestamp
		if to.Kind == lang.ResetAgo {
			ts = s.Now().Add(-to.Ago).UnixMilli()
		}
		plan.at = ts
		at := s.cl.OffsetsOf(ctx, m, parts, kafka.OffsetQuery{At: ts})
		if at.Err != nil {
			return nil, at.Err
		}
		byTime = at.Got
		tfail := at.Failed
		if len(tfail) > 0 {
			return nil, fmt.Errorf("%s: could not look up the offsets by time of %d %s, so nothing was planned: %w",
				what, len(tfail), plural(len(tfail), "partition", "partitions"), errors.Join(partitionErrors(tfail)...))
		}
	}
	for _, tp := range parts {
		row := resetRow{tp: tp, earliest: lo[tp], latest: hi[tp]}
		if off, ok := current[tp]; ok {
			row.current = &off
		}
		want := int64(0)
		switch to.Kind {
		case lang.ResetEarliest:
			want = row.earliest
		case lang.ResetLatest:
			want = row.latest
		case lang.ResetOffset:
			want = to.Offset
		case lang.ResetTimestamp, lang.ResetAgo:
			want = byTime[tp].Offset
			if want < 0 { // no record at or after the time: the end, as Kafka's tool does
				want = row.latest
			}
		case lang.ResetShift:
			if row.current == nil {
				noCurrent = append(noCurrent, tp.String())
				continue
			}
			want = shiftBy(*row.current, to.Shift)
		}
		row.target = want
		switch {
		case want < row.earliest:
			row.target = row.earliest
			plan.notes = append(plan.notes, fmt.Sprintf("notice: %s: offset %d is before the log's start (%d); clamped to %d", tp, want, row.earliest, row.earliest))
		case want > row.latest:
			row.target = row.latest
			plan.notes = append(plan.notes, fmt.Sprintf("notice: %s: offset %d is past the log's end (%d); clamped to %d", tp, want, row.latest, row.latest))
		}
		plan.rows = append(plan.rows, row)
	}
	return noCurrent, nil
}

// pinAgo is the target a dry run's EXECUTE statement names and the tail of
// its note: d AGO run again would resolve against a later clock, so the
// statement names the time it resolved to (at) instead. stmt is the
// statement with a target, for printing d AGO as the user would type it.
func pinAgo(to lang.ResetTarget, at int64, stmt func(lang.ResetTarget) lang.Statement) (lang.ResetTarget, string) {
	if to.Kind != lang.ResetAgo {
		return to, ""
	}
	ago := lang.Format(stmt(to))
	ago = ago[strings.LastIndex(ago, " TO ")+len(" TO "):]
	return lang.ResetTarget{Kind: lang.ResetTimestamp, Timestamp: at}, fmt.Sprintf(" (%s was %s)", ago, time.UnixMilli(at).UTC().Format(time.RFC3339Nano))
}

func shiftBy(off, by int64) int64 {
	n := off + by
	if by > 0 && n < off { // overflow: past any end
		return 1<<63 - 1
	}
	if by < 0 && n > off {
		return -1 << 63
	}
	return n
}

// logRange reads each partition's earliest and latest offset from its
// leader, the latest after the earliest (kafka.Cluster.Bounds). A partition whose range could not be read fails the statement:
// an offset cannot be planned, or records counted, against a guess.
func (s *Session) logRange(ctx context.Context, m *kafka.Metadata, parts []kafka.TopicPartition, what string) (lo, hi map[kafka.TopicPartition]int64, err error) {
	b, err := s.cl.Bounds(ctx, m, parts, kafka.BoundsOptions{LatestAfterEarliest: true})
	if err != nil {
		return nil, nil, err
	}
	if missing := partitionErrors(b.Failed); len(missing) > 0 {
		return nil, nil, fmt.Errorf("%s: could not read the log range of every partition, so nothing was changed: %w", what, errors.Join(missing...))
	}
	lo = make(map[kafka.TopicPartition]int64, len(parts))
	hi = make(map[kafka.TopicPartition]int64, len(parts))
	for tp, sp := range b.Spans {
		lo[tp], hi[tp] = sp.Start, sp.End
	}
	return lo, hi, nil
}

func compareTP(a, b kafka.TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return int(a.Partition) - int(b.Partition)
}

// pickPartitions returns the listed partitions of t (all when want is
// nil), or an error naming the ones t does not have.
func pickPartitions(t *kafka.Topic, want []int32, clause string) ([]kafka.TopicPartition, error) {
	if want == nil {
		return partitionsOf(t), nil
	}
	have := make(map[int32]bool, len(t.Partitions))
	for _, p := range t.Partitions {
		have[p.ID] = true
	}
	out := make([]kafka.TopicPartition, 0, len(want))
	for _, p := range want {
		if !have[p] {
			return nil, fmt.Errorf("topic %q has no partition %d (in %s); its partitions are 0-%d", t.Name, p, clause, len(t.Partitions)-1)
		}
		out = append(out, kafka.TopicPartition{Topic: t.Name, Partition: p})
	}
	return out, nil
}

func (s *Session) resetGroup(ctx context.Context, st *lang.ResetGroup) (result.Result, error) {
	plan, err := s.planReset(ctx, st)
	if err != nil {
		return nil, err
	}
	var failed map[kafka.TopicPartition]*kafka.PartitionError
	if st.Execute {
		offsets := make(map[kafka.TopicPartition]int64, len(plan.rows))
		for _, r := range plan.rows {
			offsets[r.tp] = r.target
		}
		if failed, err = s.cl.CommitOffsets(ctx, plan.meta, st.Group, offsets); err != nil {
			return nil, fmt.Errorf("%s: nothing was committed: %w", resetWhat(st), err)
		}
		s.forgetNames()
	}
	res := result.NewSlice(resetCols, resetAnswerRows(plan.rows, failed, resetRow.lagBefore))
	res.Notes = plan.notes
	run := *st
	run.Execute = true
	var pinned string
	run.To, pinned = pinAgo(st.To, plan.at, func(to lang.ResetTarget) lang.Statement { return &lang.ResetGroup{Group: st.Group, To: to} })
	resetOutcome{
		what: resetWhat(st), group: fmt.Sprintf("group %q", st.Group),
		did: "committed", doing: "committed new offsets for", dryRun: "nothing was committed; to commit these offsets",
	}.report(res, len(plan.rows), failed, st.Execute, lang.Format(&run)+";"+pinned)
	return res, nil
}

// resetOutcome words what a reset did, the same for a consumer group
// (committed offsets) and a share group (moved start offsets).
type resetOutcome struct {
	what   string // the statement: RESET GROUP "g"
	group  string // group "g"
	did    string // committed: "2 of 3 partitions committed"
	doing  string // committed new offsets for: "executed: committed new offsets for 3 partitions"
	dryRun string // what a dry run says before the statement to run
}

// report adds to res what the reset of n partitions did: a dry run names
// the statement that executes it (rerun), a reset that failed for some
// partitions is partial and names them.
func (o resetOutcome) report(res *result.Slice, n int, failed map[kafka.TopicPartition]*kafka.PartitionError, executed bool, rerun string) {
	switch {
	case !executed:
		res.Notes = append(res.Notes, fmt.Sprintf("dry run: %s run: %s", o.dryRun, rerun))
	case len(failed) > 0:
		res.Failure = &result.PartialError{What: fmt.Sprintf("%s (%d of %d partitions %s; the rows with a NULL new_offset were not)", o.what, n-len(failed), n, o.did), Missing: partitionErrors(failed)}
		res.Notes = append(res.Notes, fmt.Sprintf("executed in part: %s %d of %d partitions of %s", o.doing, n-len(failed), n, o.group))
	default:
		res.Notes = append(res.Notes, fmt.Sprintf("executed: %s %d %s of %s", o.doing, n, plural(n, "partition", "partitions"), o.group))
	}
}

var deleteGroupCols = []result.Column{col("group", result.String), col("result", result.String)}

func (s *Session) deleteGroup(ctx context.Context, st *lang.DeleteGroup) (result.Result, error) {
	what := fmt.Sprintf("DELETE GROUP %q", st.Group)
	// Kafka's DeleteGroups deletes a group of any type: asked first, a
	// share group is refused here, as DELETE SHARE GROUP refuses a
	// consumer group. A cluster without share groups (before Kafka 4.0)
	// cannot answer, and the delete goes on.
	if _, share, serr := s.shareStatus(ctx, st.Group); serr == nil && share {
		return nil, fmt.Errorf("%s: %q is a share group, not a consumer group: DELETE SHARE GROUP %s deletes it (SHOW SHARE GROUPS lists them)", what, st.Group, lang.QuoteName(st.Group))
	}
	err := s.cl.DeleteGroup(ctx, st.Group)
	switch {
	case err == nil:
		s.forgetNames()
		return result.NewSlice(deleteGroupCols, []result.Row{{st.Group, "deleted"}}), nil
	case kafka.IsGroupNotFound(err):
		return nil, fmt.Errorf("%s: no consumer group named %q (SHOW GROUPS lists the groups)", what, st.Group)
	case kafka.IsGroupNotEmpty(err):
		if gs, serr := s.groupStatus(ctx, st.Group); serr == nil && len(gs.members) > 0 {
			return nil, activeMembersError(what, st.Group, gs)
		}
		return nil, fmt.Errorf("%s: the group has active members; stop its consumers first: %w", what, err)
	}
	return nil, fmt.Errorf("%s: %w", what, err)
}
