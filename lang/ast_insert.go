package lang

// Insert is INSERT INTO t {option} SELECT ... [EXECUTE] and INSERT INTO
// TOPIC expr {option} SELECT ... [EXECUTE]: copy the records a SELECT
// reads into a topic, or into the topic each record's expression names.
// Without EXECUTE it is a dry run.
type Insert struct {
	Topic     string // INSERT INTO t; "" when TopicExpr is set
	TopicExpr Expr   // INSERT INTO TOPIC expr: the destination per record

	KeepPartition bool // KEEP PARTITION; default PARTITION BY KEY
	// KeepTimestamp (KEEP TIMESTAMP) writes each source record's timestamp,
	// StampNow (TIMESTAMP NOW) the time of writing; without either, the
	// SELECT's timestamp column (SELECT * has one), else the time of
	// writing. Neither goes with a timestamp column that says otherwise
	// (the parser refuses it).
	KeepTimestamp bool
	StampNow      bool

	Select  *Consume // the source: every clause of SELECT
	Execute bool     // EXECUTE: write; otherwise print what would be written
}

func (*Insert) statement() {}

// InsertColumns are the names a SELECT list of an INSERT may give its
// columns: the parts of the record written.
var InsertColumns = []string{"key", "value", "headers", "timestamp", "partition"}
