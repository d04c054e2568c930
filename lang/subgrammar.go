package lang

import (
	"strings"
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Building the whole grammar is most of a one-shot `kql -e`'s CPU (a
// profile of SHOW TOPICS put a third of the process in participle.Build, plus
// the GC of what it allocates), and one statement uses one of its
// alternatives. So a statement is first parsed by a parser of just the
// alternative its first keyword picks, built on first use; only when that
// fails, or the keyword picks none, does the whole grammar run, so every
// error (and errors.go's probing of what would have been accepted) is the
// whole grammar's, word for word.
//
// That is the same parse, not an approximation: the grammar has no
// lookahead (UseLookahead(0)), so an alternative that has matched its first
// token is the one chosen, and each first keyword below starts exactly one
// alternative of gRoot (ACCESS) or gStmt (the rest); the sub-grammar test
// checks both on every statement of the parser's tests.

// subParse parses the tokens after the first keyword's position into a root.
type subParse func(*lexer.PeekingLexer) (*gRoot, error)

// subGrammar returns a parser of the alternative T, built once on first use,
// whose result set places into a root.
func subGrammar[T any](set func(*gRoot, *T)) subParse {
	p := sync.OnceValue(func() *participle.Parser[T] { return participle.MustBuild[T](grammarOptions()...) })
	return func(peek *lexer.PeekingLexer) (*gRoot, error) {
		v, err := p().ParseFromLexer(peek)
		if err != nil {
			return nil, err
		}
		r := &gRoot{}
		set(r, v)
		return r, nil
	}
}

func stmtGrammar[T any](set func(*gStmt, *T)) subParse {
	return subGrammar(func(r *gRoot, v *T) {
		r.Stmt = &gStmt{}
		set(r.Stmt, v)
	})
}

// firstKeyword maps a statement's first keyword (upper case) to the parser
// of the one alternative that starts with it.
var firstKeyword = func() map[string]subParse {
	show := stmtGrammar(func(s *gStmt, v *gShow) { s.Show = v })
	describe := stmtGrammar(func(s *gStmt, v *gDescribe) { s.Describe = v })
	consume := stmtGrammar(func(s *gStmt, v *gConsume) { s.Consume = v })
	grant := stmtGrammar(func(s *gStmt, v *gGrant) { s.Grant = v })
	ops := stmtGrammar(func(s *gStmt, v *gOps) { s.Ops = v })
	return map[string]subParse{
		"ACCESS":   subGrammar(func(r *gRoot, v *gAccess) { r.Access = v }),
		"SHOW":     show,
		"DESCRIBE": describe,
		"DESC":     describe,
		"CONSUME":  consume,
		"SELECT":   consume,
		"PRODUCE":  stmtGrammar(func(s *gStmt, v *gProduce) { s.Produce = v }),
		"CREATE":   stmtGrammar(func(s *gStmt, v *gCreate) { s.Create = v }),
		"DROP":     stmtGrammar(func(s *gStmt, v *gDrop) { s.Drop = v }),
		"ALTER":    stmtGrammar(func(s *gStmt, v *gAlter) { s.Alter = v }),
		"RESET":    stmtGrammar(func(s *gStmt, v *gReset) { s.Reset = v }),
		"DELETE":   stmtGrammar(func(s *gStmt, v *gDelete) { s.Delete = v }),
		"GRANT":    grant,
		"DENY":     grant,
		"REVOKE":   stmtGrammar(func(s *gStmt, v *gRevoke) { s.Revoke = v }),
		"ABORT":    stmtGrammar(func(s *gStmt, v *gAbort) { s.Abort = v }),
		"CANCEL":   ops,
		"ELECT":    ops,
	}
}()

// secondKeyword narrows a first keyword's alternative by the keyword after
// it, where the alternative is large and its own first branches are not:
// SHOW's whole alternative (configs, quotas, ACLs, transactions, ...) took
// 1.5 ms to build, about a tenth of a one-shot SHOW TOPICS's CPU, and the
// listings alone take a fifth of that. Each second keyword here starts
// exactly one branch of gShow, which the sub-grammar test checks as it
// checks the first keywords.
var secondKeyword = func() map[string]map[string]subParse {
	listing := stmtGrammar(func(s *gStmt, v *gShowListing) {
		s.Show = &gShow{Listing: v.Listing, Like: v.Like, Query: v.Query}
	})
	return map[string]map[string]subParse{
		"SHOW": {"TOPICS": listing, "GROUPS": listing, "CONSUMERS": listing, "SUBJECTS": listing},
	}
}()

// gShowListing is gShow's first branch alone (SHOW TOPICS, GROUPS,
// CONSUMERS, SUBJECTS), with the same tags, so it reads those statements
// into the same fields.
type gShowListing struct {
	Listing string          `parser:"'SHOW' @('TOPICS' | 'GROUPS' | 'CONSUMERS' | 'SUBJECTS')"`
	Like    *gLike          `parser:"@@?"`
	Query   []*gQueryClause `parser:"@@*"`
}

// parseFirstKeyword parses toks with the alternative their first keyword
// picks; ok is false when it picks none or that parse failed, and the whole
// grammar must say why.
func parseFirstKeyword(toks []lexer.Token) (*gRoot, bool) {
	i, explain := 0, false
	if isGrammarWord(toks, 0, "EXPLAIN") {
		i, explain = 1, true
	}
	if i >= len(toks) || toks[i].Type != ttIdent {
		return nil, false
	}
	kw := strings.ToUpper(toks[i].Value)
	p := firstKeyword[kw]
	if i+1 < len(toks) && toks[i+1].Type == ttIdent {
		if q := secondKeyword[kw][strings.ToUpper(toks[i+1].Value)]; q != nil {
			p = q
		}
	}
	if p == nil {
		return nil, false
	}
	peek, err := lexer.Upgrade(&sliceLexer{toks: toks[i:]})
	if err != nil {
		return nil, false
	}
	r, err := p(peek)
	if err != nil {
		return nil, false
	}
	r.Explain = explain
	return r, true
}

func isGrammarWord(toks []lexer.Token, i int, w string) bool {
	return i < len(toks) && toks[i].Type == ttIdent && strings.EqualFold(toks[i].Value, w)
}
