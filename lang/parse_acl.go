package lang

import (
	"slices"
	"strings"
)

func (ps *parseState) aclName(g *gACLName, kind string) (string, *Error) {
	if g.Star {
		return "*", nil
	}
	return ps.name(&gName{Pos: g.Pos, Word: g.Word, Str: g.Str}, kind)
}

// aclResource converts an ON clause; verb names the statement in messages,
// and prefixOK says whether it takes PREFIXED.
func (ps *parseState) aclResource(g *gACLOn, verb string, prefixOK bool) (ACLResource, *Error) {
	var r ACLResource
	var e *Error
	switch {
	case g.Topic != nil:
		r.Kind = ACLTopic
		r.Name, e = ps.aclName(g.Topic, "topic")
	case g.Group != nil:
		r.Kind = ACLGroup
		r.Name, e = ps.aclName(g.Group, "group")
	case g.TxnID != nil:
		r.Kind = ACLTransactionalID
		r.Name, e = ps.aclName(g.TxnID, "transactional id")
	default:
		r.Kind, r.Name = ACLCluster, ACLClusterName
	}
	if e != nil {
		return r, e
	}
	if g.Prefixed == nil {
		return r, nil
	}
	switch {
	case r.Kind == ACLCluster:
		e := ps.errAt(g.Prefixed.Pos, "the cluster is one resource: ON CLUSTER takes no PREFIXED")
		return r, e
	case !prefixOK:
		e := ps.errAt(g.Prefixed.Pos, "%s takes no PREFIXED", verb)
		if verb == "SHOW ACLS" {
			e.Hint = "SHOW ACLS ON " + r.Kind.Keyword() + " name already lists the PREFIXED bindings that match the name; to see one pattern, write SHOW ACLS WHERE pattern_type = 'PREFIXED' AND resource_name = " + Quote([]byte(r.Name))
		} else {
			e.Hint = "EXPLAIN ACCESS asks about one resource, by its full name; the PREFIXED bindings that match it are part of the answer"
		}
		return r, e
	case r.Name == "*":
		e := ps.errAt(g.Prefixed.Pos, "'*' PREFIXED would be a prefix of a star; the wildcard is '*' without PREFIXED")
		return r, e
	}
	r.Prefixed = true
	return r, nil
}

// Keyword is how the ON clause writes the kind: TOPIC, GROUP, CLUSTER,
// TRANSACTIONAL ID.
func (k ACLResourceKind) Keyword() string {
	if k == ACLTransactionalID {
		return "TRANSACTIONAL ID"
	}
	return k.String()
}

// principal checks Kafka's Type:name form.
func (ps *parseState) principal(g *gPrincipal) (string, *Error) {
	b, e := ps.unquote(g.Pos, g.Str)
	if e != nil {
		return "", e
	}
	s := string(b)
	if i := strings.IndexByte(s, ':'); i <= 0 || i == len(s)-1 {
		e := ps.errAt(g.Pos, "%s is not a principal: Kafka's principals are type:name", g.Str)
		e.Hint = "for example 'User:alice', or 'User:*' for every user"
		return "", e
	}
	return s, nil
}

func (ps *parseState) host(g *gPrincipal) (*string, *Error) {
	if g == nil {
		return nil, nil
	}
	b, e := ps.unquote(g.Pos, g.Str)
	if e != nil {
		return nil, e
	}
	if len(b) == 0 {
		e := ps.errAt(g.Pos, "a host cannot be empty")
		e.Hint = "HOST takes the client's IP address as the broker sees it, as in HOST '10.0.0.5', or '*' for every host"
		return nil, e
	}
	h := string(b)
	return &h, nil
}

func (ps *parseState) aclOps(gs []*gACLOp) ([]string, *Error) {
	ops := make([]string, 0, len(gs))
	for _, g := range gs {
		op := strings.ToUpper(g.Op)
		if slices.Contains(ops, op) {
			return nil, ps.errAt(g.Pos, "operation %s listed twice", op)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func (ps *parseState) showACLs(g *gShow) (Statement, *Error) {
	st := &ShowACLs{}
	if g.ACLs.On != nil {
		r, e := ps.aclResource(g.ACLs.On, "SHOW ACLS", false)
		if e != nil {
			return nil, e
		}
		st.On = &r
	}
	if g.ACLs.For != nil {
		p, e := ps.principal(g.ACLs.For)
		if e != nil {
			return nil, e
		}
		st.Principal = &p
	}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) grant(g *gGrant) (Statement, *Error) {
	st := &Grant{Deny: strings.EqualFold(g.Verb, "DENY")}
	var e *Error
	if st.Operations, e = ps.aclOps(g.Ops); e != nil {
		return nil, e
	}
	if st.Resource, e = ps.aclResource(g.On, strings.ToUpper(g.Verb), true); e != nil {
		return nil, e
	}
	if st.Principal, e = ps.principal(g.To); e != nil {
		return nil, e
	}
	if st.Host, e = ps.host(g.Host); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) revoke(g *gRevoke) (Statement, *Error) {
	st := &Revoke{Execute: g.Execute}
	var e *Error
	if st.Operations, e = ps.aclOps(g.Ops); e != nil {
		return nil, e
	}
	if st.Resource, e = ps.aclResource(g.On, "REVOKE", true); e != nil {
		return nil, e
	}
	if st.Principal, e = ps.principal(g.From); e != nil {
		return nil, e
	}
	if st.Host, e = ps.host(g.Host); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) explainAccess(g *gAccess, explain bool) (Statement, *Error) {
	if !explain {
		e := ps.errAt(g.Pos, "ACCESS is asked with EXPLAIN: write EXPLAIN ACCESS")
		e.Hint = "for example: EXPLAIN ACCESS 'User:alice' READ ON TOPIC payments"
		return nil, e
	}
	st := &ExplainAccess{Operation: strings.ToUpper(g.Op.Op)}
	var e *Error
	if st.Principal, e = ps.principal(g.Principal); e != nil {
		return nil, e
	}
	if st.Operation == "ALL" {
		e := ps.errAt(g.Op.Pos, "EXPLAIN ACCESS asks about one operation; ALL is only for bindings")
		e.Hint = "name the operation the request needs, as in READ to consume, WRITE to produce, DESCRIBE to see it"
		return nil, e
	}
	if st.Resource, e = ps.aclResource(g.On, "EXPLAIN ACCESS", false); e != nil {
		return nil, e
	}
	if st.Resource.Name == "*" {
		at := g.On.Pos
		for _, n := range []*gACLName{g.On.Topic, g.On.Group, g.On.TxnID} {
			if n != nil {
				at = n.Pos
			}
		}
		e := ps.errAt(at, "EXPLAIN ACCESS asks about one resource, not the wildcard '*'")
		e.Hint = "name the resource a request would name; the '*' bindings that match it are part of the answer"
		return nil, e
	}
	if st.Host, e = ps.host(g.Host); e != nil {
		return nil, e
	}
	return st, nil
}

// aclExpected rewrites what a syntax error in an access-control statement
// expects: operations in Kafka's order, and a principal or host named as
// such rather than "a string". It returns a hint for the error, or "".
func (ps *parseState) aclExpected(e *Error, exp expectation, prev string) string {
	if exp.keywords["TWO_PHASE_COMMIT"] { // where operations go, only they go
		e.Expected = slices.Clone(ACLOperations)
		return ""
	}
	if exp.keywords["TRANSACTIONAL"] { // after ON
		e.Expected = []string{"TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL ID"}
		return ""
	}
	if !exp.classes[tkString] || exp.classes[tkWord] {
		return ""
	}
	prev = strings.ToUpper(prev)
	what := ""
	switch {
	case prev == "TO" || prev == "FROM" || prev == "ACCESS" || prev == "FOR" && statementLabel(ps.toks) == "SHOW ACLS":
		what = "a principal in quotes"
	case prev == "HOST":
		what = "a host in quotes"
	default:
		return ""
	}
	for i, l := range e.Expected {
		if l == "a string" {
			e.Expected[i] = what
		}
	}
	if what == "a host in quotes" {
		return "HOST takes the client's IP address as the broker sees it, as in HOST '10.0.0.5'"
	}
	return "a principal is written with its type, in quotes, as in 'User:alice' ('User:*' for every user)"
}
