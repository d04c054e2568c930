package exec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// EXPLAIN ACCESS evaluates the rules of Kafka's StandardAuthorizer
// (org.apache.kafka.metadata.authorizer.StandardAuthorizerData, the KRaft
// authorizer) over the cluster's bindings:
//
//   - a super user (super.users) may do anything;
//   - the bindings that apply are those of the resource's LITERAL name,
//     the LITERAL '*' of its type and every PREFIXED pattern that starts
//     the name, for the principal or 'User:*', from host '*' or the
//     client's host;
//   - a DENY of the operation (or of ALL) wins over everything;
//   - otherwise an ALLOW of the operation, of ALL, or of an operation
//     that implies it allows: READ, WRITE, DELETE and ALTER imply
//     DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS (ALLOW only: a DENY
//     of READ does not deny DESCRIBE);
//   - otherwise it is denied, unless the resource has no binding at all
//     and allow.everyone.if.no.acl.found is true.

var accessCols = append([]result.Column{col("answer", result.String), col("reason", result.String)}, aclBindingCols...)

const (
	allowed = "ALLOWED"
	denied  = "DENIED"
)

// impliedBy are the operations whose ALLOW also allows the key.
var impliedBy = map[string][]string{
	"DESCRIBE":         {"DESCRIBE", "READ", "WRITE", "DELETE", "ALTER"},
	"DESCRIBE_CONFIGS": {"DESCRIBE_CONFIGS", "ALTER_CONFIGS"},
}

// brokerAuthz is what kql could read of the authorizer's settings from one
// broker's own configs; a nil field was not readable.
type brokerAuthz struct {
	broker        int32
	superUsers    []string
	allowIfNoACLs *bool
	err           error // why they could not be read
}

// accessRow is one row of the answer.
type accessRow struct {
	answer, reason string
	binding        *kafka.ACLBinding
}

// evaluateAccess is the authorizer's decision for st over bindings (all
// bindings of the resource's type).
func evaluateAccess(st *lang.ExplainAccess, bindings []kafka.ACLBinding, authz brokerAuthz) (rows []accessRow, notes []string) {
	if slices.Contains(authz.superUsers, st.Principal) {
		return []accessRow{{allowed, fmt.Sprintf("%s is a super user (super.users on broker %d): the authorizer allows it everything, whatever the bindings", st.Principal, authz.broker), nil}}, nil
	}
	if st.Resource.Kind == lang.ACLCluster && st.Operation == "IDEMPOTENT_WRITE" {
		// The authorizer's answer, but not the broker's last word: since
		// Kafka 3.0 (KIP-679) InitProducerId without a transactional id is
		// also allowed to a principal with WRITE on any topic.
		defer func() {
			if len(rows) > 0 && rows[0].answer == denied {
				notes = append(notes, fmt.Sprintf("notice: an idempotent producer does not need IDEMPOTENT_WRITE on the cluster since Kafka 3.0 (KIP-679): WRITE on any topic is enough; ask EXPLAIN ACCESS '%s' WRITE ON TOPIC t for the topics it writes", st.Principal))
			}
		}()
	}
	if authz.superUsers == nil {
		// Only a denial depends on it: a super user is allowed everything.
		defer func() {
			if len(rows) > 0 && rows[0].answer == denied {
				rows[0].reason += fmt.Sprintf(" (unless %s is a super user: broker %d does not disclose super.users)", st.Principal, authz.broker)
				notes = append(notes, fmt.Sprintf("notice: kql could not read super.users from broker %d (%v): the answer assumes %s is not a super user", authz.broker, authz.err, st.Principal))
			}
		}()
	}
	var deny, allow []accessRow
	onResource, otherHosts := 0, 0
	for _, b := range bindings {
		how := aclMatch(b, st.Resource)
		if how == "" {
			continue
		}
		onResource++
		if b.Principal != st.Principal && b.Principal != "User:*" {
			continue
		}
		if b.Host != "*" && (st.Host == nil || b.Host != *st.Host) {
			if st.Host == nil {
				otherHosts++
			}
			continue
		}
		opWhy := ""
		switch {
		case b.Operation == "ALL":
			opWhy = "ALL covers " + st.Operation
		case b.Operation == st.Operation:
			opWhy = st.Operation
		case b.Permission == "ALLOW" && slices.Contains(impliedBy[st.Operation], b.Operation):
			opWhy = b.Operation + " implies " + st.Operation
		default:
			continue
		}
		why := []string{b.Permission + " " + opWhy}
		if b.Principal == "User:*" {
			why = append(why, "'User:*' is every user")
		}
		switch how {
		case matchWildcard:
			why = append(why, fmt.Sprintf("'*' is every %s", strings.ToLower(b.ResourceType)))
		case matchPrefixed:
			why = append(why, fmt.Sprintf("PREFIXED '%s' starts '%s'", b.ResourceName, st.Resource.Name))
		}
		if b.Host == "*" {
			why = append(why, "from every host")
		} else {
			why = append(why, "from host "+b.Host)
		}
		r := accessRow{binding: &b, reason: strings.Join(why, "; ")}
		if b.Permission == "DENY" {
			deny = append(deny, r)
		} else {
			allow = append(allow, r)
		}
	}
	if otherHosts > 0 {
		notes = append(notes, fmt.Sprintf("notice: %s for this principal and resource apply only from specific hosts and were left out; add HOST 'ip' to ask for a client on that host", countBindings(otherHosts)))
	}
	switch {
	case len(deny) > 0:
		for i := range deny {
			deny[i].answer = denied
			deny[i].reason += ": a DENY wins over every ALLOW"
		}
		for i := range allow {
			allow[i].answer = denied
			allow[i].reason += ": overruled by the DENY"
		}
		return append(deny, allow...), notes
	case len(allow) > 0:
		for i := range allow {
			allow[i].answer = allowed
		}
		return allow, notes
	case onResource > 0:
		return []accessRow{{denied, fmt.Sprintf("no binding allows %s %s: the resource has %s, none of them for this principal and operation%s",
			st.Principal, st.Operation, countBindings(onResource), hostText(st.Host)), nil}}, notes
	}
	switch {
	case authz.allowIfNoACLs != nil && *authz.allowIfNoACLs:
		return []accessRow{{allowed, fmt.Sprintf("the resource has no binding at all, and allow.everyone.if.no.acl.found is true on broker %d", authz.broker), nil}}, notes
	case authz.allowIfNoACLs != nil:
		return []accessRow{{denied, fmt.Sprintf("the resource has no binding at all, and allow.everyone.if.no.acl.found is false on broker %d", authz.broker), nil}}, notes
	}
	return []accessRow{{denied, fmt.Sprintf("the resource has no binding at all: denied unless allow.everyone.if.no.acl.found is true (kql could not read it from broker %d; the default is false)", authz.broker), nil}}, notes
}

func hostText(h *string) string {
	if h == nil {
		return ""
	}
	return " from host " + *h
}

// readAuthz reads super.users and allow.everyone.if.no.acl.found from one
// broker's own configs (only that broker answers for them).
func (s *Session) readAuthz(ctx context.Context, broker int32) brokerAuthz {
	entries, err := s.cl.DescribeConfigs(ctx, kafka.ConfigResource{Kind: kafka.BrokerResource, Broker: broker})
	if err != nil {
		return brokerAuthz{broker: broker, err: err}
	}
	return parseAuthz(broker, entries)
}

// parseAuthz picks the authorizer's settings out of a broker's configs.
// Kafka 4 lists super.users as sensitive, without its value (the broker's
// config definitions do not know the authorizer's keys, and an unknown key
// is treated as a secret), and does not list
// allow.everyone.if.no.acl.found at all: then they are unknown, not empty.
func parseAuthz(broker int32, entries []kafka.ConfigEntry) brokerAuthz {
	a := brokerAuthz{broker: broker, err: fmt.Errorf("the broker does not list super.users")}
	for _, e := range entries {
		switch {
		case e.Name == "super.users" && e.Value != nil && !e.Sensitive:
			a.superUsers, a.err = []string{}, nil
			for _, u := range strings.Split(*e.Value, ";") {
				if u = strings.TrimSpace(u); u != "" {
					a.superUsers = append(a.superUsers, u)
				}
			}
		case e.Name == "super.users":
			a.err = fmt.Errorf("super.users is set, but the broker reports it as sensitive and does not send its value")
		case e.Name == "allow.everyone.if.no.acl.found" && e.Value != nil && !e.Sensitive:
			v := strings.EqualFold(*e.Value, "true")
			a.allowIfNoACLs = &v
		}
	}
	return a
}

func (s *Session) explainAccess(ctx context.Context, st *lang.ExplainAccess) (result.Result, error) {
	bindings, by, err := s.cl.DescribeACLs(ctx, resourceFilter(&st.Resource, nil))
	if kafka.IsSecurityDisabled(err) {
		// No authorizer: the broker allows every request, which is the answer.
		who := fmt.Sprintf("broker %d", by)
		var ae *kafka.ACLError
		if errors.As(err, &ae) {
			who = fmt.Sprintf("broker %d (%s)", ae.Broker, ae.Addr)
			if ae.Broker < 0 { // a bootstrap seed
				who = "the broker at " + ae.Addr
			}
		}
		reason := who + " has no authorizer (DescribeAcls answered SECURITY_DISABLED: authorizer.class.name is not set): it allows every request of every principal"
		return result.NewSlice(accessCols, []result.Row{{allowed, reason, nil, nil, nil, nil, nil, nil, nil}}), nil
	}
	if err != nil {
		return nil, err
	}
	if by < 0 { // answered by a bootstrap seed: ask a broker by id for its configs
		if m, err := s.cl.Metadata(ctx, []string{}); err == nil && len(m.Brokers) > 0 {
			by = m.AnsweredBy
		}
	}
	rows, notes := evaluateAccess(st, bindings, s.readAuthz(ctx, by))
	out := make([]result.Row, len(rows))
	for i, r := range rows {
		row := result.Row{r.answer, r.reason, nil, nil, nil, nil, nil, nil, nil}
		if b := r.binding; b != nil {
			copy(row[2:], result.Row{b.Principal, b.Host, b.Operation, b.Permission, b.ResourceType, b.ResourceName, b.PatternType})
		}
		out[i] = row
	}
	res := result.NewSlice(accessCols, out)
	res.Notes = notes
	return res, nil
}
