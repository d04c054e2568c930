package lang

import "github.com/alecthomas/participle/v2/lexer"

// Grammar of the cluster operation statements (see ast_ops.go).

// gShowOps is what follows SHOW in SHOW LOG DIRS, SHOW REASSIGNMENTS,
// SHOW QUORUM and SHOW FEATURES.
type gShowOps struct {
	LogDirs bool   `parser:"  @'LOG' 'DIRS'"`
	Broker  *gNum  `parser:"  ( 'FOR' 'BROKER' @@ )?"`
	Single  string `parser:"| @('REASSIGNMENTS' | 'QUORUM' | 'FEATURES')"`
}

// gAlterReplicas is PARTITION p REPLICAS (b, ...) [EXECUTE] after ALTER TOPIC t.
type gAlterReplicas struct {
	Pos       lexer.Position
	Partition *gNum   `parser:"'PARTITION' @@"`
	ReplPos   *gKwPos `parser:"@@"`
	Replicas  []*gNum `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
	Execute   bool    `parser:"@'EXECUTE'?"`
}

type gKwPos struct {
	Pos  lexer.Position
	Word string `parser:"@'REPLICAS'"`
}

// gOps is the statements that start with a word of their own.
type gOps struct {
	Cancel *gCancel `parser:"  @@"`
	Elect  *gElect  `parser:"| @@"`
}

type gCancel struct {
	Topic     *gName `parser:"'CANCEL' 'REASSIGNMENT' 'ON' 'TOPIC' @@"`
	Partition *gNum  `parser:"'PARTITION' @@"`
	Execute   bool   `parser:"@'EXECUTE'?"`
}

type gElect struct {
	Kind    string     `parser:"'ELECT' 'LEADERS' @('PREFERRED' | 'UNCLEAN')?"`
	Topic   *gName     `parser:"( 'FOR' 'TOPIC' @@"`
	PartKw  string     `parser:"  ( @('PARTITION' | 'PARTITIONS')"`
	Parts   *gOpsParts `parser:"    @@ )? )?"`
	Execute bool       `parser:"@'EXECUTE'?"`
}

// gOpsParts is PARTITION p, ... or PARTITION (p, ...).
type gOpsParts struct {
	List []*gNum `parser:"  '(' @@ ( ',' @@ )* ')'"`
	Bare []*gNum `parser:"| @@ ( ',' @@ )*"`
}
