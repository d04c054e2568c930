package lang

import "github.com/alecthomas/participle/v2/lexer"

// Grammar of the user and quota statements (see ast_users.go). SHOW USERS
// and SHOW QUOTAS are alternatives of gShow; CREATE USER, DROP USER,
// ALTER USER and ALTER QUOTA of gCreate, gDrop and gAlter (the grammar
// chooses at the first token, so each verb has one rule).

// gUserSpec is the user name and options of CREATE USER.
type gUserSpec struct {
	Name *gName      `parser:"@@"`
	Opts []*gUserOpt `parser:"@@*"`
}

type gUserOpt struct {
	Pos        lexer.Position
	Mechanism  string `parser:"  'MECHANISM' @('SCRAM-SHA-256' | 'SCRAM-SHA-512')"`
	Iterations *gNum  `parser:"| 'ITERATIONS' @@"`
}

type gAlterUser struct {
	Name *gName      `parser:"'USER' @@ 'PASSWORD'"`
	Opts []*gUserOpt `parser:"@@*"`
}

type gDropUser struct {
	Name      *gName `parser:"'USER' @@"`
	Mechanism string `parser:"( 'MECHANISM' @('SCRAM-SHA-256' | 'SCRAM-SHA-512') )?"`
}

type gShowQuotas struct {
	Kw  bool          `parser:"@'QUOTAS'"`
	For *gQuotaEntity `parser:"( 'FOR' @@ )?"`
}

type gQuotaEntity struct {
	Pos   lexer.Position
	Parts []*gQuotaPart `parser:"@@+"`
}

type gQuotaPart struct {
	Pos     lexer.Position
	Default string `parser:"  'DEFAULT' @('USER' | 'CLIENT' | 'IP')"`
	Kind    string `parser:"| @('USER' | 'CLIENT' | 'IP')"`
	Name    *gName `parser:"  @@"`
}

type gAlterQuota struct {
	Entity  *gQuotaEntity   `parser:"'QUOTA' 'FOR' @@"`
	Clauses []*gQuotaClause `parser:"@@+"`
}

type gQuotaClause struct {
	Pos   lexer.Position
	Set   []*gQuotaSet `parser:"  'SET' '(' @@ ( ',' @@ )* ')'"`
	Unset []*gName     `parser:"| 'UNSET' '(' @@ ( ',' @@ )* ')'"`
}

type gQuotaSet struct {
	Name  *gName     `parser:"@@ '='"`
	Value *gQuotaNum `parser:"@@"`
}

// gQuotaNum is a quota's value: the lexer reads 12.5 as a duration-shaped
// token, so a decimal is taken from either kind and checked in convert.
type gQuotaNum struct {
	Pos lexer.Position
	Num string `parser:"  @Number"`
	Dec string `parser:"| @Duration"`
}
