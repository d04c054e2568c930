package lang

func (ps *parseState) showShare(g *gShow) (Statement, *Error) {
	st := &ShowShareGroups{}
	if l := g.Share.Like; l != nil {
		b, e := ps.unquote(l.Pos, l.Pattern)
		if e != nil {
			return nil, e
		}
		s := string(b)
		st.Like = &s
	}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) describeShare(g *gDescribe) (Statement, *Error) {
	name, e := ps.name(g.Share, "group")
	if e != nil {
		return nil, e
	}
	st := &DescribeShareGroup{Group: name}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

// resetShare turns a parsed RESET SHARE GROUP into its statement. SHIFT BY
// is refused: a share group has a start offset per partition, below which
// every record is done with, not a consumer position to move by n (Kafka's
// kafka-share-groups.sh offers earliest, latest and a time only).
func (ps *parseState) resetShare(st *ResetGroup, to *gResetTo) (Statement, *Error) {
	if st.To.Kind == ResetShift {
		e := ps.errAt(to.Pos, "RESET SHARE GROUP takes no SHIFT BY: a share group has a start offset per partition, not a position to shift")
		e.Hint = "name where the start offset goes: TO EARLIEST, TO LATEST, TO OFFSET n, TO TIMESTAMP t or TO duration AGO"
		return nil, e
	}
	return &ResetShareGroup{Group: st.Group, Topic: st.Topic, Partitions: st.Partitions, To: st.To, Execute: st.Execute}, nil
}

func (ps *parseState) deleteShare(g *gDeleteShare) (Statement, *Error) {
	group, e := ps.name(g.Group, "group")
	if e != nil {
		return nil, e
	}
	st := &DeleteShareGroup{Group: group}
	if g.Topics == nil {
		return st, nil
	}
	names := g.Topics.List
	if g.Topics.One != nil {
		names = []*gName{g.Topics.One}
	}
	for _, n := range names {
		topic, e := ps.name(n, "topic")
		if e != nil {
			return nil, e
		}
		for _, t := range st.Topics {
			if t == topic {
				return nil, ps.errAt(n.Pos, "topic %s listed twice", QuoteName(topic))
			}
		}
		st.Topics = append(st.Topics, topic)
	}
	return st, nil
}
