package lang

import (
	"fmt"
	"io"
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The participle grammar. It only decides the shape of a statement; the
// conversion in parse.go turns it into the AST and checks everything a
// grammar cannot say well (number ranges, clauses given twice, PRODUCE
// without KEY or VALUE) with an error at the offending token.
//
// Keywords are untyped, case-insensitive literals, and every bare word is
// an Ident token, so a keyword is also a valid name wherever the grammar
// wants a name (a topic may be called "topics"). Strings keep their quotes
// in the token value, so a quoted 'SHOW' never matches the keyword SHOW.
//
// The Probe token type exists only for error messages: a Probe token
// matches keyword literals but not @Ident, which lets errors.go ask the
// grammar "is the keyword LIMIT accepted here, as a keyword?".

const (
	ttIdent lexer.TokenType = iota + 1
	ttString
	ttHex
	ttNumber
	ttDuration
	ttPunct
	ttProbe
)

var tokenTypes = map[tokKind]lexer.TokenType{
	tkEOF:      lexer.EOF,
	tkWord:     ttIdent,
	tkString:   ttString,
	tkHex:      ttHex,
	tkNumber:   ttNumber,
	tkDuration: ttDuration,
	tkPunct:    ttPunct,
}

type gRoot struct {
	Explain bool     `parser:"@'EXPLAIN'?"`
	Access  *gAccess `parser:"( @@"`
	Stmt    *gStmt   `parser:"| @@ )"`
}

type gStmt struct {
	Show     *gShow     `parser:"  @@"`
	Describe *gDescribe `parser:"| @@"`
	Consume  *gConsume  `parser:"| @@"`
	Produce  *gProduce  `parser:"| @@"`
	Create   *gCreate   `parser:"| @@"`
	Drop     *gDrop     `parser:"| @@"`
	Alter    *gAlter    `parser:"| @@"`
	Reset    *gReset    `parser:"| @@"`
	Delete   *gDelete   `parser:"| @@"`
	Grant    *gGrant    `parser:"| @@"`
	Revoke   *gRevoke   `parser:"| @@"`
	Abort    *gAbort    `parser:"| @@"`
	Ops      *gOps      `parser:"| @@"`
}

type gShow struct {
	Listing string          `parser:"'SHOW' ( @('TOPICS' | 'GROUPS' | 'CONSUMERS' | 'SUBJECTS')"`
	Like    *gLike          `parser:"         @@?"`
	Parts   bool            `parser:"       | @'PARTITIONS'"`
	Of      *gName          `parser:"         ( 'OF' @@ )?"`
	PLike   *gLike          `parser:"         @@?"`
	Single  string          `parser:"       | @('BROKERS' | 'CLUSTER' | 'USERS')"`
	Configs *gShowConfigs   `parser:"       | @@"`
	Quotas  *gShowQuotas    `parser:"       | @@"`
	Share   *gShowShare     `parser:"       | @@"`
	Txn     *gShowTxn       `parser:"       | @@"`
	Ops     *gShowOps       `parser:"       | @@"`
	Schemas *gName          `parser:"       | 'SCHEMAS' 'FOR' 'TOPIC' @@"`
	ACLs    *gShowACLs      `parser:"       | @@ )"`
	Query   []*gQueryClause `parser:"@@*"`
}

// gQueryClause is one of the [WHERE] [ORDER BY] [LIMIT] every SHOW and
// DESCRIBE takes over its own columns.
type gQueryClause struct {
	Pos   lexer.Position
	Where gExprNode     `parser:"  'WHERE' @@"`
	Order []*gOrderItem `parser:"| 'ORDER' 'BY' @@ ( ',' @@ )*"`
	Limit *gNum         `parser:"| 'LIMIT' @@"`
}

type gOrderItem struct {
	Pos lexer.Position
	X   gExprNode `parser:"@@"`
	Dir string    `parser:"@('ASC' | 'DESC')?"`
}

type gSelItem struct {
	X  gExprNode `parser:"@@"`
	As *gName    `parser:"( 'AS' @@ )?"`
}

type gLike struct {
	Pos     lexer.Position
	Pattern string `parser:"'LIKE' @String"`
}

type gDescribe struct {
	Kind    string          `parser:"('DESCRIBE' | 'DESC') ( @('TOPIC' | 'GROUP' | 'TRANSACTION')"`
	Name    *gName          `parser:"  @@"`
	Subject *gName          `parser:"| 'SUBJECT' @@"`
	Version *gNum           `parser:"  ( 'VERSION' @@ )?"`
	Share   *gName          `parser:"| 'SHARE' 'GROUP' @@ )"`
	Query   []*gQueryClause `parser:"@@*"`
}

type gName struct {
	Pos  lexer.Position
	Word string `parser:"  @Ident"`
	Str  string `parser:"| @String"`
}

// gConsume is CONSUME and both readings of SELECT: the old one, SELECT
// [*] [FROM] name, and the projection, SELECT expr, ... FROM name. A
// SELECT whose projection reading fails is parsed again as the old form
// (see parse), so every statement that parsed before still does.
type gConsume struct {
	Topic   *gName            `parser:"( 'CONSUME' 'FROM'? @@"`
	Select  *gSelect          `parser:"| 'SELECT' @@ )"`
	Clauses []*gConsumeClause `parser:"@@*"`
}

type gSelect struct {
	Star      bool        `parser:"  ( @'*' 'FROM'?"`
	StarTopic *gName      `parser:"    @@ )"`
	FromTopic *gName      `parser:"| 'FROM' @@"`
	Items     []*gSelItem `parser:"| @@ ( ',' @@ )* 'FROM'"`
	Topic     *gName      `parser:"  @@"`
}

type gConsumeClause struct {
	Pos     lexer.Position
	From    *gStart       `parser:"  'FROM' @@"`
	PartKw  string        `parser:"| @('PARTITION' | 'PARTITIONS')"`
	Parts   *gParts       `parser:"  @@"`
	LimitKw bool          `parser:"| @'LIMIT'"`
	All     bool          `parser:"  ( @'ALL'"`
	Limit   *gNum         `parser:"  | @@ )"`
	SkipKw  string        `parser:"| @('SKIP' | 'OFFSET')"`
	Skip    *gNum         `parser:"  @@"`
	Where   gExprNode     `parser:"| 'WHERE' @@"`
	GroupKw bool          `parser:"| @'GROUP' 'BY'"`
	GroupBy []gExprNode   `parser:"  @@ ( ',' @@ )*"`
	OrderKw bool          `parser:"| @'ORDER' 'BY'"`
	OrderBy []*gOrderItem `parser:"  @@ ( ',' @@ )*"`
	Follow  bool          `parser:"| @'FOLLOW'"`
	SideKw  string        `parser:"| @('KEY' | 'VALUE' | 'PAYLOAD')"`
	As      *gAsSchema    `parser:"  @@"`
}

type gStart struct {
	Pos    lexer.Position
	Newest bool     `parser:"  @('NEWEST' | 'LATEST' | 'END')"`
	Oldest bool     `parser:"| @('OLDEST' | 'EARLIEST' | 'BEGINNING' | 'START')"`
	Offset *gNum    `parser:"| 'OFFSET' @@"`
	Time   *gTime   `parser:"| ('TIMESTAMP' | 'TIME') @@"`
	Ago    *gDur    `parser:"| @@ 'AGO'"`
	PairKw string   `parser:"| @('TAIL' | 'ANCHOR')"`
	Pairs  []*gPair `parser:"  '(' @@ ( ',' @@ )* ')'"`
}

type gTime struct {
	Pos lexer.Position
	Num string `parser:"  @Number"`
	Str string `parser:"| @String"`
}

type gDur struct {
	Pos  lexer.Position
	Text string `parser:"@Duration"`
}

type gPair struct {
	Part   *gNum `parser:"@@ ':'"`
	Offset *gNum `parser:"@@"`
}

type gParts struct {
	One    *gNum   `parser:"  @@"`
	List   []*gNum `parser:"| '(' @@ ( ',' @@ )* ')'"`
	ForKey *gLit   `parser:"| 'FOR' 'KEY' @@"`
}

type gNum struct {
	Pos  lexer.Position
	Text string `parser:"@Number"`
}

type gProduce struct {
	Topic   *gName            `parser:"'PRODUCE' 'INTO'? @@"`
	Clauses []*gProduceClause `parser:"@@*"`
}

// gProduceClause: KEY and VALUE are followed either by the literal or by
// SCHEMA (see grammar_schema.go), which no literal starts with.
type gProduceClause struct {
	Pos       lexer.Position
	KeyKw     bool       `parser:"  @'KEY'"`
	KeySchema *gSchema   `parser:"  ( @@"`
	KeyAs     *gAsSchema `parser:"  | @@"`
	KeyDelim  *string    `parser:"  | 'DELIMITER' @String"`
	Key       *gLit      `parser:"  | @@ )"`
	ValueKw   string     `parser:"| @('VALUE' | 'PAYLOAD')"`
	ValSchema *gSchema   `parser:"  ( @@"`
	ValueAs   *gAsSchema `parser:"  | @@"`
	Value     *gLit      `parser:"  | @@ )"`
	PartByKey bool       `parser:"| 'PARTITION' ( 'BY' @'KEY'"`
	Part      *gNum      `parser:"  | @@ )"`
	HKey      *gName     `parser:"| 'HEADER' @@"`
	HValue    *gLit      `parser:"  @@"`
	// Import (PRODUCE ... FROM FILE/STDIN) and its options; parse.go
	// checks which combine.
	FromFile  *string `parser:"| 'FROM' ( 'FILE' @String"`
	FromStdin bool    `parser:"  | @'STDIN' )"`
	Format    *gName  `parser:"| 'FORMAT' @@"`
	Keep      string  `parser:"| 'KEEP' @('PARTITION' | 'TIMESTAMP')"`
	StampNow  bool    `parser:"| 'TIMESTAMP' @'NOW'"`
}

type gLit struct {
	Pos  lexer.Position
	Null bool   `parser:"  @'NULL'"`
	Str  string `parser:"| @String"`
	Hex  string `parser:"| @Hex"`
}

type gCreate struct {
	Topic   *gName           `parser:"'CREATE' ( 'TOPIC' @@"`
	Clauses []*gCreateClause `parser:"  @@*"`
	User    *gUserSpec       `parser:"| 'USER' @@ )"`
}

type gCreateClause struct {
	Pos         lexer.Position
	Partitions  *gNum      `parser:"  'PARTITIONS' @@"`
	Replication *gNum      `parser:"| 'REPLICATION' @@"`
	With        []*gConfig `parser:"| 'WITH' '(' @@ ( ',' @@ )* ')'"`
}

type gConfig struct {
	Name  *gName      `parser:"@@ '='"`
	Value *gConfValue `parser:"@@"`
}

type gConfValue struct {
	Pos  lexer.Position
	Str  string `parser:"  @String"`
	Num  string `parser:"| @Number"`
	Word string `parser:"| @Ident"`
	Dur  string `parser:"| @Duration"`
}

type gDrop struct {
	IfExists bool       `parser:"'DROP' ( 'TOPIC' ( @'IF' 'EXISTS' )?"`
	Topic    *gName     `parser:"  @@"`
	User     *gDropUser `parser:"| @@ )"`
}

// tokenDefinition tells participle the token types; lexing itself happens
// in lex, and parse feeds the tokens through sliceLexer.
type tokenDefinition struct{}

func (tokenDefinition) Symbols() map[string]lexer.TokenType {
	return map[string]lexer.TokenType{
		"EOF": lexer.EOF, "Ident": ttIdent, "String": ttString, "Hex": ttHex,
		"Number": ttNumber, "Duration": ttDuration, "Punct": ttPunct, "Probe": ttProbe,
	}
}

func (tokenDefinition) Lex(_ string, r io.Reader) (lexer.Lexer, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading KafkaQL: %w", err)
	}
	toks, e := lex(string(src))
	if e != nil {
		return nil, newLexError(string(src), e)
	}
	return &sliceLexer{toks: participleTokens(toks)}, nil
}

type sliceLexer struct {
	toks []lexer.Token
	i    int
}

func (l *sliceLexer) Next() (lexer.Token, error) {
	if l.i >= len(l.toks) {
		return l.toks[len(l.toks)-1], nil // EOF, repeatedly
	}
	t := l.toks[l.i]
	l.i++
	return t, nil
}

func participleTokens(toks []token) []lexer.Token {
	out := make([]lexer.Token, len(toks))
	for i, t := range toks {
		out[i] = lexer.Token{Type: tokenTypes[t.kind], Value: t.text,
			Pos: lexer.Position{Offset: t.off, Line: t.line, Column: t.col}}
	}
	return out
}

// grammar returns the whole grammar's parser, built once, on first use:
// building it is the largest part of a one-shot kql's CPU, so a statement
// that parses is parsed by subgrammar.go's parser of its own alternative,
// and this one is built for the errors (and by WarmGrammar, for a REPL).
var grammar = sync.OnceValue(func() *participle.Parser[gRoot] {
	return participle.MustBuild[gRoot](grammarOptions()...)
})

// grammarOptions are the whole grammar's and every sub-grammar's options.
func grammarOptions() []participle.Option {
	return []participle.Option{
		participle.Lexer(tokenDefinition{}),
		participle.CaseInsensitive("Ident", "Probe"),
		participle.ParseTypeWith(parseExprTokens),
		// No lookahead: once an alternative has matched its first token it is
		// chosen, so an error is reported at the token that broke it (the
		// "two" of PARTITION (0,two,2)), not where an enclosing rule gave up.
		participle.UseLookahead(0),
	}
}

// WarmGrammar builds the whole grammar on another goroutine: the
// interactive shell calls it while the user types, so a mistake's error
// (which the whole grammar explains) does not wait for the build.
func WarmGrammar() { go grammar() }

// parseTokens runs the grammar over toks, which must end with an EOF token.
func parseTokens(toks []lexer.Token) (*gRoot, error) {
	if r, ok := parseFirstKeyword(toks); ok {
		return r, nil
	}
	return parseWhole(toks)
}

// parseWhole runs the whole grammar over toks. errors.go's probes call it
// directly: they are nearly all failures, which the first keyword's parser
// would only try before the whole grammar (twice the cost of an error).
func parseWhole(toks []lexer.Token) (*gRoot, error) {
	peek, err := lexer.Upgrade(&sliceLexer{toks: toks})
	if err != nil {
		return nil, err
	}
	return grammar().ParseFromLexer(peek)
}
