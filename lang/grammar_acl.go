package lang

import "github.com/alecthomas/participle/v2/lexer"

// Grammar of the access-control statements (see ast_acl.go). SHOW ACLS is
// an alternative of gShow; EXPLAIN ACCESS one of gRoot.

// gACLOp is one operation: Kafka's names are keywords here, so a misspelt
// one is a syntax error that lists them.
type gACLOp struct {
	Pos lexer.Position
	Op  string `parser:"@('ALL' | 'READ' | 'WRITE' | 'CREATE' | 'DELETE' | 'ALTER' | 'DESCRIBE' | 'CLUSTER_ACTION' | 'DESCRIBE_CONFIGS' | 'ALTER_CONFIGS' | 'IDEMPOTENT_WRITE' | 'CREATE_TOKENS' | 'DESCRIBE_TOKENS' | 'TWO_PHASE_COMMIT')"`
}

// gACLName is a resource name; a bare * is the wildcard, as '*' is.
type gACLName struct {
	Pos  lexer.Position
	Star bool   `parser:"  @'*'"`
	Word string `parser:"| @Ident"`
	Str  string `parser:"| @String"`
}

// gACLOn is what follows ON.
type gACLOn struct {
	Pos      lexer.Position
	Topic    *gACLName    `parser:"(  'TOPIC' @@"`
	Group    *gACLName    `parser:" | 'GROUP' @@"`
	Cluster  bool         `parser:" | @'CLUSTER'"`
	TxnID    *gACLName    `parser:" | 'TRANSACTIONAL' 'ID' @@ )"`
	Prefixed *gKwPrefixed `parser:"@@?"`
}

type gKwPrefixed struct {
	Pos  lexer.Position
	Word string `parser:"@'PREFIXED'"`
}

type gPrincipal struct {
	Pos lexer.Position
	Str string `parser:"@String"`
}

type gShowACLs struct {
	On  *gACLOn     `parser:"'ACLS' ( 'ON' @@ )?"`
	For *gPrincipal `parser:"( 'FOR' @@ )?"`
}

type gGrant struct {
	Verb string      `parser:"@('GRANT' | 'DENY')"`
	Ops  []*gACLOp   `parser:"@@ ( ',' @@ )*"`
	On   *gACLOn     `parser:"'ON' @@"`
	To   *gPrincipal `parser:"'TO' @@"`
	Host *gPrincipal `parser:"( 'HOST' @@ )?"`
}

type gRevoke struct {
	Ops     []*gACLOp   `parser:"'REVOKE' @@ ( ',' @@ )*"`
	On      *gACLOn     `parser:"'ON' @@"`
	From    *gPrincipal `parser:"'FROM' @@"`
	Host    *gPrincipal `parser:"( 'HOST' @@ )?"`
	Execute bool        `parser:"@'EXECUTE'?"`
}

// gAccess is EXPLAIN ACCESS; the grammar also accepts it without EXPLAIN,
// and the conversion says how to write it.
type gAccess struct {
	Pos       lexer.Position
	Principal *gPrincipal `parser:"'ACCESS' @@"`
	Op        *gACLOp     `parser:"@@"`
	On        *gACLOn     `parser:"'ON' @@"`
	Host      *gPrincipal `parser:"( 'HOST' @@ )?"`
}
