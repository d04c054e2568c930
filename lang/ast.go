// Package lang turns KafkaQL text into typed statements and back.
//
// The AST below is the contract between the language and the executor: every
// statement is a plain struct with no positions, so Parse(Format(s)) can be
// compared with reflect.DeepEqual. A nil pointer field means "the clause was
// not written"; the executor, not the parser, picks defaults.
package lang

import "time"

// Statement is one parsed KafkaQL statement.
type Statement interface{ statement() }

// ShowTopics is SHOW TOPICS [LIKE 'glob'].
type ShowTopics struct{ Like *string }

// ShowBrokers is SHOW BROKERS.
type ShowBrokers struct{}

// ShowCluster is SHOW CLUSTER.
type ShowCluster struct{}

// ShowGroups is SHOW GROUPS [LIKE 'glob'] (alias SHOW CONSUMERS).
type ShowGroups struct{ Like *string }

// DescribeTopic is DESCRIBE TOPIC name (alias DESC).
type DescribeTopic struct{ Topic string }

// DescribeGroup is DESCRIBE GROUP name (alias DESC).
type DescribeGroup struct{ Group string }

// Consume is CONSUME [FROM] name {clause}, alias SELECT * FROM name {clause}.
type Consume struct {
	Topic      string
	From       *Start  // nil: not written (the executor reads from the oldest offset)
	Partitions []int32 // nil: not written (all partitions); PARTITION n is a one-element list
	Limit      *int64  // nil: not written (default 100); 1..1000000 when set
	Skip       *int64  // nil: not written; >= 0 when set (bare OFFSET n is SKIP n)
}

// StartKind says where a CONSUME starts.
type StartKind int

const (
	FromOldest    StartKind = iota + 1 // FROM OLDEST (EARLIEST, BEGINNING, START)
	FromNewest                         // FROM NEWEST (LATEST, END)
	FromOffset                         // FROM OFFSET n
	FromTimestamp                      // FROM TIMESTAMP t (FROM TIME t), t in epoch ms or RFC 3339
	FromAgo                            // FROM duration AGO
	FromTail                           // FROM TAIL (p:o, ...): pages step back from these pinned end offsets
	FromAnchor                         // FROM ANCHOR (p:o, ...): read forward from these offsets
)

// Start is the FROM clause of a CONSUME. Only the field of its Kind is set.
type Start struct {
	Kind      StartKind
	Offset    int64             // FromOffset
	Timestamp int64             // FromTimestamp, epoch milliseconds (RFC 3339 input is converted)
	Ago       time.Duration     // FromAgo, > 0
	Positions []PartitionOffset // FromTail, FromAnchor, in the order written
}

// PartitionOffset is one p:o pair of FROM TAIL / FROM ANCHOR.
type PartitionOffset struct {
	Partition int32
	Offset    int64
}

// Literal is a key, value or header value: NULL, or bytes (text, escapes or x'hex').
type Literal struct {
	Null  bool
	Bytes []byte // never nil when !Null (an empty string is []byte{})
}

// Header is one HEADER k v clause of PRODUCE; headers keep order and duplicates.
type Header struct {
	Key   string
	Value Literal
}

// Produce is PRODUCE [INTO] name {KEY v | VALUE v | PARTITION n | HEADER k v}.
type Produce struct {
	Topic     string
	Key       *Literal // nil: not written (a null key)
	Value     *Literal // nil: not written (a null value); at least one of Key, Value is set
	Partition *int32
	Headers   []Header // nil when none
}

// TopicConfig is one name = 'value' pair of CREATE TOPIC ... WITH (...).
type TopicConfig struct{ Name, Value string }

// CreateTopic is CREATE TOPIC name [PARTITIONS n] [REPLICATION n] [WITH (k = 'v', ...)].
type CreateTopic struct {
	Topic       string
	Partitions  *int32 // nil: broker default
	Replication *int16 // nil: broker default
	Configs     []TopicConfig
}

// DropTopic is DROP TOPIC [IF EXISTS] name.
type DropTopic struct {
	IfExists bool
	Topic    string
}

// Explain is EXPLAIN statement; Stmt is never an *Explain.
type Explain struct{ Stmt Statement }

func (*ShowTopics) statement()    {}
func (*ShowBrokers) statement()   {}
func (*ShowCluster) statement()   {}
func (*ShowGroups) statement()    {}
func (*DescribeTopic) statement() {}
func (*DescribeGroup) statement() {}
func (*Consume) statement()       {}
func (*Produce) statement()       {}
func (*CreateTopic) statement()   {}
func (*DropTopic) statement()     {}
func (*Explain) statement()       {}
