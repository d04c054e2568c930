package lang

import (
	"math"
	"strings"
	"time"
)

const (
	brokerRange = "a broker id is 0 to 2147483647"
)

func (ps *parseState) resource(g *gResource) (ConfigResource, *Error) {
	switch {
	case g.Topic != nil:
		name, e := ps.name(g.Topic, "topic")
		return ConfigResource{Kind: ResourceTopic, Topic: name}, e
	case g.Broker != nil:
		v, e := ps.number(g.Broker, 0, math.MaxInt32, "broker id", brokerRange)
		return ConfigResource{Kind: ResourceBroker, Broker: int32(v)}, e
	}
	return ConfigResource{Kind: ResourceCluster}, nil
}

func (ps *parseState) showConfigs(g *gShowConfigs) (Statement, *Error) {
	r, e := ps.resource(g.Resource)
	if e != nil {
		return nil, e
	}
	st := &ShowConfigs{Resource: r, All: g.All != nil}
	if st.All && r.Kind == ResourceCluster {
		e := ps.errAt(g.All.Pos, "SHOW CONFIGS FOR CLUSTER takes no ALL")
		e.Hint = "the cluster's configs are the dynamic defaults set for every broker, and there are only those; SHOW CONFIGS FOR BROKER n ALL shows everything one broker uses"
		return nil, e
	}
	return st, nil
}

func (ps *parseState) alter(g *gAlter) (Statement, *Error) {
	r, e := ps.resource(g.Resource)
	if e != nil {
		return nil, e
	}
	if g.Replicas != nil {
		return ps.alterReplicas(r, g.Replicas)
	}
	if g.Partitions != nil {
		if r.Kind != ResourceTopic {
			e := ps.errAt(g.Partitions.Pos, "only a topic has partitions")
			e.Hint = "ALTER TOPIC name PARTITIONS n"
			return nil, e
		}
		v, e := ps.number(g.Partitions.Count, 1, math.MaxInt32, "PARTITIONS", partitionsRange)
		if e != nil {
			return nil, e
		}
		return &AlterPartitions{Topic: r.Topic, Count: int32(v)}, nil
	}
	st := &AlterConfigs{Resource: r}
	seen := clauses{}
	names := map[string]string{} // config name -> the clause that named it
	for _, cl := range g.Clauses {
		if cl.Set != nil {
			if e := ps.once(seen, "SET", "SET", cl.Pos); e != nil {
				return nil, e
			}
			for _, cfg := range cl.Set {
				name, e := ps.name(cfg.Name, "config")
				if e != nil {
					return nil, e
				}
				if e := ps.configOnce(names, name, "SET", cfg.Name); e != nil {
					return nil, e
				}
				if strings.EqualFold(cfg.Value.Word, "NULL") {
					e := ps.errAt(cfg.Value.Pos, "a config value cannot be NULL")
					e.Hint = "to go back to the default, write UNSET (" + QuoteName(name) + "); write 'NULL' in quotes if you mean the word"
					return nil, e
				}
				value, e := ps.configValue(cfg.Value)
				if e != nil {
					return nil, e
				}
				st.Set = append(st.Set, TopicConfig{Name: name, Value: value})
			}
			continue
		}
		if e := ps.once(seen, "UNSET", "UNSET", cl.Pos); e != nil {
			return nil, e
		}
		for _, n := range cl.Unset {
			name, e := ps.name(n, "config")
			if e != nil {
				return nil, e
			}
			if e := ps.configOnce(names, name, "UNSET", n); e != nil {
				return nil, e
			}
			st.Unset = append(st.Unset, name)
		}
	}
	return st, nil
}

func (ps *parseState) configOnce(names map[string]string, name, clause string, at *gName) *Error {
	if first, dup := names[name]; dup {
		if first == clause {
			return ps.errAt(at.Pos, "config %s given twice", name)
		}
		return ps.errAt(at.Pos, "config %s is both SET and UNSET: say which", name)
	}
	names[name] = clause
	return nil
}

func (ps *parseState) partitionList(g *gParts) ([]int32, *Error) {
	nums := g.List
	if g.One != nil {
		nums = []*gNum{g.One}
	}
	parts := make([]int32, 0, len(nums))
	for _, n := range nums {
		p, e := ps.partition(n)
		if e != nil {
			return nil, e
		}
		for _, q := range parts {
			if q == p {
				return nil, ps.errAt(n.Pos, "partition %d listed twice", p)
			}
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func (ps *parseState) reset(g *gReset) (Statement, *Error) {
	group, e := ps.name(g.Group, "group")
	if e != nil {
		return nil, e
	}
	label := "RESET GROUP"
	if g.Share {
		label = "RESET SHARE GROUP"
	}
	st := &ResetGroup{Group: group, Execute: g.Execute}
	var toPos *gResetClause
	seen := clauses{}
	var partPos *gResetClause
	hasTo := false
	for _, cl := range g.Clauses {
		switch {
		case cl.Topic != nil:
			if e := ps.once(seen, "TOPIC", "TOPIC", cl.Pos); e != nil {
				return nil, e
			}
			name, e := ps.name(cl.Topic, "topic")
			if e != nil {
				return nil, e
			}
			st.Topic = &name
		case cl.Parts != nil:
			if e := ps.once(seen, "PARTITION", cl.PartKw, cl.Pos); e != nil {
				return nil, e
			}
			if st.Partitions, e = ps.partitionList(cl.Parts); e != nil {
				return nil, e
			}
			partPos = cl
		case cl.To != nil:
			if e := ps.once(seen, "TO", "TO", cl.Pos); e != nil {
				return nil, e
			}
			if st.To, e = ps.resetTo(cl.To); e != nil {
				return nil, e
			}
			hasTo = true
			toPos = cl
		}
	}
	if partPos != nil && st.Topic == nil {
		e := ps.errAt(partPos.Pos, "PARTITION needs a TOPIC: partitions are numbered per topic")
		e.Hint = "for example: " + label + " " + QuoteName(group) + " TOPIC orders PARTITION (0, 1) TO EARLIEST"
		return nil, e
	}
	if !hasTo {
		i := len(ps.toks) - 1
		if g.Execute {
			i-- // point at EXECUTE: TO belongs before it
		}
		e := ps.errAtToken(i, "%s needs TO: where should the offsets go?", label)
		e.Expected = []string{"TO EARLIEST", "TO LATEST", "TO OFFSET n", "TO TIMESTAMP t", "TO duration AGO", "TO SHIFT BY n"}
		e.Hint = "for example: " + label + " " + QuoteName(group) + " TO EARLIEST (a dry run; add EXECUTE to commit)"
		if g.Share {
			e.Expected = e.Expected[:5]
		}
		return nil, e
	}
	if g.Share {
		return ps.resetShare(st, toPos.To)
	}
	return st, nil
}

func (ps *parseState) resetTo(g *gResetTo) (ResetTarget, *Error) {
	switch {
	case g.Newest:
		return ResetTarget{Kind: ResetLatest}, nil
	case g.Oldest:
		return ResetTarget{Kind: ResetEarliest}, nil
	case g.Offset != nil:
		v, e := ps.number(g.Offset, 0, math.MaxInt64, "offset", offsetRange)
		return ResetTarget{Kind: ResetOffset, Offset: v}, e
	case g.Time != nil:
		ts, e := ps.timestamp(g.Time)
		return ResetTarget{Kind: ResetTimestamp, Timestamp: ts}, e
	case g.Ago != nil:
		d, err := time.ParseDuration(g.Ago.Text)
		if err != nil {
			e := ps.errAt(g.Ago.Pos, "%s is not a duration", g.Ago.Text)
			e.Hint = "a duration is a number and a unit (ns, us, ms, s, m, h), as in 15m, 1h30m or 1.5h"
			return ResetTarget{}, e
		}
		if d <= 0 {
			return ResetTarget{}, ps.errAt(g.Ago.Pos, "duration %s is not positive: TO ... AGO looks back, as in TO 15m AGO", g.Ago.Text)
		}
		return ResetTarget{Kind: ResetAgo, Ago: d}, nil
	}
	v, e := ps.number(g.Shift, math.MinInt64, math.MaxInt64, "SHIFT BY", "a shift is a whole number of records, negative to go back")
	return ResetTarget{Kind: ResetShift, Shift: v}, e
}

func (ps *parseState) deleteStmt(g *gDelete) (Statement, *Error) {
	if g.Share != nil {
		return ps.deleteShare(g.Share)
	}
	if g.Group != nil {
		name, e := ps.name(g.Group, "group")
		if e != nil {
			return nil, e
		}
		return &DeleteGroup{Group: name}, nil
	}
	topic, e := ps.name(g.Topic, "topic")
	if e != nil {
		return nil, e
	}
	st := &DeleteRecords{Topic: topic, Execute: g.Execute}
	seen := clauses{}
	var parts *gDeleteClause
	var pairs *gBefore
	for _, cl := range g.Clauses {
		if cl.Before == nil {
			if e := ps.once(seen, "PARTITION", cl.PartKw, cl.Pos); e != nil {
				return nil, e
			}
			if st.Partitions, e = ps.partitionList(cl.Parts); e != nil {
				return nil, e
			}
			parts = cl
			continue
		}
		if e := ps.once(seen, "BEFORE", "BEFORE", cl.Pos); e != nil {
			return nil, e
		}
		b := cl.Before
		if b.Offset != nil {
			v, e := ps.number(b.Offset, 0, math.MaxInt64, "offset", offsetRange)
			if e != nil {
				return nil, e
			}
			st.BeforeOffset = &v
			continue
		}
		pairs = b
		st.Before = make([]PartitionOffset, 0, len(b.Pairs))
		for _, pair := range b.Pairs {
			p, e := ps.partition(pair.Part)
			if e != nil {
				return nil, e
			}
			o, e := ps.number(pair.Offset, 0, math.MaxInt64, "offset", offsetRange)
			if e != nil {
				return nil, e
			}
			for _, q := range st.Before {
				if q.Partition == p {
					return nil, ps.errAt(pair.Part.Pos, "partition %d listed twice", p)
				}
			}
			st.Before = append(st.Before, PartitionOffset{Partition: p, Offset: o})
		}
	}
	if pairs != nil && parts != nil {
		e := ps.errAt(parts.Pos, "BEFORE (p:o, ...) already names the partitions")
		e.Hint = "PARTITION goes with BEFORE OFFSET n, as in DELETE RECORDS FROM " + QuoteName(topic) + " BEFORE OFFSET 100 PARTITION (0, 1)"
		return nil, e
	}
	if st.Before == nil && st.BeforeOffset == nil {
		i := len(ps.toks) - 1
		if g.Execute {
			i--
		}
		e := ps.errAtToken(i, "DELETE RECORDS needs BEFORE: which records should go?")
		e.Expected = []string{"BEFORE (p:o, ...)", "BEFORE OFFSET n"}
		e.Hint = "for example: DELETE RECORDS FROM " + QuoteName(topic) + " BEFORE (0:100, 1:250) (a dry run; add EXECUTE to delete)"
		return nil, e
	}
	return st, nil
}

// executeLast lists the statements that end with an optional EXECUTE.
var executeLast = map[string]bool{"RESET": true, "DELETE": true, "ALTER": true, "CANCEL": true, "ELECT": true, "REVOKE": true, "ABORT": true}

// adminHint explains two slips the grammar alone reports badly: EXECUTE
// written before the end, and DELETE TOPIC for DROP TOPIC.
func (ps *parseState) adminHint(i int, word string) string {
	if i == 0 {
		return ""
	}
	prev := strings.ToUpper(ps.toks[i-1].text)
	switch {
	case prev == "EXECUTE" && ps.toks[i-1].kind == tkWord && i >= 2 && ps.toks[0].kind == tkWord &&
		executeLast[strings.ToUpper(ps.toks[0].text)]:
		return "EXECUTE ends the statement: write it last"
	case prev == "DELETE" && word == "TOPIC":
		return "a topic is removed with DROP TOPIC name"
	case (word == "PARTITION" || word == "PARTITIONS") && (prev == "LEADERS" || prev == "PREFERRED" || prev == "UNCLEAN"):
		return "partitions are numbered per topic: ELECT LEADERS FOR TOPIC name PARTITION p, ..."
	}
	return ps.txnHint(i, word)
}
