package lang

import "github.com/alecthomas/participle/v2/lexer"

// Grammar of the administration statements (see ast_admin.go).

type gShowConfigs struct {
	Resource *gResource `parser:"'CONFIGS' 'FOR' @@"`
	All      *gKw       `parser:"@@?"`
}

type gKw struct {
	Pos  lexer.Position
	Word string `parser:"@'ALL'"`
}

type gResource struct {
	Pos     lexer.Position
	Topic   *gName `parser:"  'TOPIC' @@"`
	Broker  *gNum  `parser:"| 'BROKER' @@"`
	Cluster bool   `parser:"| @'CLUSTER'"`
}

type gAlter struct {
	User       *gAlterUser       `parser:"'ALTER' ( @@"`
	Quota      *gAlterQuota      `parser:"| @@"`
	Resource   *gResource        `parser:"| @@"`
	Partitions *gAlterPartitions `parser:"  ( @@"`
	Replicas   *gAlterReplicas   `parser:"  | @@"`
	Clauses    []*gAlterClause   `parser:"  | @@+ ) )"`
}

type gAlterPartitions struct {
	Pos   lexer.Position
	Count *gNum `parser:"'PARTITIONS' @@"`
}

type gAlterClause struct {
	Pos   lexer.Position
	Set   []*gConfig `parser:"  'SET' '(' @@ ( ',' @@ )* ')'"`
	Unset []*gName   `parser:"| 'UNSET' '(' @@ ( ',' @@ )* ')'"`
}

type gReset struct {
	Pos     lexer.Position
	Share   bool            `parser:"'RESET' @'SHARE'?"`
	Group   *gName          `parser:"'GROUP' @@"`
	Clauses []*gResetClause `parser:"@@*"`
	Execute bool            `parser:"@'EXECUTE'?"`
}

type gResetClause struct {
	Pos    lexer.Position
	Topic  *gName    `parser:"  'TOPIC' @@"`
	PartKw string    `parser:"| @('PARTITION' | 'PARTITIONS')"`
	Parts  *gParts   `parser:"  @@"`
	To     *gResetTo `parser:"| 'TO' @@"`
}

type gResetTo struct {
	Pos    lexer.Position
	Newest bool   `parser:"  @('NEWEST' | 'LATEST' | 'END')"`
	Oldest bool   `parser:"| @('OLDEST' | 'EARLIEST' | 'BEGINNING' | 'START')"`
	Offset *gNum  `parser:"| 'OFFSET' @@"`
	Time   *gTime `parser:"| ('TIMESTAMP' | 'TIME') @@"`
	Ago    *gDur  `parser:"| @@ 'AGO'"`
	Shift  *gNum  `parser:"| 'SHIFT' 'BY' @@"`
}

type gDelete struct {
	Group   *gName           `parser:"'DELETE' ( 'GROUP' @@"`
	Share   *gDeleteShare    `parser:"| @@"`
	Topic   *gName           `parser:"| 'RECORDS' 'FROM' @@"`
	Clauses []*gDeleteClause `parser:"  @@*"`
	Execute bool             `parser:"  @'EXECUTE'? )"`
}

type gDeleteClause struct {
	Pos    lexer.Position
	Before *gBefore `parser:"  'BEFORE' @@"`
	PartKw string   `parser:"| @('PARTITION' | 'PARTITIONS')"`
	Parts  *gParts  `parser:"  @@"`
}

type gBefore struct {
	Pos    lexer.Position
	Offset *gNum    `parser:"  'OFFSET' @@"`
	Pairs  []*gPair `parser:"| '(' @@ ( ',' @@ )* ')'"`
}
