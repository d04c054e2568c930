package lang

import (
	"math"
	"strings"
)

func (ps *parseState) showOps(g *gShow) (Statement, *Error) {
	var st Queryable
	switch o := g.Ops; {
	case o.LogDirs:
		sl := &ShowLogDirs{}
		if o.Broker != nil {
			v, e := ps.number(o.Broker, 0, math.MaxInt32, "broker id", brokerRange)
			if e != nil {
				return nil, e
			}
			id := int32(v)
			sl.Broker = &id
		}
		st = sl
	case strings.EqualFold(o.Single, "REASSIGNMENTS"):
		st = &ShowReassignments{}
	case strings.EqualFold(o.Single, "QUORUM"):
		st = &ShowQuorum{}
	default: // FEATURES; the grammar allows nothing else
		st = &ShowFeatures{}
	}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) alterReplicas(r ConfigResource, g *gAlterReplicas) (Statement, *Error) {
	if r.Kind != ResourceTopic {
		e := ps.errAt(g.Pos, "only a topic has partitions and replicas")
		e.Hint = "ALTER TOPIC name PARTITION p REPLICAS (1, 2, 3)"
		return nil, e
	}
	p, e := ps.partition(g.Partition)
	if e != nil {
		return nil, e
	}
	st := &AlterReplicas{Topic: r.Topic, Partition: p, Execute: g.Execute}
	if len(g.Replicas) == 0 {
		e := ps.errAt(g.ReplPos.Pos, "REPLICAS () names no broker: a partition needs at least one replica")
		e.Hint = "list the brokers that should hold the partition, the preferred leader first, as in REPLICAS (1, 2, 3)"
		return nil, e
	}
	for _, n := range g.Replicas {
		v, e := ps.number(n, 0, math.MaxInt32, "broker id", brokerRange)
		if e != nil {
			return nil, e
		}
		for _, b := range st.Replicas {
			if b == int32(v) {
				e := ps.errAt(n.Pos, "broker %d listed twice: a broker holds at most one replica of a partition", v)
				e.Hint = "each broker id once, the preferred leader first"
				return nil, e
			}
		}
		st.Replicas = append(st.Replicas, int32(v))
	}
	return st, nil
}

func (ps *parseState) ops(g *gOps) (Statement, *Error) {
	if c := g.Cancel; c != nil {
		topic, e := ps.name(c.Topic, "topic")
		if e != nil {
			return nil, e
		}
		p, e := ps.partition(c.Partition)
		if e != nil {
			return nil, e
		}
		return &CancelReassignment{Topic: topic, Partition: p, Execute: c.Execute}, nil
	}
	el := g.Elect
	st := &ElectLeaders{Unclean: strings.EqualFold(el.Kind, "UNCLEAN"), Execute: el.Execute}
	if el.Topic != nil {
		topic, e := ps.name(el.Topic, "topic")
		if e != nil {
			return nil, e
		}
		st.Topic = &topic
	}
	if el.Parts != nil {
		nums := el.Parts.List
		if nums == nil {
			nums = el.Parts.Bare
		}
		var e *Error
		if st.Partitions, e = ps.partitionList(&gParts{List: nums}); e != nil {
			return nil, e
		}
	}
	return st, nil
}
