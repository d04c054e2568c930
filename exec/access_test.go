package exec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
	"github.com/kql-dev/kql/lang"
)

func bind(principal, host, op, perm, rtype, name, pattern string) kafka.ACLBinding {
	return kafka.ACLBinding{Principal: principal, Host: host, Operation: op, Permission: perm, ResourceType: rtype, ResourceName: name, PatternType: pattern}
}

// TestEvaluateAccessFollowsTheStandardAuthorizer: each rule of
// StandardAuthorizerData, one case each.
func TestEvaluateAccessFollowsTheStandardAuthorizer(t *testing.T) {
	alice := "User:alice"
	f, no := true, false
	known := brokerAuthz{broker: 1, superUsers: []string{"User:admin"}, allowIfNoACLs: &no}
	cases := []struct {
		name     string
		src      string
		bindings []kafka.ACLBinding
		authz    brokerAuthz
		answer   string
		reason   string // in the first row
		rows     int
	}{
		{"super user", "EXPLAIN ACCESS 'User:admin' READ ON TOPIC p", []kafka.ACLBinding{bind("User:admin", "*", "READ", "DENY", "TOPIC", "p", "LITERAL")},
			known, allowed, "super user (super.users on broker 1)", 1},
		{"literal allow", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p", []kafka.ACLBinding{bind(alice, "*", "READ", "ALLOW", "TOPIC", "p", "LITERAL")},
			known, allowed, "ALLOW READ; from every host", 1},
		{"allow of another topic does not apply", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p", []kafka.ACLBinding{bind(alice, "*", "READ", "ALLOW", "TOPIC", "q", "LITERAL")},
			known, denied, "the resource has no binding at all, and allow.everyone.if.no.acl.found is false on broker 1", 1},
		{"no binding, allow everyone", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p", nil,
			brokerAuthz{broker: 2, superUsers: []string{}, allowIfNoACLs: &f}, allowed, "allow.everyone.if.no.acl.found is true on broker 2", 1},
		{"bindings for others only", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p", []kafka.ACLBinding{bind("User:bob", "*", "READ", "ALLOW", "TOPIC", "p", "LITERAL")},
			brokerAuthz{broker: 2, superUsers: []string{}, allowIfNoACLs: &f}, denied, "no binding allows User:alice READ: the resource has 1 binding", 1},
		{"deny wins", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC payments", []kafka.ACLBinding{
			bind(alice, "*", "READ", "ALLOW", "TOPIC", "payments", "LITERAL"),
			bind("User:*", "*", "READ", "DENY", "TOPIC", "pay", "PREFIXED")},
			known, denied, "DENY READ; 'User:*' is every user; PREFIXED 'pay' starts 'payments'; from every host: a DENY wins over every ALLOW", 2},
		{"ALL allows", "EXPLAIN ACCESS 'User:alice' WRITE ON TOPIC p", []kafka.ACLBinding{bind(alice, "*", "ALL", "ALLOW", "TOPIC", "*", "LITERAL")},
			known, allowed, "ALLOW ALL covers WRITE; '*' is every topic", 1},
		{"ALL denies", "EXPLAIN ACCESS 'User:alice' DESCRIBE ON GROUP g", []kafka.ACLBinding{
			bind(alice, "*", "DESCRIBE", "ALLOW", "GROUP", "g", "LITERAL"), bind(alice, "*", "ALL", "DENY", "GROUP", "g", "LITERAL")},
			known, denied, "DENY ALL covers DESCRIBE", 2},
		{"read implies describe", "EXPLAIN ACCESS 'User:alice' DESCRIBE ON TOPIC p", []kafka.ACLBinding{bind(alice, "*", "READ", "ALLOW", "TOPIC", "p", "LITERAL")},
			known, allowed, "ALLOW READ implies DESCRIBE", 1},
		{"a deny of read does not deny describe", "EXPLAIN ACCESS 'User:alice' DESCRIBE ON TOPIC p", []kafka.ACLBinding{
			bind(alice, "*", "READ", "DENY", "TOPIC", "p", "LITERAL"), bind(alice, "*", "WRITE", "ALLOW", "TOPIC", "p", "LITERAL")},
			known, allowed, "ALLOW WRITE implies DESCRIBE", 1},
		{"describe does not imply read", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p", []kafka.ACLBinding{bind(alice, "*", "DESCRIBE", "ALLOW", "TOPIC", "p", "LITERAL")},
			known, denied, "no binding allows User:alice READ", 1},
		{"alter configs implies describe configs", "EXPLAIN ACCESS 'User:alice' DESCRIBE_CONFIGS ON CLUSTER", []kafka.ACLBinding{
			bind(alice, "*", "ALTER_CONFIGS", "ALLOW", "CLUSTER", "kafka-cluster", "LITERAL")},
			known, allowed, "ALLOW ALTER_CONFIGS implies DESCRIBE_CONFIGS", 1},
		{"a literal name that is a prefix is not a prefix", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC payments", []kafka.ACLBinding{
			bind(alice, "*", "READ", "ALLOW", "TOPIC", "pay", "LITERAL")},
			known, denied, "the resource has no binding at all", 1},
		{"host-specific bindings need HOST", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p", []kafka.ACLBinding{bind(alice, "10.0.0.5", "READ", "ALLOW", "TOPIC", "p", "LITERAL")},
			known, denied, "no binding allows", 1},
		{"host matches", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p HOST '10.0.0.5'", []kafka.ACLBinding{bind(alice, "10.0.0.5", "READ", "ALLOW", "TOPIC", "p", "LITERAL")},
			known, allowed, "from host 10.0.0.5", 1},
		{"other host", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p HOST '10.0.0.6'", []kafka.ACLBinding{bind(alice, "10.0.0.5", "READ", "ALLOW", "TOPIC", "p", "LITERAL")},
			known, denied, "from host 10.0.0.6", 1},
		{"transactional id prefix", "EXPLAIN ACCESS 'User:alice' WRITE ON TRANSACTIONAL ID 'tx-1'", []kafka.ACLBinding{
			bind(alice, "*", "WRITE", "ALLOW", "TRANSACTIONAL_ID", "tx-", "PREFIXED"), bind(alice, "*", "WRITE", "ALLOW", "TOPIC", "tx-1", "LITERAL")},
			known, allowed, "PREFIXED 'tx-' starts 'tx-1'", 1},
		{"super users unknown", "EXPLAIN ACCESS 'User:alice' READ ON TOPIC p", nil,
			brokerAuthz{broker: 3}, denied, "kql could not read it from broker 3; the default is false) (unless User:alice is a super user: broker 3 does not disclose super.users)", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := parse(t, tc.src).(*lang.ExplainAccess)
			rows, notes := evaluateAccess(st, tc.bindings, tc.authz)
			require.Len(t, rows, tc.rows)
			for _, r := range rows {
				require.Equal(t, tc.answer, r.answer)
			}
			require.Contains(t, rows[0].reason, tc.reason)
			if tc.name == "host-specific bindings need HOST" {
				require.Len(t, notes, 1)
				require.Contains(t, notes[0], "1 binding for this principal and resource apply only from specific hosts")
			}
			if tc.authz.superUsers == nil {
				require.Contains(t, strings.Join(notes, "\n"), "could not read super.users from broker 3")
			}
		})
	}
}

// TestExplainAccessOfIdempotentWriteNamesKIP679: the authorizer denies
// IDEMPOTENT_WRITE on the cluster without a binding, but the broker lets
// an idempotent producer with WRITE on any topic in: the answer says so.
func TestExplainAccessOfIdempotentWriteNamesKIP679(t *testing.T) {
	no := false
	known := brokerAuthz{broker: 1, superUsers: []string{}, allowIfNoACLs: &no}
	st := parse(t, "EXPLAIN ACCESS 'User:alice' IDEMPOTENT_WRITE ON CLUSTER").(*lang.ExplainAccess)
	rows, notes := evaluateAccess(st, nil, known)
	require.Equal(t, denied, rows[0].answer)
	require.Len(t, notes, 1)
	require.Contains(t, notes[0], "WRITE on any topic is enough")
	rows, notes = evaluateAccess(st, []kafka.ACLBinding{bind("User:alice", "*", "IDEMPOTENT_WRITE", "ALLOW", "CLUSTER", "kafka-cluster", "LITERAL")}, known)
	require.Equal(t, allowed, rows[0].answer)
	require.Empty(t, notes)
}

// TestExplainAccessReadsTheAuthorizerConfigFromOneBroker: the super users
// and the default come from the DescribeConfigs of one broker's own
// configs, sent to that broker.
func TestExplainAccessReadsTheAuthorizerConfigFromOneBroker(t *testing.T) {
	kafkatest.Each(t, func(t *testing.T, b kafkatest.Backend) {
		s, tr := session(t, b)
		topic := kafkatest.TopicName(t)
		who := "User:" + kafkatest.GroupName(t)
		mustRun(t, s, parse(t, "GRANT READ ON TOPIC "+lang.QuoteName(topic)+" TO '"+who+"'"))
		t.Cleanup(func() { run(t, s, parse(t, "REVOKE READ ON TOPIC "+lang.QuoteName(topic)+" FROM '"+who+"' EXECUTE")) })
		tr.reset()
		rows, _ := mustRun(t, s, parse(t, "EXPLAIN ACCESS '"+who+"' DESCRIBE ON TOPIC "+lang.QuoteName(topic)))
		require.Len(t, rows, 1)
		require.Equal(t, "ALLOWED", rows[0][0])
		require.Equal(t, "ALLOW READ implies DESCRIBE; from every host", rows[0][1])
		require.Equal(t, []any{who, "*", "READ", "ALLOW", "TOPIC", topic, "LITERAL"}, []any(rows[0][2:]))
		cfg := tr.count("DescribeConfigs")
		require.Len(t, cfg, 1, "one broker's configs")
		acl := tr.count(kafka.APIDescribeACLs)
		require.Equal(t, 1, sum(acl))
		for id := range cfg {
			require.Equal(t, 1, acl[id], "the configs of the broker whose bindings were read, from that broker")
		}
	})
}

// TestParseAuthzTellsUnknownFromEmpty: super.users as Kafka 4 lists it
// (sensitive, no value) is unknown, not "no super users".
func TestParseAuthzTellsUnknownFromEmpty(t *testing.T) {
	v := func(s string) *string { return &s }
	a := parseAuthz(2, []kafka.ConfigEntry{{Name: "super.users", Sensitive: true}})
	require.Nil(t, a.superUsers)
	require.ErrorContains(t, a.err, "reports it as sensitive")
	require.Nil(t, a.allowIfNoACLs)
	a = parseAuthz(2, []kafka.ConfigEntry{{Name: "super.users", Value: v("User:admin; User:ops")}, {Name: "allow.everyone.if.no.acl.found", Value: v("true")}})
	require.Equal(t, []string{"User:admin", "User:ops"}, a.superUsers)
	require.True(t, *a.allowIfNoACLs)
	a = parseAuthz(2, []kafka.ConfigEntry{{Name: "log.dirs", Value: v("/d")}})
	require.Nil(t, a.superUsers)
	require.ErrorContains(t, a.err, "does not list super.users")
}

// TestACLStatementsOnAClusterWithoutAnAuthorizer: a broker without an
// authorizer (no authorizer.class.name) answers DescribeAcls with
// SECURITY_DISABLED and allows every request: EXPLAIN ACCESS says so, as
// an answer, and SHOW ACLS's error says why there is nothing to list and
// what turns ACLs on.
func TestACLStatementsOnAClusterWithoutAnAuthorizer(t *testing.T) {
	f := newFake(t)
	f.ControlKey(int16(kmsg.DescribeACLs), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
		resp.ErrorCode = kerr.SecurityDisabled.Code
		resp.ErrorMessage = kmsg.StringPtr("No Authorizer is configured.")
		return resp, nil, true
	})
	rows, _ := mustRun(t, f.sess, parse(t, "EXPLAIN ACCESS 'User:alice' READ ON TOPIC payments"))
	require.Len(t, rows, 1)
	require.Equal(t, "ALLOWED", rows[0][0])
	require.Contains(t, rows[0][1], "has no authorizer")
	require.Contains(t, rows[0][1], "allows every request")

	_, _, err := run(t, f.sess, parse(t, "SHOW ACLS"))
	require.Error(t, err)
	require.Contains(t, err.Error(), "SECURITY_DISABLED")
	require.Contains(t, err.Error(), "no authorizer")
	require.Contains(t, err.Error(), "authorizer.class.name")
}
