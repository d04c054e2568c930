package lang

import "strings"

func formatACL(sb *strings.Builder, s Statement) bool {
	switch s := s.(type) {
	case *ShowACLs:
		sb.WriteString("SHOW ACLS")
		if s.On != nil {
			sb.WriteString(" ON ")
			formatACLResource(sb, *s.On)
		}
		if s.Principal != nil {
			sb.WriteString(" FOR " + Quote([]byte(*s.Principal)))
		}
		formatQuery(sb, &s.Query)
	case *Grant:
		if s.Deny {
			sb.WriteString("DENY ")
		} else {
			sb.WriteString("GRANT ")
		}
		sb.WriteString(strings.Join(s.Operations, ", ") + " ON ")
		formatACLResource(sb, s.Resource)
		sb.WriteString(" TO " + Quote([]byte(s.Principal)))
		formatHost(sb, s.Host)
	case *Revoke:
		sb.WriteString("REVOKE " + strings.Join(s.Operations, ", ") + " ON ")
		formatACLResource(sb, s.Resource)
		sb.WriteString(" FROM " + Quote([]byte(s.Principal)))
		formatHost(sb, s.Host)
		if s.Execute {
			sb.WriteString(" EXECUTE")
		}
	case *ExplainAccess:
		sb.WriteString("EXPLAIN ACCESS " + Quote([]byte(s.Principal)) + " " + s.Operation + " ON ")
		formatACLResource(sb, s.Resource)
		formatHost(sb, s.Host)
	default:
		return false
	}
	return true
}

func formatACLResource(sb *strings.Builder, r ACLResource) {
	if r.Kind == ACLCluster {
		sb.WriteString("CLUSTER")
		return
	}
	sb.WriteString(r.Kind.Keyword() + " ")
	if r.Name == "*" {
		sb.WriteString("*")
	} else {
		sb.WriteString(QuoteName(r.Name))
	}
	if r.Prefixed {
		sb.WriteString(" PREFIXED")
	}
}

func formatHost(sb *strings.Builder, h *string) {
	if h != nil {
		sb.WriteString(" HOST " + Quote([]byte(*h)))
	}
}
