package lang

import "github.com/alecthomas/participle/v2/lexer"

// Grammar of the Schema Registry parts (see ast_schema.go). SHOW SUBJECTS,
// SHOW SCHEMAS and DESCRIBE SUBJECT are alternatives of gShow and
// gDescribe; this is PRODUCE's SCHEMA clause.

// gSchema is SCHEMA ID n or SCHEMA subject, then any VERSION n, ID n and
// MESSAGE name.
// ID is tried before the subject, so a bare id is the keyword (a subject
// named id is quoted). VERSION right after SCHEMA is read as a subject
// named VERSION, and the number after it is then the error; the hint
// (schemaHint) says what happened. Repeats and VERSION with ID are
// checked in schemaRef, with an error at the second one.
type gSchema struct {
	Pos     lexer.Position
	ID      *gNum         `parser:"'SCHEMA' ( 'ID' @@"`
	Subject *gName        `parser:"         | @@ )"`
	Opts    []*gSchemaOpt `parser:"@@*"`
}

type gSchemaOpt struct {
	Pos     lexer.Position
	Version *gNum  `parser:"  'VERSION' @@"`
	ID      *gNum  `parser:"| 'ID' @@"`
	Message *gName `parser:"| 'MESSAGE' @@"`
}
