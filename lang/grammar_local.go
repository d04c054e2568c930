package lang

import "github.com/alecthomas/participle/v2/lexer"

// gAsSchema is AS PROTOBUF 'message' or AS AVRO 'file.avsc' after KEY or
// VALUE: a schema from local files, for payloads without a registry header.
type gAsSchema struct {
	Pos    lexer.Position
	Format string `parser:"'AS' @('PROTOBUF' | 'AVRO')"`
	Name   *gName `parser:"@@"`
}
