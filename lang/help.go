package lang

// HelpEntry describes one statement for the shell's \help.
type HelpEntry struct {
	Name    string // SHOW TOPICS
	Syntax  string // SHOW TOPICS [LIKE 'glob']
	Example string // a statement that parses
}

// metaSuffix is what every SHOW and DESCRIBE takes after its own clauses.
const metaSuffix = " [WHERE expr] [ORDER BY expr [ASC|DESC], ...] [LIMIT n]"

var statementHelp = []HelpEntry{
	{"SHOW TOPICS", "SHOW TOPICS [LIKE 'glob']" + metaSuffix + "\n  glob: * or % any run, ? or _ one character" +
		"\n  records_last_minute (offsets written since now-60s, by record timestamp), last_write (the newest record's timestamp)",
		"SHOW TOPICS LIKE 'orders*' WHERE partitions > 3"},
	{"SHOW GROUPS", "SHOW GROUPS [LIKE 'glob']" + metaSuffix + "  (alias SHOW CONSUMERS)\n  columns: group, state, protocol_type, coordinator, members, topics, lag,\n  max_lag_ms (the largest lag_ms of its partitions: how far behind in time)",
		"SHOW GROUPS WHERE lag > 1000 ORDER BY lag DESC LIMIT 10"},
	{"SHOW PARTITIONS", "SHOW PARTITIONS [OF topic] [LIKE 'glob']" + metaSuffix +
		"\n  columns: topic, partition, leader, replicas, in_sync_replicas, offline, under_replicated, earliest_offset, latest_offset, messages, internal,\n  size_bytes (the leader replica's), replicas_size_bytes (all replicas'),\n  records_last_minute, last_write",
		"SHOW PARTITIONS WHERE in_sync_replicas < replicas"},
	{"SHOW BROKERS", "SHOW BROKERS" + metaSuffix, "SHOW BROKERS"},
	{"SHOW CLUSTER", "SHOW CLUSTER" + metaSuffix, "SHOW CLUSTER"},
	{"DESCRIBE TOPIC", "DESCRIBE TOPIC name" + metaSuffix + "  (alias DESC)", "DESCRIBE TOPIC orders"},
	{"DESCRIBE GROUP", "DESCRIBE GROUP name" + metaSuffix + "  (alias DESC)" +
		"\n  lag_ms: now minus the timestamp of the first record not consumed (the one at the committed offset)", "DESC GROUP billing"},
	{"CONSUME", "CONSUME [FROM] name {clause}  |  SELECT * FROM name {clause}  |  SELECT expr [AS name], ... FROM name {clause}\n" +
		"  clause := FROM start | PARTITION n | PARTITION (n, ...) | PARTITION FOR KEY 'k' | WHERE expr\n" +
		"          | GROUP BY expr, ... | ORDER BY expr [ASC|DESC], ... | LIMIT n | LIMIT ALL | SKIP n | FOLLOW\n" +
		"          | KEY AS l | VALUE AS l     l := PROTOBUF 'message' | AVRO 'file.avsc': decode with a local\n" +
		"            schema (--proto-path, --proto-descriptor-set, .avsc), over \\set schema.TOPIC.value and kql.schema.*\n" +
		"  start := NEWEST | OLDEST | OFFSET n | TIMESTAMP time | duration AGO | TAIL (p:o, ...) | ANCHOR (p:o, ...)\n" +
		"  expr: columns partition, offset, timestamp, key, value, headers, key_schema_id, value_schema_id;\n" +
		"        JSON paths value.a.b, value.items[0];\n" +
		"        = != < <= > >= LIKE ILIKE ~ !~ IN BETWEEN IS NULL AND OR NOT + - * / %;\n" +
		"        length lower upper coalesce header; count min max sum avg\n" +
		"  clauses in any order, each at most once",
		"SELECT key, value.total FROM orders FROM 15m AGO WHERE value.total > 100 LIMIT 20"},
	{"PRODUCE", "PRODUCE [INTO] name [KEY v] [VALUE v] [KEY SCHEMA s | KEY AS l] [VALUE SCHEMA s | VALUE AS l] [PARTITION n] [HEADER k v ...]\n" +
		"  v := 'text' | x'hex' | NULL; at least one KEY or VALUE; HEADER may repeat\n" +
		"  s := ('subject' [VERSION n | ID n] | ID n) [MESSAGE name]: the KEY or VALUE is JSON text, encoded\n" +
		"       in the Confluent wire format with that registered schema (without VERSION or ID, the\n" +
		"       subject's latest); MESSAGE: the Protobuf message to write (a nested one, or one of several\n" +
		"       the text fits);\n" +
		"       needs a schema registry. For example:\n" +
		"       PRODUCE INTO payments KEY 'k1' VALUE '{\"id\": 1, \"amount\": 9.5}' VALUE SCHEMA 'payments-value'\n" +
		"  l := PROTOBUF 'message' | AVRO 'file.avsc': the JSON text in the raw encoding of a local schema\n" +
		"       (no registry, no wire-format header), e.g. VALUE '{\"id\": 1}' VALUE AS PROTOBUF 'acme.Order'",
		"PRODUCE INTO orders KEY 'o-1' VALUE '{\"total\": 42}' HEADER source 'kql'"},
	{"PRODUCE FROM", "PRODUCE [INTO] name FROM FILE 'path' | FROM STDIN {option}\n" +
		"  option := FORMAT jsonl|json|csv|tsv|lines | KEEP PARTITION | PARTITION BY KEY | KEEP TIMESTAMP | TIMESTAMP NOW\n" +
		"          | KEY DELIMITER 'd' (lines) | KEY SCHEMA s | VALUE SCHEMA s | KEY AS|VALUE AS AVRO|PROTOBUF '...'\n" +
		"  reads what --format jsonl|json|csv|tsv writes; a file is checked whole before anything is written;\n" +
		"  json reads arrays one after another (one per statement, as --format json writes them); STDIN only with -e or -f,\n" +
		"  once a run; STDIN and a named pipe are read once, written in transactions (a failure names the last committed\n" +
		"  line and how to feed the rest)",
		"PRODUCE INTO orders_copy FROM FILE 'orders.jsonl' KEEP PARTITION"},
	{"INSERT", "INSERT INTO name | TOPIC expr {option} SELECT ... FROM src {clause} [EXECUTE]\n" +
		"  option := KEEP PARTITION | PARTITION BY KEY | KEEP TIMESTAMP | TIMESTAMP NOW\n" +
		"  the SELECT list maps by name to key, value, headers, timestamp, partition; SELECT * copies key, value, headers, timestamp;\n" +
		"  KEEP PARTITION and KEEP TIMESTAMP take the source record's without a column, TIMESTAMP NOW the time of writing;\n" +
		"  without LIMIT the whole range; without EXECUTE a dry run: per destination partition records, bytes, first and last source\n" +
		"  partition:offset; EXECUTE writes in transactions, and a failure prints the FROM ANCHOR statement that copies the rest\n" +
		"  (with a WHERE ending each source partition where the original would have: at the ends its read captured, or for\n" +
		"  INSERT INTO TOPIC the last offset its check saw; past what SKIP left out; LIMIT lowered by what was committed)",
		"INSERT INTO TOPIC header('dlq.original.topic') SELECT * FROM \"orders.dlq\""},
	{"CREATE TOPIC", "CREATE TOPIC name [PARTITIONS n] [REPLICATION n] [WITH (config.name = 'value', ...)]",
		"CREATE TOPIC orders PARTITIONS 6 REPLICATION 3 WITH (cleanup.policy = 'compact')"},
	{"DROP TOPIC", "DROP TOPIC [IF EXISTS] name", "DROP TOPIC IF EXISTS orders"},
	{"SHOW CONFIGS", "SHOW CONFIGS FOR TOPIC name [ALL] | FOR BROKER id [ALL] | FOR CLUSTER" + metaSuffix + "\n" +
		"  without ALL: only what was set (not defaults); CLUSTER: the dynamic defaults of every broker",
		"SHOW CONFIGS FOR TOPIC orders"},
	{"ALTER TOPIC", "ALTER TOPIC name SET (config.name = 'value', ...) [UNSET (config.name, ...)]",
		"ALTER TOPIC orders SET (retention.ms = '86400000')"},
	{"ALTER TOPIC PARTITIONS", "ALTER TOPIC name PARTITIONS n  (only up; keys then map to other partitions)",
		"ALTER TOPIC orders PARTITIONS 12"},
	{"ALTER BROKER", "ALTER BROKER id SET (config.name = 'value', ...) [UNSET (config.name, ...)]",
		"ALTER BROKER 1 UNSET (log.cleaner.threads)"},
	{"ALTER CLUSTER", "ALTER CLUSTER SET (config.name = 'value', ...) [UNSET (config.name, ...)]  (every broker's dynamic default)",
		"ALTER CLUSTER SET (log.retention.ms = '604800000')"},
	{"RESET GROUP", "RESET GROUP name [TOPIC name [PARTITION n | PARTITION (n, ...)]] TO target [EXECUTE]\n" +
		"  target := EARLIEST | LATEST | OFFSET n | TIMESTAMP time | duration AGO | SHIFT BY n\n" +
		"  without EXECUTE a dry run: shows the new offsets and changes nothing",
		"RESET GROUP billing TOPIC orders TO 1h AGO"},
	{"DELETE GROUP", "DELETE GROUP name  (the group must have no active members)", "DELETE GROUP old-billing"},
	{"SHOW SHARE GROUPS", "SHOW SHARE GROUPS [LIKE 'glob']" + metaSuffix +
		"\n  share groups (KIP-932, Kafka 4.x); columns: group, state, coordinator, members, topics, lag",
		"SHOW SHARE GROUPS WHERE lag > 0"},
	{"DESCRIBE SHARE GROUP", "DESCRIBE SHARE GROUP name" + metaSuffix + "  (alias DESC)" +
		"\n  columns: topic, partition, start_offset, end_offset, lag, members, member_ids, client_ids",
		"DESC SHARE GROUP work-queue"},
	{"RESET SHARE GROUP", "RESET SHARE GROUP name [TOPIC name [PARTITION n | PARTITION (n, ...)]] TO target [EXECUTE]\n" +
		"  target := EARLIEST | LATEST | OFFSET n | TIMESTAMP time | duration AGO\n" +
		"  moves the share-partition start offsets; the group must have no active members;\n" +
		"  without EXECUTE a dry run: shows the new start offsets and changes nothing",
		"RESET SHARE GROUP work-queue TOPIC orders TO EARLIEST"},
	{"DELETE SHARE GROUP", "DELETE SHARE GROUP name [TOPIC name | TOPIC (name, ...)]\n" +
		"  the whole group, or with TOPIC only its start offsets for those topics; the group must have no active members",
		"DELETE SHARE GROUP work-queue TOPIC orders"},
	{"DELETE RECORDS", "DELETE RECORDS FROM name BEFORE (p:o, ...) [EXECUTE]\n" +
		"  DELETE RECORDS FROM name BEFORE OFFSET n [PARTITION n | PARTITION (n, ...)] [EXECUTE]\n" +
		"  without EXECUTE a dry run: shows what would be deleted and changes nothing",
		"DELETE RECORDS FROM orders BEFORE (0:100, 3:250)"},
	{"SHOW SUBJECTS", "SHOW SUBJECTS [LIKE 'glob']" + metaSuffix +
		"\n  the schema registry's subjects; columns: subject, type, latest_version, latest_id, compatibility",
		"SHOW SUBJECTS LIKE 'payments*' WHERE type = 'AVRO'"},
	{"DESCRIBE SUBJECT", "DESCRIBE SUBJECT name [VERSION n]" + metaSuffix + "  (alias DESC)" +
		"\n  every version of a subject, or version n; columns: version, id, type, schema, references",
		"DESCRIBE SUBJECT 'payments-value' VERSION 2"},
	{"SHOW SCHEMAS", "SHOW SCHEMAS FOR TOPIC name" + metaSuffix +
		"\n  the subjects name-key and name-value (TopicNameStrategy); columns: side, subject, latest_version, latest_id, type",
		"SHOW SCHEMAS FOR TOPIC payments"},
	{"SHOW ACLS", "SHOW ACLS [ON resource] [FOR 'principal']" + metaSuffix + "\n" + aclResourceHelp +
		"\n  columns: principal, host, operation, permission, resource_type, resource_name, pattern_type, matched_by;" +
		"\n  with ON, every binding that applies to the resource: its own, the '*' of its kind and the PREFIXED\n  ones whose prefix starts its name; matched_by says which (LITERAL, WILDCARD, PREFIXED)",
		"SHOW ACLS ON TOPIC payments FOR 'User:alice'"},
	{"GRANT", "GRANT op [, op ...] ON resource [PREFIXED] TO 'principal' [HOST 'ip']\n" + aclResourceHelp + "\n" + aclOpHelp +
		"\n  one ALLOW binding per operation; without HOST for every host ('*'); PREFIXED: every name that starts so",
		"GRANT READ, DESCRIBE ON TOPIC payments TO 'User:alice'"},
	{"DENY", "DENY op [, op ...] ON resource [PREFIXED] TO 'principal' [HOST 'ip']\n  like GRANT, with DENY bindings: a matching DENY wins over every ALLOW",
		"DENY WRITE ON TOPIC payments TO 'User:bob'"},
	{"REVOKE", "REVOKE op [, op ...] ON resource [PREFIXED] FROM 'principal' [HOST 'ip'] [EXECUTE]\n" +
		"  removes the bindings of those operations on exactly that pattern, ALLOW and DENY, from that host\n" +
		"  (without HOST: every host); without EXECUTE a dry run: lists what would be removed and changes nothing",
		"REVOKE READ ON TOPIC payments FROM 'User:alice'"},
	{"EXPLAIN ACCESS", "EXPLAIN ACCESS 'principal' op ON resource [HOST 'ip']\n" +
		"  would the authorizer allow it, and which bindings decide (Kafka's StandardAuthorizer rules:\n" +
		"  super users, DENY wins, ALL, 'User:*', '*' and PREFIXED resources, READ/WRITE/DELETE/ALTER imply DESCRIBE)",
		"EXPLAIN ACCESS 'User:alice' READ ON TOPIC payments"},
	{"SHOW USERS", "SHOW USERS" + metaSuffix + "\n  one row per SCRAM credential; columns: user, mechanism, iterations (never salts or hashes)",
		"SHOW USERS WHERE mechanism = 'SCRAM-SHA-256'"},
	{"CREATE USER", "CREATE USER name [MECHANISM SCRAM-SHA-512 | SCRAM-SHA-256] [ITERATIONS n]\n" +
		"  default SCRAM-SHA-512, 4096 iterations (Kafka takes 4096 to 16384); the password is asked\n" +
		"  twice without echo on a terminal, or read from $KQL_NEW_PASSWORD, never written in the statement",
		"CREATE USER alice MECHANISM SCRAM-SHA-256"},
	{"ALTER USER", "ALTER USER name PASSWORD [MECHANISM SCRAM-SHA-512 | SCRAM-SHA-256] [ITERATIONS n]\n" +
		"  without MECHANISM: every mechanism the user has; without ITERATIONS: each keeps its own",
		"ALTER USER alice PASSWORD"},
	{"DROP USER", "DROP USER name [MECHANISM SCRAM-SHA-512 | SCRAM-SHA-256]  (without MECHANISM: every mechanism the user has)",
		"DROP USER alice"},
	{"SHOW QUOTAS", "SHOW QUOTAS [FOR entity]" + metaSuffix + "\n" +
		"  entity := USER name [CLIENT id] | CLIENT id | IP address, DEFAULT USER / CLIENT / IP for the defaults\n" +
		"  columns: user, client_id, ip, key, value (<default> for a default entity)",
		"SHOW QUOTAS FOR USER alice"},
	{"ALTER QUOTA", "ALTER QUOTA FOR entity SET (key = n, ...) [UNSET (key, ...)]\n" +
		"  keys: producer_byte_rate, consumer_byte_rate, request_percentage, controller_mutation_rate;\n" +
		"        connection_creation_rate for IP addresses",
		"ALTER QUOTA FOR USER alice CLIENT reports SET (consumer_byte_rate = 1048576)"},
	{"SHOW TRANSACTIONS", "SHOW TRANSACTIONS" + metaSuffix +
		"\n  every transactional id (ListTransactions on every broker: each lists those it coordinates);" +
		"\n  columns: transactional_id, producer_id, producer_epoch, state, timeout_ms, coordinator",
		"SHOW TRANSACTIONS WHERE state = 'Ongoing'"},
	{"DESCRIBE TRANSACTION", "DESCRIBE TRANSACTION 'transactional.id'" + metaSuffix + "  (alias DESC)" +
		"\n  one row per partition in the transaction; columns: transactional_id, coordinator, producer_id, producer_epoch," +
		"\n  state, timeout_ms, started, topic, partition, last_update, start_offset",
		"DESCRIBE TRANSACTION 'payments-app-1'"},
	{"SHOW HANGING TRANSACTIONS", "SHOW HANGING TRANSACTIONS [ON TOPIC name] [OLDER THAN duration]" + metaSuffix +
		"\n  open transactions no coordinator will end (kafka-transactions.sh find-hanging): last write older than" +
		"\n  OLDER THAN (default 15m) and not listed by the transactional id's coordinator; reason says why" +
		"\n  columns: topic, partition, producer_id, producer_epoch, coordinator_epoch, start_offset, last_update, minutes, transactional_id, reason",
		"SHOW HANGING TRANSACTIONS ON TOPIC orders"},
	{"ABORT TRANSACTION", "ABORT TRANSACTION ON TOPIC name PARTITION n PRODUCER id EPOCH e [EXECUTE]" +
		"\n  writes an abort marker for that producer's open transaction on that partition (WriteTxnMarkers to its leader)" +
		"\n  without EXECUTE a dry run: shows where the last stable offset moves and changes nothing" +
		"\n  refused while the transaction's coordinator still lists the partition (it is not hanging)",
		"ABORT TRANSACTION ON TOPIC orders PARTITION 3 PRODUCER 4001 EPOCH 0"},
	{"SHOW LOG DIRS", "SHOW LOG DIRS [FOR BROKER id]" + metaSuffix +
		"\n  every broker's log directories (DescribeLogDirs to each broker); columns: broker, dir, total_bytes, usable_bytes, error",
		"SHOW LOG DIRS WHERE usable_bytes < 10000000000"},
	{"SHOW REASSIGNMENTS", "SHOW REASSIGNMENTS" + metaSuffix + "\n  replica moves in progress; columns: topic, partition, replicas, adding, removing",
		"SHOW REASSIGNMENTS"},
	{"ALTER TOPIC REPLICAS", "ALTER TOPIC name PARTITION p REPLICAS (id, ...) [EXECUTE]\n" +
		"  move a partition's replicas to these brokers, the first the preferred leader;\n" +
		"  without EXECUTE a dry run: shows the current and new replicas and leader",
		"ALTER TOPIC orders PARTITION 0 REPLICAS (2, 3, 1)"},
	{"CANCEL REASSIGNMENT", "CANCEL REASSIGNMENT ON TOPIC name PARTITION p [EXECUTE]  (the replicas go back to the old set)",
		"CANCEL REASSIGNMENT ON TOPIC orders PARTITION 0"},
	{"ELECT LEADERS", "ELECT LEADERS [PREFERRED | UNCLEAN] [FOR TOPIC name [PARTITION p, ...]] [EXECUTE]\n" +
		"  PREFERRED (the default): lead each partition by its first replica; UNCLEAN: give a partition with\n" +
		"  no leader one outside the in-sync replicas (records may be lost); without EXECUTE a dry run",
		"ELECT LEADERS FOR TOPIC orders"},
	{"SHOW QUORUM", "SHOW QUORUM" + metaSuffix +
		"\n  the KRaft metadata quorum; columns: node, role, log_end_offset, lag, last_fetch, last_caught_up", "SHOW QUORUM WHERE lag > 0"},
	{"SHOW FEATURES", "SHOW FEATURES" + metaSuffix + "\n  columns: feature, finalized_version, supported_min, supported_max", "SHOW FEATURES"},
	{"EXPLAIN", "EXPLAIN statement", "EXPLAIN CONSUME orders FROM NEWEST LIMIT 10"},
}

const (
	aclResourceHelp = "  resource := TOPIC name | GROUP name | CLUSTER | TRANSACTIONAL ID name   (name * : every one)"
	aclOpHelp       = "  op := ALL | READ | WRITE | CREATE | DELETE | ALTER | DESCRIBE | CLUSTER_ACTION | DESCRIBE_CONFIGS\n" +
		"        | ALTER_CONFIGS | IDEMPOTENT_WRITE | CREATE_TOKENS | DESCRIBE_TOKENS | TWO_PHASE_COMMIT"
)

// StatementHelp returns one entry per statement, in the order \help lists them.
func StatementHelp() []HelpEntry {
	return append([]HelpEntry(nil), statementHelp...)
}

// CheckScript parses every statement of script and returns every error, not
// only the first, with positions and source lines from the script itself.
// It needs no cluster: this is what kql --check runs.
func CheckScript(script string) []error {
	srcs, err := Split(script)
	var errs []error
	for _, s := range srcs {
		if _, e := parse(s.Text); e != nil {
			e.shift(s.Line, s.Col)
			e.SourceLine = sourceLine(script, e.Line)
			errs = append(errs, e)
		}
	}
	if err != nil {
		errs = append(errs, err)
	}
	return errs
}
