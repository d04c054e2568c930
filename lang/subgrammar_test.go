package lang

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
)

// The parser of a statement's own alternative must read every statement
// exactly as the whole grammar does: same tree, for every statement the
// parser's tests parse. A first keyword mapped to the wrong alternative, or
// to one that an earlier alternative of the whole grammar also starts with,
// gives a different tree (or a parse where the whole grammar fails) here.
func TestSubGrammarReadsAsTheWholeGrammar(t *testing.T) {
	tables := [][]parseCase{parseCases, queryCases, aclParseCases, adminParseCases, opsParseCases,
		schemaParseCases, shareParseCases, txnParseCases, userParseCases}
	var srcs []string
	for _, tab := range tables {
		for _, c := range tab {
			// Lower case and behind a lower-case EXPLAIN, too: the first
			// keyword is looked up in any case, past an EXPLAIN.
			srcs = append(srcs, c.src, strings.ToLower(c.src), "explain "+c.src)
		}
	}
	// Statements the tables may not start with each keyword, and EXPLAIN.
	srcs = append(srcs, "EXPLAIN SHOW TOPICS", "EXPLAIN CONSUME t LIMIT 3", "desc topic t",
		"SELECT offset FROM newest", "EXPLAIN ACCESS User:alice READ ON TOPIC t")
	fast := 0
	for _, src := range srcs {
		toks, le := lex(src)
		if le != nil {
			t.Fatalf("lex(%q): %v", src, le)
		}
		for len(toks) > 1 && toks[len(toks)-2].kind == tkPunct && toks[len(toks)-2].text == ";" {
			toks = slices.Delete(toks, len(toks)-2, len(toks)-1)
		}
		ptoks := participleTokens(toks)
		got, ok := parseFirstKeyword(ptoks)
		peek, err := lexer.Upgrade(&sliceLexer{toks: ptoks})
		if err != nil {
			t.Fatal(err)
		}
		want, werr := grammar().ParseFromLexer(peek)
		switch {
		case ok && werr != nil:
			t.Errorf("%q: the sub-grammar parses what the whole grammar rejects (%v)", src, werr)
		case ok:
			// The trees hold maps keyed by their own nodes, so what is
			// compared is what they convert to: the statement and its error.
			gs, ge := (&parseState{src: src, toks: toks}).convert(got)
			ws, we := (&parseState{src: src, toks: toks}).convert(want)
			if !reflect.DeepEqual(gs, ws) || !reflect.DeepEqual(ge, we) {
				t.Errorf("%q: the sub-grammar reads it differently from the whole grammar\n got %#v, %v\nwant %#v, %v", src, gs, ge, ws, we)
			}
		case !ok && werr == nil && firstKeyword[strings.ToUpper(firstWord(ptoks))] != nil:
			t.Errorf("%q: the whole grammar parses it, its first keyword's sub-grammar does not", src)
		}
		if ok {
			fast++
		}
	}
	// INSERT is parsed outside the grammar; nearly everything else must
	// take the short way, or start-up pays for the whole grammar again.
	if fast < len(srcs)*9/10 {
		t.Errorf("only %d of %d statements parsed by their sub-grammar", fast, len(srcs))
	}
}

func firstWord(toks []lexer.Token) string {
	i := 0
	if isGrammarWord(toks, 0, "EXPLAIN") {
		i = 1
	}
	if i < len(toks) {
		return toks[i].Value
	}
	return ""
}

// A mistake's message probes the grammar dozens of times (errors.go's
// expectedAt), and nearly every probe fails: trying the first keyword's
// parser before the whole grammar on each of them doubled the cost of an
// error, which a REPL user pays on every typo. The error path must cost
// what it costs with the whole grammar alone.
func TestSubGrammarDoesNotSlowTheErrorPath(t *testing.T) {
	const src = "CONSUME orders FROM YESTERDAY LIMIT 5"
	parseErr := func() {
		if _, err := Parse(src); err == nil {
			t.Fatal("want an error")
		}
	}
	parseErr() // build the parsers first
	with := testing.AllocsPerRun(5, parseErr)
	save := firstKeyword
	firstKeyword = map[string]subParse{}
	defer func() { firstKeyword = save }()
	without := testing.AllocsPerRun(5, parseErr)
	if with > without*1.1 {
		t.Errorf("an error allocates %.0f times with the sub-grammars, %.0f with the whole grammar alone", with, without)
	}
}
