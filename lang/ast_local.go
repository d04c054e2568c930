package lang

import (
	"fmt"
	"strings"
)

// LocalSchema is KEY or VALUE AS PROTOBUF 'message' | AS AVRO 'file.avsc':
// the local schema (--proto-path, an .avsc file) a statement decodes or
// encodes that side with, over any \set or properties-file mapping.
type LocalSchema struct {
	Format string // "PROTOBUF" or "AVRO"
	Name   string // the message's full name, or the .avsc file's path
}

func (l *LocalSchema) String() string { return "AS " + l.Format + " " + Quote([]byte(l.Name)) }

func (ps *parseState) localSchema(g *gAsSchema) (*LocalSchema, *Error) {
	what := "message"
	if strings.EqualFold(g.Format, "AVRO") {
		what = "schema file"
	}
	name, e := ps.name(g.Name, what)
	if e != nil {
		return nil, e
	}
	return &LocalSchema{Format: strings.ToUpper(g.Format), Name: name}, nil
}

// checkProduceLocal checks PRODUCE's AS clauses: each needs its literal,
// and a side takes a registry SCHEMA or a local AS, not both.
func (ps *parseState) checkProduceLocal(p *Produce, seen clauses) *Error {
	sides := []struct {
		kw, example string
		lit         *Literal
		ref         *SchemaRef
		as          *LocalSchema
	}{
		{"KEY", `'"k1"'`, p.Key, p.KeySchema, p.KeyAs},
		{"VALUE", `'{"id": 1}'`, p.Value, p.ValueSchema, p.ValueAs},
	}
	for _, s := range sides {
		if s.as == nil {
			continue
		}
		at := seen[s.kw+" AS"]
		word := strings.ToLower(s.kw)
		switch {
		case s.ref != nil:
			e := ps.errAt(at, "%s AS %s and %s SCHEMA both say how to encode the %s: give one", s.kw, s.as.Format, s.kw, word)
			e.Hint = fmt.Sprintf("%s SCHEMA writes with the registry (wire-format header), %s AS writes the raw encoding of a local schema", s.kw, s.kw)
			return e
		case s.lit == nil:
			e := ps.errAt(at, "%s AS %s without a %s: there is no %s to encode", s.kw, s.as.Format, s.kw, word)
			e.Hint = fmt.Sprintf("write the %s as JSON text next to its schema, as in %s %s %s %s", word, s.kw, s.example, s.kw, s.as)
			return e
		case s.lit.Null:
			e := ps.errAt(at, "%s NULL is not encoded, so it takes no %s AS", s.kw, s.kw)
			e.Hint = fmt.Sprintf("a NULL %s is sent as no bytes, whatever the schema: drop %s AS", word, s.kw)
			return e
		}
	}
	return nil
}
