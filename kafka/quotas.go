package kafka

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's client quota entity types.
const (
	QuotaUser     = "user"
	QuotaClientID = "client-id"
	QuotaIP       = "ip"
)

// QuotaEntityPart is one part of a quota entity: its type and name, or
// the default entity of that type (Name nil).
type QuotaEntityPart struct {
	Type string
	Name *string
}

// QuotaEntity is what a quota is for: one part, or a user and a client id.
type QuotaEntity []QuotaEntityPart

// String names the entity as kafka-configs.sh does: user-principal
// 'alice', client-id 'reports'; the default user-principal.
func (e QuotaEntity) String() string {
	parts := make([]string, len(e))
	for i, p := range e {
		kind := p.Type
		if kind == QuotaUser {
			kind = "user-principal"
		}
		if p.Name == nil {
			parts[i] = "the default " + kind
		} else {
			parts[i] = kind + " '" + *p.Name + "'"
		}
	}
	return strings.Join(parts, ", ")
}

// QuotaEntry is one entity's quota values.
type QuotaEntry struct {
	Entity QuotaEntity
	Values map[string]float64
}

// QuotaOp is one change of AlterClientQuotas: set Key to Value, or remove it.
type QuotaOp struct {
	Key    string
	Value  float64
	Remove bool
}

// DescribeClientQuotas reads the quotas of the entities that have (at
// least) the parts of filter, or every quota with a nil filter. Any broker
// answers. Entries are sorted by entity (user, then client id, then ip;
// a default before the named ones).
func (c *Cluster) DescribeClientQuotas(ctx context.Context, filter QuotaEntity) ([]QuotaEntry, error) {
	const api = "DescribeClientQuotas"
	req := kmsg.NewPtrDescribeClientQuotasRequest()
	item := "all quotas"
	if filter != nil {
		item = "quotas of " + filter.String()
	}
	for _, p := range filter {
		comp := kmsg.NewDescribeClientQuotasRequestComponent()
		comp.EntityType = p.Type
		if p.Name == nil {
			comp.MatchType = kmsg.QuotasMatchTypeDefault
		} else {
			comp.MatchType = kmsg.QuotasMatchTypeExact
			comp.Match = kmsg.StringPtr(*p.Name)
		}
		req.Components = append(req.Components, comp)
	}
	raw, by, err := c.AnyBroker(ctx, api, []string{item}, req)
	if err != nil {
		return nil, err
	}
	resp := raw.(*kmsg.DescribeClientQuotasResponse)
	if resp.ErrorCode != 0 {
		return nil, &AdminError{API: api, Broker: by, Addr: c.addr(by), Item: item, Needs: "DESCRIBE_CONFIGS on the CLUSTER",
			Err: kerr.ErrorForCode(resp.ErrorCode), Message: deref(resp.ErrorMessage)}
	}
	out := make([]QuotaEntry, 0, len(resp.Entries))
	for _, e := range resp.Entries {
		qe := QuotaEntry{Values: make(map[string]float64, len(e.Values))}
		for _, ent := range e.Entity {
			qe.Entity = append(qe.Entity, QuotaEntityPart{Type: ent.Type, Name: ent.Name})
		}
		slices.SortFunc(qe.Entity, func(a, b QuotaEntityPart) int { return typeRank(a.Type) - typeRank(b.Type) })
		for _, v := range e.Values {
			qe.Values[v.Key] = v.Value
		}
		out = append(out, qe)
	}
	slices.SortFunc(out, func(a, b QuotaEntry) int { return compareEntities(a.Entity, b.Entity) })
	return out, nil
}

func typeRank(t string) int {
	switch t {
	case QuotaUser:
		return 0
	case QuotaClientID:
		return 1
	case QuotaIP:
		return 2
	}
	return 3
}

// compareEntities orders entities part by part: by type, then a default
// before a name, then by name; a shorter entity first.
func compareEntities(a, b QuotaEntity) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if d := typeRank(a[i].Type) - typeRank(b[i].Type); d != 0 {
			return d
		}
		switch an, bn := a[i].Name, b[i].Name; {
		case an == nil && bn != nil:
			return -1
		case an != nil && bn == nil:
			return 1
		case an != nil && *an != *bn:
			return strings.Compare(*an, *bn)
		}
	}
	return len(a) - len(b)
}

// AlterClientQuotas applies ops to one entity's quotas. It goes where admin
// requests are accepted (see Controller): any broker on KRaft, which
// forwards it to the active controller (KIP-590).
func (c *Cluster) AlterClientQuotas(ctx context.Context, entity QuotaEntity, ops []QuotaOp) error {
	const api = "AlterClientQuotas"
	req := kmsg.NewPtrAlterClientQuotasRequest()
	entry := kmsg.NewAlterClientQuotasRequestEntry()
	for _, p := range entity {
		e := kmsg.NewAlterClientQuotasRequestEntryEntity()
		e.Type, e.Name = p.Type, p.Name
		entry.Entity = append(entry.Entity, e)
	}
	var parts []string
	for _, op := range ops {
		o := kmsg.NewAlterClientQuotasRequestEntryOp()
		o.Key, o.Value, o.Remove = op.Key, op.Value, op.Remove
		entry.Ops = append(entry.Ops, o)
		if op.Remove {
			parts = append(parts, "UNSET "+op.Key)
		} else {
			parts = append(parts, fmt.Sprintf("%s=%v", op.Key, op.Value))
		}
	}
	req.Entries = append(req.Entries, entry)
	item := "quota of " + entity.String()
	raw, by, err := c.Controller(ctx, api, []string{item + ": " + strings.Join(parts, ", ")}, req, func(r kmsg.Response) bool {
		for _, e := range r.(*kmsg.AlterClientQuotasResponse).Entries {
			if e.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	resp := raw.(*kmsg.AlterClientQuotasResponse)
	if len(resp.Entries) != 1 {
		return &AdminError{API: api, Broker: by, Addr: c.addr(by), Item: item, Err: fmt.Errorf("the broker answered for %d entities, not 1", len(resp.Entries))}
	}
	if e := resp.Entries[0]; e.ErrorCode != 0 {
		return &AdminError{API: api, Broker: by, Addr: c.addr(by), Item: item, Needs: "ALTER_CONFIGS on the CLUSTER",
			Err: kerr.ErrorForCode(e.ErrorCode), Message: deref(e.ErrorMessage)}
	}
	return nil
}
