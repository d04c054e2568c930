package lang

import (
	"testing"
)

var aclParseCases = []parseCase{
	{"SHOW ACLS", &ShowACLs{}},
	{"show acls on topic payments", &ShowACLs{On: &ACLResource{Kind: ACLTopic, Name: "payments"}}},
	{"SHOW ACLS ON GROUP billing FOR 'User:alice' WHERE operation = 'READ' LIMIT 5", &ShowACLs{
		On: &ACLResource{Kind: ACLGroup, Name: "billing"}, Principal: str("User:alice"),
		Query: Query{Where: &Binary{Op: OpEq, L: &Column{Name: "operation"}, R: &BytesLit{V: []byte("READ")}}, Limit: i64(5)}}},
	{"SHOW ACLS ON CLUSTER", &ShowACLs{On: &ACLResource{Kind: ACLCluster, Name: ACLClusterName}}},
	{"SHOW ACLS ON TRANSACTIONAL ID 'tx-1'", &ShowACLs{On: &ACLResource{Kind: ACLTransactionalID, Name: "tx-1"}}},
	{"SHOW ACLS FOR 'User:*'", &ShowACLs{Principal: str("User:*")}},

	{"GRANT READ, DESCRIBE ON TOPIC payments TO 'User:alice'", &Grant{Operations: []string{"READ", "DESCRIBE"},
		Resource: ACLResource{Kind: ACLTopic, Name: "payments"}, Principal: "User:alice"}},
	{"grant write on topic pay prefixed to 'User:bob' host '10.0.0.5'", &Grant{Operations: []string{"WRITE"},
		Resource: ACLResource{Kind: ACLTopic, Name: "pay", Prefixed: true}, Principal: "User:bob", Host: str("10.0.0.5")}},
	{"GRANT ALL ON TOPIC * TO 'User:*'", &Grant{Operations: []string{"ALL"},
		Resource: ACLResource{Kind: ACLTopic, Name: "*"}, Principal: "User:*"}},
	{"GRANT READ ON TOPIC '*' TO 'User:a'", &Grant{Operations: []string{"READ"},
		Resource: ACLResource{Kind: ACLTopic, Name: "*"}, Principal: "User:a"}},
	{"GRANT IDEMPOTENT_WRITE, CLUSTER_ACTION ON CLUSTER TO 'User:a'", &Grant{Operations: []string{"IDEMPOTENT_WRITE", "CLUSTER_ACTION"},
		Resource: ACLResource{Kind: ACLCluster, Name: ACLClusterName}, Principal: "User:a"}},
	{"GRANT WRITE, DESCRIBE ON TRANSACTIONAL ID tx PREFIXED TO 'User:a'", &Grant{Operations: []string{"WRITE", "DESCRIBE"},
		Resource: ACLResource{Kind: ACLTransactionalID, Name: "tx", Prefixed: true}, Principal: "User:a"}},
	{"GRANT READ ON TOPIC prefixed PREFIXED TO 'User:a'", &Grant{Operations: []string{"READ"},
		Resource: ACLResource{Kind: ACLTopic, Name: "prefixed", Prefixed: true}, Principal: "User:a"}},
	{"DENY READ ON GROUP g TO 'User:bob'", &Grant{Deny: true, Operations: []string{"READ"},
		Resource: ACLResource{Kind: ACLGroup, Name: "g"}, Principal: "User:bob"}},

	{"REVOKE READ ON TOPIC payments FROM 'User:alice'", &Revoke{Operations: []string{"READ"},
		Resource: ACLResource{Kind: ACLTopic, Name: "payments"}, Principal: "User:alice"}},
	{"REVOKE ALL, READ ON TOPIC pay PREFIXED FROM 'User:alice' HOST '*' EXECUTE", &Revoke{Operations: []string{"ALL", "READ"},
		Resource: ACLResource{Kind: ACLTopic, Name: "pay", Prefixed: true}, Principal: "User:alice", Host: str("*"), Execute: true}},

	{"EXPLAIN ACCESS 'User:alice' READ ON TOPIC payments", &ExplainAccess{Principal: "User:alice", Operation: "READ",
		Resource: ACLResource{Kind: ACLTopic, Name: "payments"}}},
	{"explain access 'User:alice' describe on group g host '127.0.0.1'", &ExplainAccess{Principal: "User:alice", Operation: "DESCRIBE",
		Resource: ACLResource{Kind: ACLGroup, Name: "g"}, Host: str("127.0.0.1")}},
	{"EXPLAIN GRANT READ ON TOPIC t TO 'User:a'", &Explain{Stmt: &Grant{Operations: []string{"READ"},
		Resource: ACLResource{Kind: ACLTopic, Name: "t"}, Principal: "User:a"}}},
	{"EXPLAIN REVOKE READ ON TOPIC t FROM 'User:a' EXECUTE", &Explain{Stmt: &Revoke{Operations: []string{"READ"},
		Resource: ACLResource{Kind: ACLTopic, Name: "t"}, Principal: "User:a", Execute: true}}},
}

func TestParseACL(t *testing.T) { checkParses(t, aclParseCases, true) }

func TestParseACLErrors(t *testing.T) {
	cases := []errorCase{
		{"GRANT REDA ON TOPIC t TO 'User:a'", "1:7: unexpected REDA\nGRANT REDA ON TOPIC t TO 'User:a'\n      ^^^^\nexpected one of ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS or TWO_PHASE_COMMIT\ndid you mean READ?"},
		{"GRANT READ ON TOPCI t TO 'User:a'", "1:15: unexpected TOPCI"},
		{"GRANT READ, READ ON TOPIC t TO 'User:a'", "1:13: operation READ listed twice"},
		{"GRANT READ ON TOPIC t TO alice", "1:26: unexpected alice"},
		{"GRANT READ ON TOPIC t TO 'alice'", "1:26: 'alice' is not a principal"},
		{"GRANT READ ON TOPIC t TO 'User:'", "1:26: 'User:' is not a principal"},
		{"GRANT READ ON CLUSTER PREFIXED TO 'User:a'", "1:23: the cluster is one resource"},
		{"GRANT READ ON TOPIC * PREFIXED TO 'User:a'", "1:23: '*' PREFIXED"},
		{"GRANT READ ON TOPIC t TO 'User:a' HOST ''", "1:40: a host cannot be empty"},
		{"GRANT READ ON TOPIC t", "1:22: unexpected end of statement after t"},
		{"SHOW ACLS ON TOPIC t PREFIXED", "1:22: SHOW ACLS takes no PREFIXED"},
		{"SHOW ACLS WHERE princpal = 'x'", "1:17:"},
		{"ACCESS 'User:a' READ ON TOPIC t", "1:1: ACCESS is asked with EXPLAIN"},
		{"EXPLAIN ACCESS 'User:a' ALL ON TOPIC t", "1:25: EXPLAIN ACCESS asks about one operation"},
		{"EXPLAIN ACCESS 'User:a' READ ON TOPIC *", "1:39: EXPLAIN ACCESS asks about one resource, not the wildcard"},
		{"EXPLAIN ACCESS 'User:a' READ ON TOPIC t PREFIXED", "1:41: EXPLAIN ACCESS takes no PREFIXED"},
		{"REVOKE READ ON TOPIC t FROM 'User:a' EXECUTE HOST 'h'", "1:46: unexpected HOST after a complete REVOKE statement"},
	}
	checkErrors(t, cases)
}
