package lang

import (
	"fmt"
	"math"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

const (
	versionRange  = "a version is 1 to 2147483647"
	schemaIDRange = "a schema id is 1 to 2147483647"
)

func (ps *parseState) showSchemas(g *gShow) (Statement, *Error) {
	topic, e := ps.name(g.Schemas, "topic")
	if e != nil {
		return nil, e
	}
	st := &ShowSchemas{Topic: topic}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

func (ps *parseState) describeSubject(g *gDescribe) (Statement, *Error) {
	subject, e := ps.name(g.Subject, "subject")
	if e != nil {
		return nil, e
	}
	st := &DescribeSubject{Subject: subject}
	if g.Version != nil {
		v, e := ps.number(g.Version, 1, math.MaxInt32, "VERSION", versionRange)
		if e != nil {
			return nil, e
		}
		st.Version = int(v)
	}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

// schemaRef converts the SCHEMA clause after KEY or VALUE.
func (ps *parseState) schemaRef(g *gSchema) (*SchemaRef, *Error) {
	r := &SchemaRef{}
	seen := clauses{}
	if g.ID != nil {
		// SCHEMA ID n: the ID keyword is the token before the number.
		t := ps.toks[ps.tokenAt(g.ID.Pos.Offset)-1]
		seen["ID"] = lexer.Position{Offset: t.off, Line: t.line, Column: t.col}
		v, e := ps.number(g.ID, 1, math.MaxInt32, "schema id", schemaIDRange)
		if e != nil {
			return nil, e
		}
		r.ID, r.HasID = int(v), true
	} else {
		name, e := ps.name(g.Subject, "subject")
		if e != nil {
			return nil, e
		}
		r.Subject = name
	}
	for _, o := range g.Opts {
		if o.Message != nil {
			if e := ps.once(seen, "MESSAGE", "MESSAGE", o.Pos); e != nil {
				return nil, e
			}
			name, e := ps.name(o.Message, "message")
			if e != nil {
				return nil, e
			}
			r.Message = name
			continue
		}
		if o.Version != nil {
			if e := ps.once(seen, "VERSION", "VERSION", o.Pos); e != nil {
				return nil, e
			}
			v, e := ps.number(o.Version, 1, math.MaxInt32, "VERSION", versionRange)
			if e != nil {
				return nil, e
			}
			r.Version = int(v)
		} else {
			if e := ps.once(seen, "ID", "ID", o.Pos); e != nil {
				return nil, e
			}
			v, e := ps.number(o.ID, 1, math.MaxInt32, "schema id", schemaIDRange)
			if e != nil {
				return nil, e
			}
			r.ID, r.HasID = int(v), true
		}
		if r.Version != 0 && r.HasID {
			first := seen["VERSION"]
			if o.Version != nil {
				first = seen["ID"]
			}
			e := ps.errAt(o.Pos, "SCHEMA takes VERSION or ID, not both: a schema id already names one schema")
			e.hintf("keep VERSION for a version of the subject, or ID for a schema id (the other is at %v)", ps.at(first))
			return nil, e
		}
	}
	return r, nil
}

// checkProduceSchemas checks that each SCHEMA clause has a literal to
// encode: a KEY SCHEMA needs a KEY, and neither a NULL key nor a NULL value
// (a tombstone) is encoded, so a schema for one would be silently unused.
func (ps *parseState) checkProduceSchemas(p *Produce, seen clauses) *Error {
	sides := []struct {
		kw, example string
		lit         *Literal
		ref         *SchemaRef
	}{
		{"KEY", `'"k1"'`, p.Key, p.KeySchema},
		{"VALUE", `'{"id": 1}'`, p.Value, p.ValueSchema},
	}
	for _, s := range sides {
		if s.ref == nil {
			continue
		}
		at := seen[s.kw+" SCHEMA"]
		word := strings.ToLower(s.kw)
		switch {
		case s.lit == nil:
			e := ps.errAt(at, "%s SCHEMA without a %s: there is no %s to encode", s.kw, s.kw, word)
			e.Hint = fmt.Sprintf("write the %s as JSON text next to its schema, as in %s %s %s %s",
				word, s.kw, s.example, s.kw, schemaRefText(s.ref))
			return e
		case s.lit.Null:
			e := ps.errAt(at, "%s NULL is not encoded, so it takes no %s SCHEMA", s.kw, s.kw)
			e.Hint = fmt.Sprintf("a NULL %s is sent as no bytes, whatever the schema: drop %s SCHEMA", word, s.kw)
			if s.kw == "VALUE" {
				e.Hint = "a NULL value is a tombstone, sent as no bytes whatever the schema: drop VALUE SCHEMA"
			}
			return e
		}
	}
	return nil
}

// schemaHint explains the slips around the schema statements that the
// grammar alone reports badly: a missing FOR TOPIC after SHOW SCHEMAS,
// VERSION read as a subject's name because the subject was left out,
// VERSION without its number, and a subject written after ID n. It comes
// after the general hints, so a typo still gets "did you mean".
func (ps *parseState) schemaHint(i int, exp expectation) string {
	word := func(k int) string {
		if k < 0 || k >= len(ps.toks) || ps.toks[k].kind != tkWord {
			return ""
		}
		return strings.ToUpper(ps.toks[k].text)
	}
	tok := ps.toks[i]
	inQuery := false // a word in WHERE or ORDER BY is a column, not a keyword
	for k := 0; k < i; k++ {
		if w := word(k); w == "WHERE" || w == "ORDER" {
			inQuery = true
		}
	}
	start := 0
	if word(0) == "EXPLAIN" {
		start = 1
	}
	switch {
	case word(start) == "SHOW" && word(start+1) == "SCHEMAS" && (i == start+2 || i == start+3 && word(start+2) == "FOR"):
		topic := "name"
		if tok.kind == tkWord && word(i) != "TOPIC" || tok.kind == tkString {
			topic = tok.text // as written: a bare or quoted name
		}
		return "SHOW SCHEMAS FOR TOPIC " + topic + " shows the subjects of a topic's key and value; SHOW SUBJECTS lists every subject"
	case i >= 2 && word(i-1) == "VERSION" && tok.kind == tkNumber && (word(i-2) == "SCHEMA" || word(i-2) == "SUBJECT") && !inQuery:
		if word(i-2) == "SUBJECT" {
			return "VERSION was read as the subject's name: name the subject first, as in DESCRIBE SUBJECT 'orders-value' VERSION " + tok.text
		}
		return "VERSION was read as the subject's name: name the subject first, as in VALUE SCHEMA 'orders-value' VERSION " + tok.text
	case i >= 1 && word(i-1) == "VERSION" && exp.classes[tkNumber] && !inQuery: // the keyword VERSION, not a name
		return "VERSION takes a version number of the subject, as in VERSION 2; without VERSION the latest version is used"
	case i >= 4 && (tok.kind == tkString || tok.kind == tkWord) && ps.toks[i-1].kind == tkNumber && word(i-2) == "ID" &&
		word(i-3) == "SCHEMA" && (word(i-4) == "KEY" || word(i-4) == "VALUE" || word(i-4) == "PAYLOAD"):
		return fmt.Sprintf("the subject comes right after SCHEMA: %s SCHEMA %s ID %s", word(i-4), tok.text, ps.toks[i-1].text)
	case i >= 1 && (word(i-1) == "SCHEMA" || word(i-1) == "SUBJECT") && tok.kind == tkEOF:
		return "a subject is named as in the registry, often topic-value or topic-key: 'orders-value'"
	}
	return ""
}
