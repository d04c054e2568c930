package lang

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// TestSeedBackslashNotDropped is the first seed bug: an escaper that did
// not escape the backslash wrote C:\temp\app.log as C:<tab>emp<bell>pp.log
// or dropped the backslashes. Written with escaped backslashes, the value
// is exactly C:\temp\app.log; written unescaped, \t is a tab (a valid
// escape) and \a is a syntax error at its backslash, never dropped.
func TestSeedBackslashNotDropped(t *testing.T) {
	st, err := Parse(`PRODUCE INTO "logs" VALUE "C:\\temp\\app.log"`)
	if err != nil {
		t.Fatal(err)
	}
	p := st.(*Produce)
	if p.Topic != "logs" || p.Value == nil || string(p.Value.Bytes) != `C:\temp\app.log` {
		t.Fatalf("got topic %q value %q, want logs and C:\\temp\\app.log", p.Topic, p.Value.Bytes)
	}
	// Format writes it back with the backslashes escaped.
	if got, want := Format(st), `PRODUCE INTO logs VALUE 'C:\\temp\\app.log'`; got != want {
		t.Errorf("Format = %s, want %s", got, want)
	}

	src := `PRODUCE INTO "logs" VALUE "C:\temp\app.log"`
	_, err = Parse(src)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("unescaped backslashes must be a syntax error, got %v", err)
	}
	if at := strings.Index(src, `\a`) + 1; e.Line != 1 || e.Col != at {
		t.Errorf("error at %d:%d, want 1:%d (the backslash of \\a)", e.Line, e.Col, at)
	}
	if !strings.Contains(e.Msg, `unknown escape \a`) {
		t.Errorf("message %q does not name the escape", e.Msg)
	}

	// Quote produces the escaped form for any path.
	lit := Quote([]byte(`C:\temp\app.log`))
	st, err = Parse("PRODUCE INTO logs VALUE " + lit)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(st.(*Produce).Value.Bytes); got != `C:\temp\app.log` {
		t.Errorf("Quote round trip gave %q", got)
	}
}

// TestSeedQuoteCannotInjectClause is the second seed bug: a value ending in
// a backslash-quote closed its own literal, and the rest of it set the
// partition. Quote must keep the whole thing one VALUE.
func TestSeedQuoteCannotInjectClause(t *testing.T) {
	for _, v := range []string{
		`a" PARTITION 3 VALUE "b`,
		`a\" PARTITION 3 VALUE \"b`,
		`a' PARTITION 3 VALUE 'b`,
		`a\' PARTITION 3 VALUE \'b`,
		"a` PARTITION 3 VALUE `b",
		`a\`,
		`\`,
	} {
		src := "PRODUCE INTO logs VALUE " + Quote([]byte(v))
		st, err := Parse(src)
		if err != nil {
			t.Errorf("Parse(%s): %v", src, err)
			continue
		}
		p := st.(*Produce)
		if p.Partition != nil || string(p.Value.Bytes) != v || p.Key != nil || p.Headers != nil {
			t.Errorf("Parse(%s) = %#v, want only VALUE %q", src, p, v)
		}
		// The same holds for a name quoted with QuoteName.
		src = "PRODUCE INTO " + QuoteName(v) + " VALUE 'x'"
		st, err = Parse(src)
		if err != nil {
			t.Errorf("Parse(%s): %v", src, err)
			continue
		}
		if p := st.(*Produce); p.Topic != v || p.Partition != nil || string(p.Value.Bytes) != "x" {
			t.Errorf("Parse(%s) = %#v, want topic %q", src, p, v)
		}
	}
}

func TestQuote(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `''`},
		{"hello", `'hello'`},
		{`it's`, `'it\'s'`},
		{`say "hi"`, `'say "hi"'`},
		{"back`tick", "'back`tick'"},
		{`C:\temp`, `'C:\\temp'`},
		{"a\nb\tc\rd\x00e", `'a\nb\tc\rd\0e'`},
		{"\x01\x1f\x7f", `'\x01\x1f\x7f'`},
		{"\xff\xfe", `'\xff\xfe'`},
		{"héllo wörld", `'héllo wörld'`},
		{"emoji \U0001F600", "'emoji \U0001F600'"},
		{"\u2028\u200b", `'\u{2028}\u{200B}'`},
		{"\xef\xbf\xbd", `'\u{FFFD}'`},
		{"\xe2\x82", `'\xe2\x82'`}, // truncated UTF-8
	}
	for _, tc := range cases {
		if got := Quote([]byte(tc.in)); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestQuoteName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"orders", "orders"},
		{"orders.v1", "orders.v1"},
		{"my_topic-2", "my_topic-2"},
		{"_internal", "_internal"},
		{"__consumer_offsets", "__consumer_offsets"},
		{"Orders", "Orders"},
		{"topics", `"topics"`},
		{"FROM", `"FROM"`},
		{"limit", `"limit"`},
		{"x", "x"},
		{"", `""`},
		{"2024-events", `"2024-events"`},
		{"-dash", `"-dash"`},
		{"a--b", `"a--b"`},
		{"has space", `"has space"`},
		{"semi;colon", `"semi;colon"`},
		{`quo"te`, `"quo\"te"`},
		{"zürich", `"zürich"`},
	}
	for _, tc := range cases {
		got := QuoteName(tc.in)
		if got != tc.want {
			t.Errorf("QuoteName(%q) = %s, want %s", tc.in, got, tc.want)
		}
		st, err := Parse("DESCRIBE TOPIC " + got)
		if tc.in == "" {
			continue // an empty topic name is rejected by the parser
		}
		if err != nil || st.(*DescribeTopic).Topic != tc.in {
			t.Errorf("DESCRIBE TOPIC %s: %v %#v", got, err, st)
		}
	}
}

func TestUnquote(t *testing.T) {
	cases := []struct {
		in   string
		want []byte
	}{
		{`''`, []byte{}},
		{`""`, []byte{}},
		{"``", []byte{}},
		{`'a\'b'`, []byte("a'b")},
		{`"a\"b"`, []byte(`a"b`)},
		{"`a\\`b`", []byte("a`b")},
		{`'\\\n\t\r\0'`, []byte("\\\n\t\r\x00")},
		{`'\xff\x00\xAb'`, []byte{0xff, 0, 0xab}},
		{`'\u{41}\u{e9}\u{1F600}\u{10FFFF}'`, []byte("Aé\U0001F600\U0010FFFF")},
		{`x'00ff'`, []byte{0, 0xff}},
		{`X'AbCd'`, []byte{0xab, 0xcd}},
		{`x''`, []byte{}},
		{"'raw\nnewline'", []byte("raw\nnewline")},
	}
	for _, tc := range cases {
		got, err := Unquote(tc.in)
		if err != nil {
			t.Errorf("Unquote(%s): %v", tc.in, err)
			continue
		}
		if got == nil || !bytes.Equal(got, tc.want) {
			t.Errorf("Unquote(%s) = %q, want %q (never nil)", tc.in, got, tc.want)
		}
	}
	bad := []struct {
		in  string
		col int
	}{
		{`abc`, 1},
		{``, 1},
		{`'abc`, 1},
		{`'a' b`, 4},
		{`'\q'`, 2},
		{`'\x1'`, 2},
		{`'\u{}'`, 2},
		{`'\u{1234567}'`, 2},
		{`'\u{DFFF}'`, 2},
		{`x'0'`, 1},
		{`x'0g'`, 4},
		{`x'00`, 2},
	}
	for _, tc := range bad {
		_, err := Unquote(tc.in)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Unquote(%s): want *Error, got %v", tc.in, err)
			continue
		}
		if e.Col != tc.col {
			t.Errorf("Unquote(%s): error at column %d, want %d: %v", tc.in, e.Col, tc.col, e)
		}
	}
}

// TestQuoteRoundTripRandom is the property: for any bytes, Quote reads back
// to exactly those bytes, through Unquote and through the parser. The
// generator favours the bytes that break escapers.
func TestQuoteRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(20260920))
	special := []byte{'\\', '\'', '"', '`', '\n', '\r', '\t', 0, ';', '-', '/', '*', 'x', 'u', '{', '}', 0x80, 0xc3, 0xa9, 0xff, 0xe2, 0x80, 0xa8}
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.Intn(24))
		for i := range b {
			if rng.Intn(2) == 0 {
				b[i] = special[rng.Intn(len(special))]
			} else {
				b[i] = byte(rng.Intn(256))
			}
		}
		q := Quote(b)
		got, err := Unquote(q)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("Unquote(Quote(%q)) = %q, %v (literal %s)", b, got, err, q)
		}
		st, err := Parse("PRODUCE INTO t HEADER " + QuoteName(string(b)) + " " + q + " VALUE " + q)
		if err != nil {
			t.Fatalf("parsing the quoted %q: %v", b, err)
		}
		p := st.(*Produce)
		if !bytes.Equal(p.Value.Bytes, b) || p.Headers[0].Key != string(b) || !bytes.Equal(p.Headers[0].Value.Bytes, b) || p.Partition != nil {
			t.Fatalf("parsed %q as %#v", b, p)
		}
	}
}

func TestKeywordsAndHelp(t *testing.T) {
	kw := Keywords()
	for i, k := range kw {
		if k != strings.ToUpper(k) || i > 0 && kw[i-1] >= k {
			t.Fatalf("Keywords not upper-case, sorted and unique at %q", k)
		}
		// Every keyword must really be one: quoted as a name, and usable
		// somewhere in the grammar (it appears in an expected list or parses).
		if QuoteName(strings.ToLower(k)) == strings.ToLower(k) {
			t.Errorf("keyword %s is not quoted by QuoteName", k)
		}
	}
	help := StatementHelp()
	if len(help) < 11 {
		t.Fatalf("StatementHelp has %d entries", len(help))
	}
	seen := map[reflect.Type]bool{}
	for _, h := range help {
		st, err := Parse(h.Example)
		if err != nil {
			t.Errorf("help example for %s does not parse: %v", h.Name, err)
			continue
		}
		if ex, ok := st.(*Explain); ok {
			seen[reflect.TypeOf(ex)] = true
			st = ex.Stmt
		}
		seen[reflect.TypeOf(st)] = true
		if !strings.HasPrefix(h.Syntax, strings.Fields(h.Name)[0]) {
			t.Errorf("help syntax for %s: %q", h.Name, h.Syntax)
		}
	}
	if len(seen) != 47 {
		t.Errorf("help examples cover %d statement types, want all 47", len(seen))
	}
}
