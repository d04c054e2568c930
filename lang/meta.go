package lang

// metaColumns are the result columns of each SHOW and DESCRIBE, in order:
// what their WHERE and ORDER BY may name. exec's results have exactly these
// columns (exec tests compare them), so a misspelt column is a syntax error
// that kql --check finds without a cluster.
var metaColumns = map[string][]string{
	"SHOW TOPICS":     {"topic", "partitions", "replication_factor", "internal", "under_replicated", "offline", "size_bytes", "replicas_size_bytes", "records_last_minute", "last_write"},
	"SHOW BROKERS":    {"node_id", "host", "port", "rack"},
	"SHOW CLUSTER":    {"property", "value"},
	"SHOW GROUPS":     {"group", "state", "protocol_type", "coordinator", "members", "topics", "lag", "max_lag_ms"},
	"SHOW PARTITIONS": {"topic", "partition", "leader", "replicas", "in_sync_replicas", "offline", "under_replicated", "earliest_offset", "latest_offset", "messages", "internal", "size_bytes", "replicas_size_bytes", "records_last_minute", "last_write"},
	"DESCRIBE TOPIC":  {"partition", "leader", "replicas", "in_sync_replicas", "earliest_offset", "latest_offset", "messages", "lso", "lso_lag"},
	"SHOW CONFIGS":    {"name", "value", "source", "sensitive", "read_only"},
	"DESCRIBE GROUP":  {"topic", "partition", "committed_offset", "end_offset", "lag", "member_id", "client_id", "host", "lag_ms"},

	"SHOW SHARE GROUPS":    {"group", "state", "coordinator", "members", "topics", "lag"},
	"DESCRIBE SHARE GROUP": {"topic", "partition", "start_offset", "end_offset", "lag", "members", "member_ids", "client_ids"},

	"SHOW SUBJECTS":    {"subject", "type", "latest_version", "latest_id", "compatibility"},
	"DESCRIBE SUBJECT": {"version", "id", "type", "schema", "references"},
	"SHOW SCHEMAS":     {"side", "subject", "latest_version", "latest_id", "type"},

	"SHOW ACLS":                 {"principal", "host", "operation", "permission", "resource_type", "resource_name", "pattern_type", "matched_by"},
	"SHOW USERS":                {"user", "mechanism", "iterations"},
	"SHOW QUOTAS":               {"user", "client_id", "ip", "key", "value"},
	"SHOW TRANSACTIONS":         {"transactional_id", "producer_id", "producer_epoch", "state", "timeout_ms", "coordinator"},
	"DESCRIBE TRANSACTION":      {"transactional_id", "coordinator", "producer_id", "producer_epoch", "state", "timeout_ms", "started", "topic", "partition", "last_update", "start_offset"},
	"SHOW HANGING TRANSACTIONS": {"topic", "partition", "producer_id", "producer_epoch", "coordinator_epoch", "start_offset", "last_update", "minutes", "transactional_id", "reason"},
	"SHOW LOG DIRS":             {"broker", "dir", "total_bytes", "usable_bytes", "error"},
	"SHOW REASSIGNMENTS":        {"topic", "partition", "replicas", "adding", "removing"},
	"SHOW QUORUM":               {"node", "role", "log_end_offset", "lag", "last_fetch", "last_caught_up"},
	"SHOW FEATURES":             {"feature", "finalized_version", "supported_min", "supported_max"},
}

// MetaColumns returns the column names of a SHOW or DESCRIBE statement's
// result (what its WHERE and ORDER BY may name), or nil for other statements.
func MetaColumns(s Statement) []string {
	return metaColumns[metaName(s)]
}

func metaName(s Statement) string {
	switch s.(type) {
	case *ShowTopics:
		return "SHOW TOPICS"
	case *ShowBrokers:
		return "SHOW BROKERS"
	case *ShowCluster:
		return "SHOW CLUSTER"
	case *ShowGroups:
		return "SHOW GROUPS"
	case *ShowPartitions:
		return "SHOW PARTITIONS"
	case *ShowConfigs:
		return "SHOW CONFIGS"
	case *DescribeTopic:
		return "DESCRIBE TOPIC"
	case *DescribeGroup:
		return "DESCRIBE GROUP"
	case *ShowSubjects:
		return "SHOW SUBJECTS"
	case *DescribeSubject:
		return "DESCRIBE SUBJECT"
	case *ShowSchemas:
		return "SHOW SCHEMAS"
	case *ShowACLs:
		return "SHOW ACLS"
	case *ShowUsers:
		return "SHOW USERS"
	case *ShowQuotas:
		return "SHOW QUOTAS"
	case *ShowShareGroups:
		return "SHOW SHARE GROUPS"
	case *DescribeShareGroup:
		return "DESCRIBE SHARE GROUP"
	case *ShowTransactions:
		return "SHOW TRANSACTIONS"
	case *DescribeTransaction:
		return "DESCRIBE TRANSACTION"
	case *ShowHangingTransactions:
		return "SHOW HANGING TRANSACTIONS"
	case *ShowLogDirs:
		return "SHOW LOG DIRS"
	case *ShowReassignments:
		return "SHOW REASSIGNMENTS"
	case *ShowQuorum:
		return "SHOW QUORUM"
	case *ShowFeatures:
		return "SHOW FEATURES"
	}
	return ""
}
