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
	{"SHOW TOPICS", "SHOW TOPICS [LIKE 'glob']" + metaSuffix + "\n  glob: * or % any run, ? or _ one character", "SHOW TOPICS LIKE 'orders*' WHERE partitions > 3"},
	{"SHOW GROUPS", "SHOW GROUPS [LIKE 'glob']" + metaSuffix + "  (alias SHOW CONSUMERS)\n  columns: group, state, protocol_type, coordinator, members, topics, lag",
		"SHOW GROUPS WHERE lag > 1000 ORDER BY lag DESC LIMIT 10"},
	{"SHOW PARTITIONS", "SHOW PARTITIONS [OF topic] [LIKE 'glob']" + metaSuffix +
		"\n  columns: topic, partition, leader, replicas, in_sync_replicas, offline, under_replicated, earliest_offset, latest_offset, messages, internal",
		"SHOW PARTITIONS WHERE in_sync_replicas < replicas"},
	{"SHOW BROKERS", "SHOW BROKERS" + metaSuffix, "SHOW BROKERS"},
	{"SHOW CLUSTER", "SHOW CLUSTER" + metaSuffix, "SHOW CLUSTER"},
	{"DESCRIBE TOPIC", "DESCRIBE TOPIC name" + metaSuffix + "  (alias DESC)", "DESCRIBE TOPIC orders"},
	{"DESCRIBE GROUP", "DESCRIBE GROUP name" + metaSuffix + "  (alias DESC)", "DESC GROUP billing"},
	{"CONSUME", "CONSUME [FROM] name {clause}  |  SELECT * FROM name {clause}  |  SELECT expr [AS name], ... FROM name {clause}\n" +
		"  clause := FROM start | PARTITION n | PARTITION (n, ...) | PARTITION FOR KEY 'k' | WHERE expr\n" +
		"          | GROUP BY expr, ... | ORDER BY expr [ASC|DESC], ... | LIMIT n | LIMIT ALL | SKIP n | FOLLOW\n" +
		"  start := NEWEST | OLDEST | OFFSET n | TIMESTAMP time | duration AGO | TAIL (p:o, ...) | ANCHOR (p:o, ...)\n" +
		"  expr: columns partition, offset, timestamp, key, value, headers, key_schema_id, value_schema_id;\n" +
		"        JSON paths value.a.b, value.items[0];\n" +
		"        = != < <= > >= LIKE ILIKE ~ !~ IN BETWEEN IS NULL AND OR NOT + - * / %;\n" +
		"        length lower upper coalesce header; count min max sum avg\n" +
		"  clauses in any order, each at most once",
		"SELECT key, value.total FROM orders FROM 15m AGO WHERE value.total > 100 LIMIT 20"},
	{"PRODUCE", "PRODUCE [INTO] name [KEY v] [VALUE v] [KEY SCHEMA s] [VALUE SCHEMA s] [PARTITION n] [HEADER k v ...]\n" +
		"  v := 'text' | x'hex' | NULL; at least one KEY or VALUE; HEADER may repeat\n" +
		"  s := ('subject' [VERSION n | ID n] | ID n) [MESSAGE name]: the KEY or VALUE is JSON text, encoded\n" +
		"       in the Confluent wire format with that registered schema (without VERSION or ID, the\n" +
		"       subject's latest); MESSAGE: the Protobuf message to write (a nested one, or one of several\n" +
		"       the text fits);\n" +
		"       needs a schema registry. For example:\n" +
		"       PRODUCE INTO payments KEY 'k1' VALUE '{\"id\": 1, \"amount\": 9.5}' VALUE SCHEMA 'payments-value'",
		"PRODUCE INTO orders KEY 'o-1' VALUE '{\"total\": 42}' HEADER source 'kql'"},
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
	{"EXPLAIN", "EXPLAIN statement", "EXPLAIN CONSUME orders FROM NEWEST LIMIT 10"},
}

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
