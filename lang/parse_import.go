package lang

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// PRODUCE INTO t FROM FILE 'path' | FROM STDIN [FORMAT f] {option}: the
// import form of PRODUCE. Its options name the choice a user must make:
// KEEP PARTITION or PARTITION BY KEY (the default), KEEP TIMESTAMP (the
// default) or TIMESTAMP NOW, KEY DELIMITER 'd' for FORMAT lines, and the
// schema clauses.

var importFormats = []string{"jsonl", "json", "csv", "tsv", "lines"}

func (s clauses) has(names ...string) bool {
	for _, n := range names {
		if _, ok := s[n]; ok {
			return true
		}
	}
	return false
}

func (ps *parseState) importClause(p *Produce, cl *gProduceClause, seen clauses) *Error {
	if p.From == nil {
		p.From = &ImportSource{Format: "jsonl"}
	}
	f := p.From
	switch {
	case cl.FromFile != nil || cl.FromStdin:
		if e := ps.once(seen, "FROM", "FROM", cl.Pos); e != nil {
			return e
		}
		if cl.FromStdin {
			f.Stdin = true
			return nil
		}
		b, e := ps.unquote(cl.Pos, *cl.FromFile)
		if e != nil {
			return e
		}
		if len(b) == 0 {
			e := ps.errAt(cl.Pos, "FROM FILE needs a file name")
			e.Hint = "for example: PRODUCE INTO orders FROM FILE 'orders.jsonl'"
			return e
		}
		f.File = string(b)
	case cl.Format != nil:
		if e := ps.once(seen, "FORMAT", "FORMAT", cl.Pos); e != nil {
			return e
		}
		name := strings.ToLower(cl.Format.Word + cl.Format.Str)
		for _, known := range importFormats {
			if name == known {
				f.Format = name
				return nil
			}
		}
		e := ps.errAt(cl.Format.Pos, "unknown import format %q", cl.Format.Word+cl.Format.Str)
		e.Expected = importFormats
		e.Hint = "kql reads back what --format jsonl, csv and tsv write; lines is one value per line, as kcat -P reads"
		return e
	case cl.KeyDelim != nil:
		if e := ps.once(seen, "KEY DELIMITER", "KEY DELIMITER", cl.Pos); e != nil {
			return e
		}
		b, e := ps.unquote(cl.Pos, *cl.KeyDelim)
		if e != nil {
			return e
		}
		if len(b) == 0 {
			return ps.errAt(cl.Pos, "KEY DELIMITER cannot be empty")
		}
		d := string(b)
		f.KeyDelimiter = &d
	case strings.EqualFold(cl.Keep, "PARTITION") || cl.PartByKey:
		name := "PARTITION BY KEY"
		if !cl.PartByKey {
			name = "KEEP PARTITION"
		}
		if e := ps.exclusive(seen, name, "KEEP PARTITION", "PARTITION BY KEY", cl.Pos); e != nil {
			return e
		}
		f.KeepPartition = !cl.PartByKey
	default: // KEEP TIMESTAMP, TIMESTAMP NOW
		name := "TIMESTAMP NOW"
		if !cl.StampNow {
			name = "KEEP TIMESTAMP"
		}
		if e := ps.exclusive(seen, name, "KEEP TIMESTAMP", "TIMESTAMP NOW", cl.Pos); e != nil {
			return e
		}
		f.StampNow = cl.StampNow
	}
	return nil
}

// exclusive records clause name, one of the pair a and b, of which only
// one may be given, once.
func (ps *parseState) exclusive(seen clauses, name, a, b string, pos lexer.Position) *Error {
	other := a
	if name == a {
		other = b
	}
	if first, ok := seen[other]; ok {
		e := ps.errAt(pos, "%s and %s cannot both be given", other, name)
		e.hintf("%s is at %v; choose one", other, ps.at(first))
		return e
	}
	return ps.once(seen, name, name, pos)
}

// checkImport checks the import form as a whole: a source, no record
// literals, a key delimiter only for lines, schema clauses without the
// literal they would otherwise need.
func (ps *parseState) checkImport(p *Produce, seen clauses) (Statement, *Error) {
	f := p.From
	if _, ok := seen["FROM"]; !ok {
		e := ps.errAtToken(len(ps.toks)-1, "an import needs FROM FILE 'path' or FROM STDIN")
		e.Expected = []string{"FROM"}
		e.Hint = "for example: PRODUCE INTO " + QuoteName(p.Topic) + " FROM FILE 'export.jsonl' FORMAT jsonl"
		return nil, e
	}
	for _, c := range []string{"KEY", "VALUE", "PARTITION", "HEADER"} {
		if pos, ok := seen[c]; ok {
			e := ps.errAt(pos, "%s cannot be given with FROM: the records, their keys, values, headers and partitions come from the input", c)
			e.Hint = "choose the partition with KEEP PARTITION or PARTITION BY KEY"
			return nil, e
		}
	}
	if p.Headers != nil {
		return nil, ps.errAtToken(len(ps.toks)-1, "HEADER cannot be given with FROM: the headers come from the input")
	}
	if pos, ok := seen["KEY DELIMITER"]; ok && f.Format != "lines" {
		e := ps.errAt(pos, "KEY DELIMITER is for FORMAT lines")
		e.Hint = "jsonl, csv and tsv records have their key field"
		return nil, e
	}
	if pos, ok := seen["KEEP PARTITION"]; ok && f.Format == "lines" {
		return nil, ps.errAt(pos, "KEEP PARTITION needs a format with a partition field (jsonl, csv, tsv): FORMAT lines has none")
	}
	return p, nil
}
