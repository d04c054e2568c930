package kafka

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ListedGroup is one group as a broker lists it.
type ListedGroup struct {
	Group        string
	State        string
	ProtocolType string
	Type         string // ListGroups v5+: classic, consumer, share, streams ("" before)
	Coordinator  int32  // the broker that listed it: each lists only its own
}

// ListGroups unions ListGroups over every broker: each broker lists only
// the groups it coordinates. With types, it asks for groups of those types
// only (ListGroups v5+, KIP-848's type filter; a broker before that answers
// every group, with no type). A broker that cannot be asked, or answers
// with an error, is in missing, so the caller can say the list is partial.
// The groups are sorted by name.
func (c *Cluster) ListGroups(ctx context.Context, types ...string) ([]ListedGroup, []error, error) {
	const api = "ListGroups"
	answers, failed, err := c.EveryBroker(ctx, api, func() kmsg.Request {
		req := kmsg.NewPtrListGroupsRequest()
		req.TypesFilter = types
		return req
	}, func(r kmsg.Response) bool {
		// A broker loading its groups (just started, or just made
		// coordinator of more) has a list soon.
		code := r.(*kmsg.ListGroupsResponse).ErrorCode
		return code == kerr.CoordinatorLoadInProgress.Code || code == kerr.CoordinatorNotAvailable.Code
	})
	if err != nil {
		return nil, nil, err
	}
	var missing []error
	for _, f := range failed {
		missing = append(missing, f)
	}
	var out []ListedGroup
	for _, a := range answers {
		resp := a.Resp.(*kmsg.ListGroupsResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			missing = append(missing, &BrokerError{API: api, ID: a.Broker.ID, Addr: a.Broker.Addr(), Err: err})
			continue
		}
		for _, g := range resp.Groups {
			out = append(out, ListedGroup{Group: g.Group, State: g.GroupState, ProtocolType: g.ProtocolType, Type: g.GroupType, Coordinator: a.Broker.ID})
		}
	}
	slices.SortFunc(out, func(a, b ListedGroup) int { return strings.Compare(a.Group, b.Group) })
	return out, missing, nil
}
