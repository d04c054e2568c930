package exec

import "strings"

// groupStatusSteps are the requests groupStatus sends to the group's
// coordinator id, on the conditions it sends them: DescribeGroups, then
// ConsumerGroupDescribe for a name the classic call does not know. when,
// if set, is the condition the statement asks groupStatus on ("only if
// ..."); the steps are then conditional on it too.
func groupStatusSteps(id int32, group, when string) []adminStep {
	also := func(cond string) string {
		if when == "" {
			return cond
		}
		if cond == "" {
			return when
		}
		return when + " and " + strings.TrimPrefix(cond, "only if ")
	}
	return []adminStep{
		{api: "DescribeGroups", route: routeCoordinator, broker: id, label: group, cond: also("")},
		{api: "ConsumerGroupDescribe", route: routeCoordinator, broker: id, label: group,
			cond: also("only if DescribeGroups knows no such group: a group of the new consumer protocol, or a new group")},
	}
}

// deleteGroupSteps are the requests of DELETE GROUP at the group's
// coordinator id, in the order deleteGroup sends them: the share group
// question (DELETE GROUP refuses a share group), the delete, and, only
// when Kafka answers that the group is not empty, its status, to name its
// members in the error.
func deleteGroupSteps(id int32, group string) []adminStep {
	steps := []adminStep{
		{api: "ShareGroupDescribe", route: routeCoordinator, broker: id, label: group + " (a share group is refused)"},
		{api: "FindCoordinator", route: routeAny, label: group},
		{api: "DeleteGroups", route: routeCoordinator, broker: id, label: group},
	}
	return append(steps, groupStatusSteps(id, group, "only if DeleteGroups answers that the group is not empty (to name its members)")...)
}
