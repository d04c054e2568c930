package lang

import "github.com/alecthomas/participle/v2/lexer"

// Grammar of the share group statements (see ast_share.go). DESCRIBE SHARE
// GROUP and RESET SHARE GROUP are alternatives inside gDescribe and gReset.

type gShowShare struct {
	Like *gLike `parser:"'SHARE' 'GROUPS' @@?"`
}

type gDeleteShare struct {
	Group  *gName      `parser:"'SHARE' 'GROUP' @@"`
	Topics *gTopicList `parser:"( 'TOPIC' @@ )?"`
}

type gTopicList struct {
	Pos  lexer.Position
	One  *gName   `parser:"  @@"`
	List []*gName `parser:"| '(' @@ ( ',' @@ )* ')'"`
}
