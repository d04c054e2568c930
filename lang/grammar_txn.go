package lang

import "github.com/alecthomas/participle/v2/lexer"

// Grammar of the transaction statements (see ast_txn.go).

// gShowTxn follows SHOW: TRANSACTIONS, or HANGING TRANSACTIONS with its
// scope and threshold.
type gShowTxn struct {
	Plain   bool      `parser:"  @'TRANSACTIONS'"`
	Hanging *gHanging `parser:"| @@"`
}

type gHanging struct {
	Clauses []*gHangingClause `parser:"'HANGING' 'TRANSACTIONS' @@*"`
}

type gHangingClause struct {
	Pos   lexer.Position
	Topic *gName `parser:"  'ON' 'TOPIC' @@"`
	Older *gDur  `parser:"| 'OLDER' 'THAN' @@"`
}

type gAbort struct {
	Topic   *gName          `parser:"'ABORT' 'TRANSACTION' 'ON' 'TOPIC' @@"`
	Clauses []*gAbortClause `parser:"@@*"`
	Execute bool            `parser:"@'EXECUTE'?"`
}

type gAbortClause struct {
	Pos      lexer.Position
	Part     *gNum `parser:"  'PARTITION' @@"`
	Producer *gNum `parser:"| 'PRODUCER' @@"`
	Epoch    *gNum `parser:"| 'EPOCH' @@"`
}
