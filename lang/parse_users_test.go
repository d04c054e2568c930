package lang

import (
	"errors"
	"strings"
	"testing"
)

func alice() QuotaEntity { return QuotaEntity{Parts: []QuotaPart{{Kind: QuotaUser, Name: "alice"}}} }

var userParseCases = []parseCase{
	{"SHOW USERS", &ShowUsers{}},
	{"show users where mechanism = 'SCRAM-SHA-256' order by user limit 5", &ShowUsers{Query: Query{
		Where:   bin(OpEq, col("mechanism"), bytesLit("SCRAM-SHA-256")),
		OrderBy: []OrderItem{{X: col("user")}}, Limit: i64(5)}}},
	{"CREATE USER alice", &CreateUser{User: "alice"}},
	{"create user 'alice@corp' mechanism scram-sha-256 iterations 8192", &CreateUser{User: "alice@corp", Mechanism: ScramSHA256, Iterations: 8192}},
	{"CREATE USER bob ITERATIONS 4096 MECHANISM SCRAM-SHA-512", &CreateUser{User: "bob", Mechanism: ScramSHA512, Iterations: 4096}},
	{"CREATE USER user", &CreateUser{User: "user"}},
	{"ALTER USER alice PASSWORD", &AlterUser{User: "alice"}},
	{"ALTER USER alice PASSWORD MECHANISM SCRAM-SHA-256 ITERATIONS 16384", &AlterUser{User: "alice", Mechanism: ScramSHA256, Iterations: 16384}},
	{"DROP USER alice", &DropUser{User: "alice"}},
	{"DROP USER alice MECHANISM SCRAM-SHA-512", &DropUser{User: "alice", Mechanism: ScramSHA512}},
	{"EXPLAIN CREATE USER alice", &Explain{Stmt: &CreateUser{User: "alice"}}},

	{"SHOW QUOTAS", &ShowQuotas{}},
	{"SHOW QUOTAS FOR USER alice", &ShowQuotas{For: ptrEntity(alice())}},
	{"SHOW QUOTAS FOR CLIENT reporting USER alice LIMIT 3", &ShowQuotas{For: &QuotaEntity{Parts: []QuotaPart{
		{Kind: QuotaUser, Name: "alice"}, {Kind: QuotaClient, Name: "reporting"}}}, Query: Query{Limit: i64(3)}}},
	{"SHOW QUOTAS FOR IP '10.0.0.1'", &ShowQuotas{For: &QuotaEntity{Parts: []QuotaPart{{Kind: QuotaIP, Name: "10.0.0.1"}}}}},
	{"SHOW QUOTAS FOR DEFAULT USER", &ShowQuotas{For: &QuotaEntity{Parts: []QuotaPart{{Kind: QuotaUser, Default: true}}}}},
	{"ALTER QUOTA FOR USER alice SET (producer_byte_rate = 1048576, request_percentage = 12.5)", &AlterQuota{Entity: alice(),
		Set: []QuotaValue{{"producer_byte_rate", 1048576}, {"request_percentage", 12.5}}}},
	{"ALTER QUOTA FOR USER alice CLIENT c1 UNSET (consumer_byte_rate)", &AlterQuota{Entity: QuotaEntity{Parts: []QuotaPart{
		{Kind: QuotaUser, Name: "alice"}, {Kind: QuotaClient, Name: "c1"}}}, Unset: []string{"consumer_byte_rate"}}},
	{"ALTER QUOTA FOR DEFAULT USER DEFAULT CLIENT SET (consumer_byte_rate = 2048) UNSET (PRODUCER_BYTE_RATE)", &AlterQuota{
		Entity: QuotaEntity{Parts: []QuotaPart{{Kind: QuotaUser, Default: true}, {Kind: QuotaClient, Default: true}}},
		Set:    []QuotaValue{{"consumer_byte_rate", 2048}}, Unset: []string{"producer_byte_rate"}}},
	{"ALTER QUOTA FOR IP '::1' SET (connection_creation_rate = 2147483647)", &AlterQuota{
		Entity: QuotaEntity{Parts: []QuotaPart{{Kind: QuotaIP, Name: "::1"}}}, Set: []QuotaValue{{"connection_creation_rate", 2147483647}}}},
	{"ALTER QUOTA FOR DEFAULT IP SET (connection_creation_rate = 10)", &AlterQuota{
		Entity: QuotaEntity{Parts: []QuotaPart{{Kind: QuotaIP, Default: true}}}, Set: []QuotaValue{{"connection_creation_rate", 10}}}},
	{"ALTER TOPIC orders SET (retention.ms = '1')", &AlterConfigs{Resource: ConfigResource{Kind: ResourceTopic, Topic: "orders"},
		Set: []TopicConfig{{"retention.ms", "1"}}}},
}

func ptrEntity(e QuotaEntity) *QuotaEntity { return &e }

func TestParseUsersAndQuotas(t *testing.T) { checkParses(t, userParseCases, true) }

func TestParseUsersAndQuotasErrors(t *testing.T) {
	cases := []errorCase{
		{"CREATE USER alice ITERATIONS 100", "1:30: ITERATIONS 100 is out of range: Kafka takes 4096 to 16384 SCRAM iterations"},
		{"CREATE USER alice ITERATIONS 20000", "1:30: ITERATIONS 20000 is out of range"},
		{"CREATE USER alice MECHANISM SCRAM-SHA-1", "1:29: unexpected SCRAM-SHA-1\nCREATE USER alice MECHANISM SCRAM-SHA-1\n                            ^^^^^^^^^^^\nexpected SCRAM-SHA-256 or SCRAM-SHA-512"},
		{"CREATE USER alice MECHANISM SCRAM-SHA-256 MECHANISM SCRAM-SHA-512", "1:43: MECHANISM given twice"},
		{"CREATE USER alice PASSWORD 'secret'", "1:19: unexpected PASSWORD after a complete CREATE USER statement"},
		{"ALTER USER alice PASSWORD 'secret'", "1:27: a password is never written in a statement\nALTER USER alice PASSWORD ********\n"},
		{"ALTER USER alice", "1:17: unexpected end of statement after alice\nALTER USER alice\n                ^\nexpected PASSWORD"},
		{"DROP USER alice ITERATIONS 4096", "1:17: unexpected ITERATIONS after a complete DROP USER statement"},
		{"CREATE USER ''", "1:13: a user name cannot be empty"},
		{"ALTER QUOTA FOR USER alice SET (producer_bytes_rate = 1)", "1:33: unknown quota key producer_bytes_rate\nALTER QUOTA FOR USER alice SET (producer_bytes_rate = 1)\n                                ^^^^^^^^^^^^^^^^^^^\nexpected one of producer_byte_rate, consumer_byte_rate, request_percentage or controller_mutation_rate\ndid you mean producer_byte_rate?"},
		{"ALTER QUOTA FOR USER alice SET (connection_creation_rate = 1)", "1:33: connection_creation_rate is a quota of IP addresses, not of users or client ids"},
		{"ALTER QUOTA FOR IP '1.2.3.4' SET (producer_byte_rate = 1)", "1:35: producer_byte_rate is a quota of users and client ids, not of IP addresses"},
		{"ALTER QUOTA FOR USER alice SET (producer_byte_rate = 1.5)", "1:54: producer_byte_rate takes a whole number, not 1.5"},
		{"ALTER QUOTA FOR USER alice SET (request_percentage = 1m)", "1:54: 1m is not a number"},
		// Kafka's controller refuses a quota of 0 or less, and one past its
		// type's range (INT for connection_creation_rate, LONG for the byte rates).
		{"ALTER QUOTA FOR USER alice SET (producer_byte_rate = 0)", "1:54: producer_byte_rate = 0 is out of range: Kafka takes a quota greater than 0"},
		{"ALTER QUOTA FOR USER alice SET (request_percentage = 0.0)", "1:54: request_percentage = 0.0 is out of range: Kafka takes a quota greater than 0"},
		{"ALTER QUOTA FOR IP '1.2.3.4' SET (connection_creation_rate = 2147483648)", "1:62: connection_creation_rate = 2147483648 is out of range: Kafka takes at most 2147483647"},
		{"ALTER QUOTA FOR USER alice SET (consumer_byte_rate = 99999999999999999999)", "1:54: consumer_byte_rate = 99999999999999999999 is out of range: Kafka takes at most 9223372036854775807"},
		{"ALTER QUOTA FOR USER alice SET (producer_byte_rate = 1) UNSET (producer_byte_rate)", "1:64: quota key producer_byte_rate is both SET and UNSET"},
		{"ALTER QUOTA FOR USER a USER b SET (producer_byte_rate = 1)", "1:24: USER given twice"},
		{"ALTER QUOTA FOR USER a IP '1.2.3.4' SET (producer_byte_rate = 1)", "1:24: an IP quota stands alone"},
		{"ALTER QUOTA FOR USER alice", "1:27: unexpected end of statement after alice"},
		{"ALTER QUOTA USER alice SET (producer_byte_rate = 1)", "1:13: unexpected USER\nALTER QUOTA USER alice SET (producer_byte_rate = 1)\n            ^^^^\nexpected FOR"},
		{"SHOW QUOTAS FOR alice", "1:17: unexpected alice\nSHOW QUOTAS FOR alice\n                ^^^^^\nexpected one of USER, CLIENT, IP or DEFAULT"},
		{"SHOW USERS WHERE password = 'x'", "1:18: unknown column password"},
	}
	checkErrors(t, cases)
}

// TestPasswordTypedIntoUserStatement: however a password is typed into
// CREATE or ALTER USER (the forms other SQL dialects use, unquoted, after
// an option, on a line of its own, with a quote inside it), the error
// never shows it and the shell is told to keep the statement out of its
// history.
func TestPasswordTypedIntoUserStatement(t *testing.T) {
	for _, src := range []string{
		"CREATE USER alice PASSWORD 'hunter2'",
		"CREATE USER alice 'hunter2'",
		"CREATE USER alice WITH PASSWORD 'hunter2'",
		"CREATE USER alice IDENTIFIED BY 'hunter2'",
		"CREATE USER alice IDENTIFIED BY hunter2",
		"CREATE USER alice PASSWORD hunter2",
		"CREATE USER alice MECHANSIM 'hunter2'",
		"CREATE USER alice PASSWORD\n'hunter2'",
		"CREATE USER alice PASSWORD 'it's-hunter2'",
		"ALTER USER alice PASSWORD 'hunter2'",
		"ALTER USER alice PASSWORD hunter2",
		"ALTER USER alice PASSWORD 'hunter2' MECHANISM SCRAM-SHA-256",
		"ALTER USER alice PASSWORD MECHANISM SCRAM-SHA-256 'hunter2'",
		"ALTER USER alice PASSWORD MECHANISM SCRAM-SHA-256 hunter2",
		"ALTER USER alice WITH PASSWORD 'hunter2'",
		"ALTER USER alice SET PASSWORD = 'hunter2'",
		"ALTER USER alice IDENTIFIED BY 'hunter2'",
		"EXPLAIN ALTER USER alice PASSWORD = hunter2",
		"ALTER USER alice PASSWORD\nhunter2",
	} {
		_, err := Parse(src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q): want a syntax error, got %v", src, err)
			continue
		}
		if strings.Contains(e.Error(), "hunter2") {
			t.Errorf("Parse(%q): the error shows the password:\n%s", src, e.Error())
		}
		if !e.HoldsSecret() {
			t.Errorf("Parse(%q): the shell would keep the statement in its history:\n%s", src, e.Error())
		}
	}
	// A mistake without anything that may be a password keeps its text.
	for _, src := range []string{"CREATE USER alice MECHANISM SCRAM-SHA-1", "ALTER USER alice", "CREATE USER alice ITERATIONS 100"} {
		_, err := Parse(src)
		var e *Error
		if !errors.As(err, &e) || e.HoldsSecret() {
			t.Errorf("Parse(%q): %v (secret: %v)", src, err, e != nil && e.HoldsSecret())
		}
	}
}
