package exec

import (
	"context"
	"fmt"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// explainUsers plans the user and quota statements. It reports false for a
// statement it does not know. No plan step holds a password: the shell
// asks for one only when the statement runs.
func (s *Session) explainUsers(_ context.Context, p *planner, m *kafka.Metadata, stmt lang.Statement) (bool, error) {
	controller := func(api, item string) {
		p.perBroker(api, m, map[int32][]string{m.ControllerID: {item + forwarded}})
	}
	switch x := stmt.(type) {
	case *lang.ShowUsers:
		p.any("DescribeUserScramCredentials", "all users")
	case *lang.CreateUser:
		mech, iters := x.Mechanism, x.Iterations
		if mech == 0 {
			mech = defaultMechanism
		}
		if iters == 0 {
			iters = lang.MinScramIterations
		}
		p.any("DescribeUserScramCredentials", x.User+" (it must not have a "+mech.String()+" credential yet)")
		p.note("the new password is asked for here (a prompt without echo, or $KQL_NEW_PASSWORD); only its salted form is sent")
		controller("AlterUserScramCredentials", fmt.Sprintf("upsert %s %s iterations=%d", x.User, mech, iters))
		everyBroker(p, m, "DescribeUserScramCredentials", x.User+" (until every broker has the credential)")
	case *lang.AlterUser:
		which := "each mechanism the user has, one request each"
		if x.Mechanism != 0 {
			which = x.Mechanism.String()
		}
		p.any("DescribeUserScramCredentials", x.User+" (its mechanisms and iterations)")
		p.note("the new password is asked for here (a prompt without echo, or $KQL_NEW_PASSWORD); only its salted form is sent")
		controller("AlterUserScramCredentials", "upsert "+x.User+" "+which)
		switch {
		case x.Iterations != 0:
			everyBroker(p, m, "DescribeUserScramCredentials", x.User+" (until every broker has the new iterations)")
		case x.Mechanism != 0:
			everyBroker(p, m, "DescribeUserScramCredentials", x.User+" (if this creates the "+x.Mechanism.String()+" credential: until every broker has it)")
		}
	case *lang.DropUser:
		which := "each mechanism the user has, one request each"
		if x.Mechanism != 0 {
			which = x.Mechanism.String()
		}
		p.any("DescribeUserScramCredentials", x.User+" (its mechanisms)")
		controller("AlterUserScramCredentials", "delete "+x.User+" "+which)
		everyBroker(p, m, "DescribeUserScramCredentials", x.User+" (until no broker has the credential)")
	case *lang.ShowQuotas:
		what := "all quotas"
		if x.For != nil {
			what = "quotas of " + quotaEntity(*x.For).String()
		}
		p.any("DescribeClientQuotas", what)
	case *lang.AlterQuota:
		ent := quotaEntity(x.Entity)
		var ops []string
		for _, v := range x.Set {
			ops = append(ops, v.Key+"="+quotaNumber(v.Value))
		}
		for _, k := range x.Unset {
			ops = append(ops, "UNSET "+k)
		}
		p.any("DescribeClientQuotas", "quotas of "+ent.String()+" (old values)")
		controller("AlterClientQuotas", "quota of "+ent.String()+": "+strings.Join(ops, ", "))
		p.any("DescribeClientQuotas", "quotas of "+ent.String()+" (until the change reads back)")
	default:
		return false, nil
	}
	return true, nil
}

// note adds a row that is not a request: something the statement does
// between its requests.
func (p *planner) note(text string) {
	p.rows = append(p.rows, result.Row{nil, "Note", nil, "kql", text})
}
