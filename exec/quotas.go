package exec

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// The client quota statements. An entity's parts are columns of their own
// (user, client_id, ip), NULL where the entity has no such part and
// <default> for a default entity, as kafka-configs.sh names it.

var showQuotasCols = []result.Column{
	col("user", result.String), col("client_id", result.String), col("ip", result.String),
	col("key", result.String), col("value", result.Number),
}

var alterQuotaCols = []result.Column{
	col("user", result.String), col("client_id", result.String), col("ip", result.String),
	col("key", result.String), col("old_value", result.Number), col("new_value", result.Number),
}

// defaultEntity is how a default entity's name is shown.
const defaultEntity = "<default>"

// quotaSettle bounds the wait until an altered quota reads back.
const quotaSettle = 10 * time.Second

func quotaEntity(e lang.QuotaEntity) kafka.QuotaEntity {
	out := make(kafka.QuotaEntity, len(e.Parts))
	for i, p := range e.Parts {
		out[i].Type = p.Kind.EntityType()
		if !p.Default {
			name := p.Name
			out[i].Name = &name
		}
	}
	return out
}

// entityCells are the user, client_id and ip cells of an entity.
func entityCells(e kafka.QuotaEntity) [3]any {
	var cells [3]any
	for _, p := range e {
		i := 2
		switch p.Type {
		case kafka.QuotaUser:
			i = 0
		case kafka.QuotaClientID:
			i = 1
		}
		if p.Name == nil {
			cells[i] = defaultEntity
		} else {
			cells[i] = *p.Name
		}
	}
	return cells
}

func quotaNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func sameEntity(a, b kafka.QuotaEntity) bool {
	return slices.EqualFunc(a, b, func(x, y kafka.QuotaEntityPart) bool {
		return x.Type == y.Type && (x.Name == nil) == (y.Name == nil) && (x.Name == nil || *x.Name == *y.Name)
	})
}

func (s *Session) showQuotas(ctx context.Context, st *lang.ShowQuotas) (result.Result, error) {
	var filter kafka.QuotaEntity
	if st.For != nil {
		filter = quotaEntity(*st.For)
	}
	entries, err := s.cl.DescribeClientQuotas(ctx, filter)
	if err != nil {
		return nil, fmt.Errorf("SHOW QUOTAS: %w", err)
	}
	var rows []result.Row
	for _, e := range entries {
		cells := entityCells(e.Entity)
		keys := make([]string, 0, len(e.Values))
		for k := range e.Values {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			rows = append(rows, result.Row{cells[0], cells[1], cells[2], k, quotaNumber(e.Values[k])})
		}
	}
	return result.NewSlice(showQuotasCols, rows), nil
}

// entityQuotas reads the quota values of exactly this entity (not of the
// larger entities that include it).
func (s *Session) entityQuotas(ctx context.Context, ent kafka.QuotaEntity) (map[string]float64, error) {
	entries, err := s.cl.DescribeClientQuotas(ctx, ent)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if sameEntity(e.Entity, ent) {
			return e.Values, nil
		}
	}
	return map[string]float64{}, nil
}

func (s *Session) alterQuota(ctx context.Context, st *lang.AlterQuota) (result.Result, error) {
	ent := quotaEntity(st.Entity)
	what := "ALTER QUOTA FOR " + ent.String()
	before, err := s.entityQuotas(ctx, ent)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	var ops []kafka.QuotaOp
	for _, v := range st.Set {
		ops = append(ops, kafka.QuotaOp{Key: v.Key, Value: v.Value})
	}
	for _, k := range st.Unset {
		ops = append(ops, kafka.QuotaOp{Key: k, Remove: true})
	}
	if err := s.cl.AlterClientQuotas(ctx, ent, ops); err != nil {
		return nil, fmt.Errorf("%s: nothing was changed: %w", what, err)
	}
	after, settled := s.quotaReadBack(ctx, ent, ops)
	cells := entityCells(ent)
	shownValue := func(m map[string]float64, k string) any {
		if v, ok := m[k]; ok {
			return quotaNumber(v)
		}
		return nil
	}
	rows := make([]result.Row, 0, len(ops))
	for _, op := range ops {
		rows = append(rows, result.Row{cells[0], cells[1], cells[2], op.Key, shownValue(before, op.Key), shownValue(after, op.Key)})
	}
	res := result.NewSlice(alterQuotaCols, rows)
	if !settled {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: the change was accepted, but after %s the quotas of %s did not yet read back as changed; new_value is what it read", quotaSettle, ent))
	}
	return res, nil
}

// quotaReadBack reads the entity's quotas until the change shows: a
// broker may answer before it has applied the change it forwarded.
func (s *Session) quotaReadBack(ctx context.Context, ent kafka.QuotaEntity, ops []kafka.QuotaOp) (map[string]float64, bool) {
	return readUntil(ctx, quotaSettle, func() (map[string]float64, bool, error) {
		now, err := s.entityQuotas(ctx, ent)
		if err != nil {
			return nil, false, err
		}
		done := true
		for _, op := range ops {
			v, ok := now[op.Key]
			done = done && (op.Remove && !ok || !op.Remove && ok && v == op.Value)
		}
		return now, done, nil
	})
}
