package lang

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

var iterationsRange = fmt.Sprintf("Kafka takes %d to %d SCRAM iterations", MinScramIterations, MaxScramIterations)

func mechanismOf(word string) ScramMechanism {
	if strings.EqualFold(word, "SCRAM-SHA-256") {
		return ScramSHA256
	}
	return ScramSHA512
}

// userSpec converts what CREATE USER and ALTER USER both take: the user's
// name and MECHANISM and ITERATIONS, each at most once.
func (ps *parseState) userSpec(name *gName, opts []*gUserOpt) (user string, mech ScramMechanism, iters int32, e *Error) {
	if user, e = ps.name(name, "user"); e != nil {
		return "", 0, 0, e
	}
	seen := clauses{}
	for _, o := range opts {
		if o.Mechanism != "" {
			if e := ps.once(seen, "MECHANISM", "MECHANISM", o.Pos); e != nil {
				return "", 0, 0, e
			}
			mech = mechanismOf(o.Mechanism)
			continue
		}
		if e := ps.once(seen, "ITERATIONS", "ITERATIONS", o.Pos); e != nil {
			return "", 0, 0, e
		}
		v, e := ps.number(o.Iterations, MinScramIterations, MaxScramIterations, "ITERATIONS", iterationsRange)
		if e != nil {
			return "", 0, 0, e
		}
		iters = int32(v)
	}
	return user, mech, iters, nil
}

func (ps *parseState) createUser(g *gUserSpec) (Statement, *Error) {
	user, mech, iters, e := ps.userSpec(g.Name, g.Opts)
	if e != nil {
		return nil, e
	}
	return &CreateUser{User: user, Mechanism: mech, Iterations: iters}, nil
}

func (ps *parseState) alterUser(g *gAlterUser) (Statement, *Error) {
	user, mech, iters, e := ps.userSpec(g.Name, g.Opts)
	if e != nil {
		return nil, e
	}
	return &AlterUser{User: user, Mechanism: mech, Iterations: iters}, nil
}

func (ps *parseState) dropUser(g *gDropUser) (Statement, *Error) {
	user, e := ps.name(g.Name, "user")
	if e != nil {
		return nil, e
	}
	st := &DropUser{User: user}
	if g.Mechanism != "" {
		st.Mechanism = mechanismOf(g.Mechanism)
	}
	return st, nil
}

// quotaEntity converts FOR's parts: one of USER, CLIENT and IP, or USER
// and CLIENT together (in either order; kept user first), as Kafka's
// quota entities are.
func (ps *parseState) quotaEntity(g *gQuotaEntity) (QuotaEntity, *Error) {
	var ent QuotaEntity
	for i, p := range g.Parts {
		kw := p.Kind
		if p.Default != "" {
			kw = p.Default
		}
		part := QuotaPart{Default: p.Default != ""}
		switch strings.ToUpper(kw) {
		case "USER":
			part.Kind = QuotaUser
		case "CLIENT":
			part.Kind = QuotaClient
		default:
			part.Kind = QuotaIP
		}
		if p.Name != nil {
			what := map[QuotaKind]string{QuotaUser: "user", QuotaClient: "client id", QuotaIP: "IP address"}[part.Kind]
			name, e := ps.name(p.Name, what)
			if e != nil {
				return ent, e
			}
			part.Name = name
		}
		if i > 0 {
			first := ent.Parts[0]
			switch {
			case i > 1:
				e := ps.errAt(p.Pos, "a quota is for at most a user and a client id")
				e.Hint = "for example: FOR USER alice CLIENT reporting"
				return ent, e
			case first.Kind == part.Kind:
				e := ps.errAt(p.Pos, "%s given twice", part.Kind.keyword())
				e.Hint = "a quota is for one user, one client id, a user and a client id, or one IP address"
				return ent, e
			case first.Kind == QuotaIP || part.Kind == QuotaIP:
				e := ps.errAt(p.Pos, "an IP quota stands alone: Kafka does not combine IP with USER or CLIENT")
				e.Hint = "write FOR IP 'address' (or FOR DEFAULT IP) on its own"
				return ent, e
			}
			if part.Kind == QuotaUser {
				ent.Parts = []QuotaPart{part, first}
				continue
			}
		}
		ent.Parts = append(ent.Parts, part)
	}
	return ent, nil
}

func (e QuotaEntity) isIP() bool { return len(e.Parts) == 1 && e.Parts[0].Kind == QuotaIP }

func (ps *parseState) showQuotas(g *gShow) (Statement, *Error) {
	st := &ShowQuotas{}
	if g.Quotas.For != nil {
		ent, e := ps.quotaEntity(g.Quotas.For)
		if e != nil {
			return nil, e
		}
		st.For = &ent
	}
	if e := ps.query(g.Query, st); e != nil {
		return nil, e
	}
	return st, nil
}

// quotaKey checks a key against Kafka's quota keys for the entity.
func (ps *parseState) quotaKey(at *gName, ent QuotaEntity) (QuotaKey, *Error) {
	name, e := ps.name(at, "quota key")
	if e != nil {
		return QuotaKey{}, e
	}
	var valid []string
	for _, k := range QuotaKeys {
		if k.IP == ent.isIP() {
			valid = append(valid, k.Name)
		}
	}
	for _, k := range QuotaKeys {
		if k.Name != strings.ToLower(name) {
			continue
		}
		if k.IP != ent.isIP() {
			if k.IP {
				e := ps.errAt(at.Pos, "%s is a quota of IP addresses, not of users or client ids", k.Name)
				e.Hint = "write ALTER QUOTA FOR IP 'address' SET (" + k.Name + " = n); a user or client id takes " + strings.Join(valid, ", ")
				return QuotaKey{}, e
			}
			e := ps.errAt(at.Pos, "%s is a quota of users and client ids, not of IP addresses", k.Name)
			e.Hint = "an IP address takes only " + strings.Join(valid, ", ")
			return QuotaKey{}, e
		}
		return k, nil
	}
	e = ps.errAt(at.Pos, "unknown quota key %s", name)
	e.Expected = valid
	if best, d := "", 3; true {
		for _, k := range valid {
			if dd := editDistance(strings.ToLower(name), k); dd < d {
				best, d = k, dd
			}
		}
		if best != "" {
			e.Hint = "did you mean " + best + "?"
		}
	}
	return QuotaKey{}, e
}

func (ps *parseState) quotaValue(key QuotaKey, g *gQuotaNum) (float64, *Error) {
	text := g.Num + g.Dec
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || g.Dec != "" && !decimalRe().MatchString(g.Dec) {
		e := ps.errAt(g.Pos, "%s is not a number", text)
		e.Hint = key.Name + " takes a number, as in " + key.Name + " = 1048576"
		return 0, e
	}
	// Kafka's controller refuses 0 and less (UNSET removes a quota), and
	// a value past the range of the key's type.
	if v <= 0 {
		e := ps.errAt(g.Pos, "%s = %s is out of range: Kafka takes a quota greater than 0", key.Name, text)
		e.Hint = "UNSET (" + key.Name + ") removes the quota"
		return 0, e
	}
	if key.Max > 0 && v > float64(key.Max) || math.IsInf(v, 0) {
		return 0, ps.errAt(g.Pos, "%s = %s is out of range: Kafka takes at most %d", key.Name, text, key.Max)
	}
	if key.Whole && v != math.Trunc(v) {
		e := ps.errAt(g.Pos, "%s takes a whole number, not %s", key.Name, text)
		e.Hint = fmt.Sprintf("Kafka types %s as a whole number: write %s = %d", key.Name, key.Name, int64(v))
		return 0, e
	}
	return v, nil
}

func (ps *parseState) alterQuota(g *gAlterQuota) (Statement, *Error) {
	ent, e := ps.quotaEntity(g.Entity)
	if e != nil {
		return nil, e
	}
	st := &AlterQuota{Entity: ent}
	seen := clauses{}
	keys := map[string]string{}
	once := func(key string, clause string, at *gName) *Error {
		if first, dup := keys[key]; dup {
			if first == clause {
				return ps.errAt(at.Pos, "quota key %s given twice", key)
			}
			return ps.errAt(at.Pos, "quota key %s is both SET and UNSET: say which", key)
		}
		keys[key] = clause
		return nil
	}
	for _, cl := range g.Clauses {
		if cl.Set != nil {
			if e := ps.once(seen, "SET", "SET", cl.Pos); e != nil {
				return nil, e
			}
			for _, kv := range cl.Set {
				k, e := ps.quotaKey(kv.Name, ent)
				if e != nil {
					return nil, e
				}
				if e := once(k.Name, "SET", kv.Name); e != nil {
					return nil, e
				}
				v, e := ps.quotaValue(k, kv.Value)
				if e != nil {
					return nil, e
				}
				st.Set = append(st.Set, QuotaValue{Key: k.Name, Value: v})
			}
			continue
		}
		if e := ps.once(seen, "UNSET", "UNSET", cl.Pos); e != nil {
			return nil, e
		}
		for _, n := range cl.Unset {
			k, e := ps.quotaKey(n, ent)
			if e != nil {
				return nil, e
			}
			if e := once(k.Name, "UNSET", n); e != nil {
				return nil, e
			}
			st.Unset = append(st.Unset, k.Name)
		}
	}
	return st, nil
}

// usersHint explains a password written into CREATE USER or ALTER USER:
// kql never takes one in a statement, so it cannot end up in the history,
// EXPLAIN or an error.
func (ps *parseState) usersHint(i int) string {
	start := 0
	if ps.toks[0].kind == tkWord && strings.EqualFold(ps.toks[0].text, "EXPLAIN") {
		start = 1
	}
	if len(ps.toks) < start+2 || !strings.EqualFold(ps.toks[start+1].text, "USER") {
		return ""
	}
	verb := strings.ToUpper(ps.toks[start].text)
	tok := ps.toks[i]
	isPassword := tok.kind == tkWord && strings.EqualFold(tok.text, "PASSWORD")
	if verb == "CREATE" && (isPassword || tok.kind == tkString && i > start+2) ||
		verb == "ALTER" && i > 0 && strings.EqualFold(ps.toks[i-1].text, "PASSWORD") && tok.kind != tkEOF && tok.kind != tkWord {
		return passwordHint
	}
	return ""
}

// userStatementNameAt is the index of the user's name in [EXPLAIN] CREATE
// USER name ... or ALTER USER name ..., or -1 for any other statement.
func userStatementNameAt(toks []token) int {
	start := 0
	if len(toks) > 0 && toks[0].kind == tkWord && strings.EqualFold(toks[0].text, "EXPLAIN") {
		start = 1
	}
	if len(toks) < start+2 || toks[start].kind != tkWord || toks[start+1].kind != tkWord ||
		!strings.EqualFold(toks[start+1].text, "USER") ||
		!strings.EqualFold(toks[start].text, "CREATE") && !strings.EqualFold(toks[start].text, "ALTER") {
		return -1
	}
	return start + 2
}

// secretTokens are the tokens of CREATE or ALTER USER that may be a
// password typed into the statement: every string after the user's name,
// and whatever follows PASSWORD, BY or '=' (PASSWORD 'x', WITH PASSWORD x,
// IDENTIFIED BY 'x', SET PASSWORD = x) up to the next MECHANISM or
// ITERATIONS. The grammar has a place for none of them, so a statement
// holding one never parses: only its error must hide them.
func secretTokens(toks []token) []int {
	name := userStatementNameAt(toks)
	if name < 0 {
		return nil
	}
	var out []int
	afterPassword, optionValue := false, false
	for i := name + 1; i < len(toks) && toks[i].kind != tkEOF; i++ {
		t := toks[i]
		word := ""
		if t.kind == tkWord {
			word = strings.ToUpper(t.text)
		}
		switch {
		case t.kind == tkString:
			out = append(out, i)
		case optionValue:
			// MECHANISM's or ITERATIONS' own value.
		case word == "PASSWORD" || word == "BY" || t.kind == tkPunct && t.text == "=":
			afterPassword = true
		case word == "MECHANISM" || word == "ITERATIONS":
			optionValue = true
			continue
		case afterPassword && !nearUserKeyword(word):
			out = append(out, i)
		}
		optionValue = false
	}
	return out
}

// nearUserKeyword reports whether word is, or is a slip of, a keyword of
// the user statements (ITERATONS): a mistake to point at, not a password.
func nearUserKeyword(word string) bool {
	if word == "" {
		return false
	}
	for _, k := range []string{"MECHANISM", "ITERATIONS", "PASSWORD", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		if editDistance(word, k) <= 2 {
			return true
		}
	}
	return false
}

// hidePasswords keeps what may be a password typed into CREATE or ALTER
// USER out of the statement's error: the source line shows it as '*', the
// message does not quote it, and HoldsSecret tells the shell to keep the
// statement out of its history (even when the password is on a line the
// error does not show).
func hidePasswords(src string, e *Error) {
	toks, le := lex(src)
	tail := -1 // a lexing error's offset: the rest of its line may be a password
	if le != nil {
		prefix, ple := lex(src[:le.off])
		if ple != nil || userStatementNameAt(prefix) < 0 {
			return
		}
		toks, tail = prefix, le.off
	}
	secret := secretTokens(toks)
	if len(secret) == 0 && tail < 0 {
		return
	}
	e.secret = true
	atSecret := false
	for _, i := range secret {
		t := toks[i]
		if t.line == e.Line {
			e.masks = append(e.masks, [2]int{t.col, t.width})
		}
		if t.line == e.Line && t.col == e.Col || strings.Contains(e.Msg, t.text) {
			atSecret = true
		}
	}
	if tail >= 0 {
		line, col := posAt(src, tail)
		if line == e.Line {
			e.masks = append(e.masks, [2]int{col, len([]rune(e.SourceLine)) - col + 1})
		}
		return // the lexer's own message and hint say what to fix
	}
	switch {
	case atSecret:
		e.Msg = "a password is never written in a statement"
		e.Hint = "kql asks for the new password without echo on a terminal, or reads it from $KQL_NEW_PASSWORD"
	case e.Hint == "":
		e.Hint = passwordHint
	}
}

const passwordHint = "a password is never written in a statement: kql asks for it without echo on a terminal, or reads $KQL_NEW_PASSWORD"

// HoldsSecret reports whether the error is about a password typed into a
// statement: the shell keeps such a statement out of its history.
func (e *Error) HoldsSecret() bool { return e.secret }

// maskedLine is SourceLine with the masked columns as '*'.
func (e *Error) maskedLine() string {
	if len(e.masks) == 0 {
		return e.SourceLine
	}
	line := []rune(e.SourceLine)
	for _, m := range e.masks {
		for c := m[0] - 1; c < m[0]-1+m[1] && c < len(line); c++ {
			if c >= 0 {
				line[c] = '*'
			}
		}
	}
	return string(line)
}
