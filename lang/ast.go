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

// Every SHOW and DESCRIBE embeds Query: [WHERE expr] [ORDER BY ...]
// [LIMIT n] over the statement's own columns (MetaColumns), written after
// the statement's own clauses.

// ShowTopics is SHOW TOPICS [LIKE 'glob'] Query.
type ShowTopics struct {
	Like *string // a glob: * or % any run, ? or _ one character
	Query
}

// ShowBrokers is SHOW BROKERS Query.
type ShowBrokers struct{ Query }

// ShowCluster is SHOW CLUSTER Query.
type ShowCluster struct{ Query }

// ShowGroups is SHOW GROUPS [LIKE 'glob'] Query (alias SHOW CONSUMERS).
type ShowGroups struct {
	Like *string
	Query
}

// ShowPartitions is SHOW PARTITIONS [OF topic] [LIKE 'glob'] Query: one
// row per partition of the cluster (or of one topic); LIKE matches topics.
type ShowPartitions struct {
	Topic *string // nil: every topic, internal ones included
	Like  *string
	Query
}

// DescribeTopic is DESCRIBE TOPIC name Query (alias DESC).
type DescribeTopic struct {
	Topic string
	Query
}

// DescribeGroup is DESCRIBE GROUP name Query (alias DESC).
type DescribeGroup struct {
	Group string
	Query
}

// Consume reads records: CONSUME [FROM] name {clause}, SELECT [*] [FROM]
// name {clause}, and SELECT projection FROM name {clause}. Clauses are
// order-free and each may be given once.
//
// The fields below Skip come from the query clauses. A statement that sets
// none of them reads exactly as before they existed. How the executor
// must honour them:
//
//   - Where: keep a record only when the predicate is TRUE (NULL and FALSE
//     drop it). LIMIT counts records that match, and a read with WHERE
//     stops at LIMIT matches or at the end offsets captured at the start.
//   - Projection: nil means the six record columns (CONSUME, SELECT *).
//     Otherwise one output column per item, named SelectItem.Name().
//   - GroupBy / aggregates (HasAggregates): read the whole range, one row
//     per group (one row in all without GroupBy); LIMIT limits groups.
//   - OrderBy: read the whole range and keep the top LIMIT rows. With
//     aggregates it sorts the groups. OrderItem.Alias names a projection.
//   - LimitAll: no row limit (never with OrderBy or Follow: the parser
//     rejects those).
//   - Follow: after the normal result keep reading new records. The parser
//     guarantees: no aggregates, GROUP BY or ORDER BY; a forward start
//     (OLDEST, OFFSET, TIMESTAMP, AGO, ANCHOR) has no LIMIT; with no FROM,
//     or FROM NEWEST / TAIL, Limit is the backlog (default 10).
//   - PartitionForKey: read only the partition murmur2 (the Java client's
//     default partitioner) puts this key in. Never set with Partitions.
type Consume struct {
	Topic      string
	From       *Start  // nil: not written (the executor reads from the oldest offset; with Follow, the newest)
	Partitions []int32 // nil: not written (all partitions); PARTITION n is a one-element list
	Limit      *int64  // nil: not written (default 100); 1..1000000 when set
	Skip       *int64  // nil: not written; >= 0 when set (bare OFFSET n is SKIP n)

	PartitionForKey []byte       // PARTITION FOR KEY v; nil: not written (x'' is an empty, non-nil key)
	Where           Expr         // nil: every record
	Projection      []SelectItem // nil: the six record columns
	GroupBy         []Expr       // nil: not written
	OrderBy         []OrderItem  // nil: not written
	LimitAll        bool         // LIMIT ALL; Limit is then nil
	Follow          bool         // FOLLOW

	KeyAs, ValueAs *LocalSchema // KEY/VALUE AS PROTOBUF|AVRO '...'; nil: not written (\set or the properties file may map one)
}

// HasAggregates reports whether the statement aggregates: GROUP BY, or an
// aggregate call in the projection.
func (c *Consume) HasAggregates() bool {
	if c.GroupBy != nil {
		return true
	}
	for _, it := range c.Projection {
		if HasAggregate(it.X) {
			return true
		}
	}
	return false
}

// IsRecordQuery reports whether the statement uses any of the query
// clauses (WHERE, a projection, GROUP BY, ORDER BY, LIMIT ALL, FOLLOW,
// PARTITION FOR KEY), as opposed to a plain read.
func (c *Consume) IsRecordQuery() bool {
	return c.Where != nil || c.Projection != nil || c.GroupBy != nil || c.OrderBy != nil ||
		c.LimitAll || c.Follow || c.PartitionForKey != nil
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

// Produce is PRODUCE [INTO] name {KEY v | VALUE v | KEY SCHEMA s |
// VALUE SCHEMA s | PARTITION n | HEADER k v}.
//
// KeySchema and ValueSchema say that the key or value literal is JSON
// text to be encoded with that registered schema into the Confluent wire
// format (magic byte, schema id, encoded bytes). The parser guarantees a
// KeySchema only with a Key that is not NULL, and a ValueSchema only with
// a Value that is not NULL.
type Produce struct {
	Topic     string
	Key       *Literal // nil: not written (a null key)
	Value     *Literal // nil: not written (a null value); at least one of Key, Value is set
	Partition *int32
	Headers   []Header // nil when none

	KeySchema   *SchemaRef // KEY SCHEMA ...; nil: not written (the key's bytes are sent as written)
	ValueSchema *SchemaRef // VALUE SCHEMA ...; nil: not written (the value's bytes are sent as written)

	KeyAs, ValueAs *LocalSchema // KEY/VALUE AS PROTOBUF|AVRO '...': encoded with a local schema; nil: not written

	// From is set for an import (FROM FILE / FROM STDIN): the records come
	// from there, and Key, Value, Partition and Headers are nil.
	From *ImportSource
}

// ImportSource is the FROM FILE 'path' | FROM STDIN part of PRODUCE and
// its options.
type ImportSource struct {
	File          string // "" when Stdin
	Stdin         bool
	Format        string  // jsonl (default), json, csv, tsv, lines
	KeyDelimiter  *string // KEY DELIMITER 'd' (FORMAT lines): split each line into key and value
	KeepPartition bool    // KEEP PARTITION; default PARTITION BY KEY (the default partitioner)
	StampNow      bool    // TIMESTAMP NOW; default KEEP TIMESTAMP
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

func (*ShowTopics) statement()     {}
func (*ShowBrokers) statement()    {}
func (*ShowCluster) statement()    {}
func (*ShowGroups) statement()     {}
func (*ShowPartitions) statement() {}
func (*DescribeTopic) statement()  {}
func (*DescribeGroup) statement()  {}
func (*Consume) statement()        {}
func (*Produce) statement()        {}
func (*CreateTopic) statement()    {}
func (*DropTopic) statement()      {}
func (*Explain) statement()        {}
