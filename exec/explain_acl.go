package exec

import (
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// explainACL plans the access-control statements. It reports false for a
// statement it does not know.
func explainACL(p *planner, m *kafka.Metadata, stmt lang.Statement) bool {
	switch x := stmt.(type) {
	case *lang.ShowACLs:
		what := "every binding"
		if x.On != nil {
			what = "every " + x.On.Kind.String() + " binding (those that apply to " + lang.QuoteName(x.On.Name) + " are kept)"
		}
		if x.Principal != nil {
			what += " of " + *x.Principal
		}
		p.any(kafka.APIDescribeACLs, what)
	case *lang.Grant:
		var items []string
		for _, b := range grantBindings(x) {
			items = append(items, b.Permission+" "+b.Operation)
		}
		p.any(kafka.APICreateACLs, strings.Join(items, ", ")+" on "+aclResourceText(x.Resource)+" to "+x.Principal+forwarded)
		everyBroker(p, m, kafka.APIDescribeACLs, aclResourceText(x.Resource)+" (until every broker's authorizer has the new bindings)")
	case *lang.Revoke:
		what := strings.Join(x.Operations, ", ") + " on " + aclResourceText(x.Resource) + " of " + x.Principal
		if !x.Execute {
			for _, op := range x.Operations {
				p.any(kafka.APIDescribeACLs, op+" on "+aclResourceText(x.Resource)+" of "+x.Principal+" (the filter DeleteAcls would get)")
			}
			return true
		}
		p.any(kafka.APIDeleteACLs, what+forwarded)
		everyBroker(p, m, kafka.APIDescribeACLs, aclResourceText(x.Resource)+" (until every broker's authorizer has dropped the bindings)")
	default:
		return false
	}
	return true
}

func aclResourceText(r lang.ACLResource) string {
	s := strings.ToLower(r.Kind.Keyword()) + " " + lang.QuoteName(r.Name)
	if r.Kind == lang.ACLCluster {
		return "the cluster"
	}
	if r.Prefixed {
		s += " (PREFIXED)"
	}
	return s
}
