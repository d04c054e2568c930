package lang

import (
	"sort"
	"strings"
)

// keywordOrder lists every keyword in the order error messages list them:
// statements first, then each statement's words in grammar order.
var keywordOrder = []string{
	"SHOW", "DESCRIBE", "DESC", "CONSUME", "SELECT", "PRODUCE", "CREATE", "DROP", "ALTER", "RESET", "DELETE", "ABORT", "EXPLAIN",
	"TOPICS", "GROUPS", "CONSUMERS", "BROKERS", "CLUSTER", "TOPIC", "GROUP", "LIKE",
	"FROM", "NEWEST", "LATEST", "END", "OLDEST", "EARLIEST", "BEGINNING", "START",
	"OFFSET", "TIMESTAMP", "TIME", "TAIL", "ANCHOR", "AGO",
	"INTO", "KEY", "VALUE", "PAYLOAD", "SCHEMA", "VERSION", "ID", "MESSAGE", "PROTOBUF", "AVRO",
	"PARTITION", "PARTITIONS", "FOR", "WHERE", "ORDER", "BY", "LIMIT", "ALL", "SKIP", "FOLLOW", "HEADER", "NULL",
	"REPLICATION", "WITH", "IF", "EXISTS",
	"OF", "ASC", "AS",
	"AND", "OR", "NOT", "IS", "IN", "ILIKE", "BETWEEN", "DISTINCT", "TRUE", "FALSE",
	"CONFIGS", "BROKER", "SET", "UNSET",
	"TO", "SHIFT", "RECORDS", "BEFORE", "EXECUTE",
	"SUBJECTS", "SCHEMAS", "SUBJECT",
	// access control (ast_acl.go); GRANT, DENY and REVOKE start statements
	"GRANT", "DENY", "REVOKE", "ACCESS", "ACLS", "ON", "TRANSACTIONAL", "PREFIXED", "HOST",
	"READ", "WRITE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE",
	"CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT",
	"USERS", "USER", "PASSWORD", "MECHANISM", "SCRAM-SHA-256", "SCRAM-SHA-512", "ITERATIONS",
	"QUOTAS", "QUOTA", "CLIENT", "IP", "DEFAULT",
	"SHARE",
	"TRANSACTIONS", "TRANSACTION", "HANGING", "OLDER", "THAN", "PRODUCER", "EPOCH",
	"INSERT", "FILE", "STDIN", "FORMAT", "KEEP", "NOW", "DELIMITER",
	"CANCEL", "ELECT", "LOG", "DIRS", "REASSIGNMENTS", "QUORUM", "FEATURES", "REPLICAS", "REASSIGNMENT", "LEADERS", "PREFERRED", "UNCLEAN",
}

// aliasOf maps an alias to the keyword it stands for. Expected-token lists
// leave an alias out when its keyword is also expected, so they read
// "NEWEST, OLDEST" rather than every spelling.
var aliasOf = map[string]string{
	"DESC":       "DESCRIBE",
	"SELECT":     "CONSUME",
	"CONSUMERS":  "GROUPS",
	"LATEST":     "NEWEST",
	"END":        "NEWEST",
	"EARLIEST":   "OLDEST",
	"BEGINNING":  "OLDEST",
	"START":      "OLDEST",
	"TIME":       "TIMESTAMP",
	"PARTITIONS": "PARTITION",
	"OFFSET":     "SKIP", // bare OFFSET n in CONSUME; after FROM, OFFSET is itself
	"PAYLOAD":    "VALUE",
}

var keywordRank = func() map[string]int {
	m := make(map[string]int, len(keywordOrder))
	for i, k := range keywordOrder {
		m[k] = i
	}
	return m
}()

func isKeyword(word string) bool {
	_, ok := keywordRank[strings.ToUpper(word)]
	return ok
}

// Keywords returns every keyword, upper-case and sorted, for Tab completion.
func Keywords() []string {
	out := append([]string(nil), keywordOrder...)
	sort.Strings(out)
	return out
}
