package lang

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		name   string
		script string
		want   []Source
	}{
		{"empty", "", nil},
		{"only space", " \n\t ", nil},
		{"one without semicolon", "SHOW TOPICS", []Source{{"SHOW TOPICS", 1, 1}}},
		{"one with semicolon", "SHOW TOPICS;", []Source{{"SHOW TOPICS", 1, 1}}},
		{"two on a line", "SHOW TOPICS; SHOW BROKERS;", []Source{{"SHOW TOPICS", 1, 1}, {"SHOW BROKERS", 1, 14}}},
		{"last semicolon optional", "SHOW TOPICS;\nSHOW BROKERS", []Source{{"SHOW TOPICS", 1, 1}, {"SHOW BROKERS", 2, 1}}},
		{"empty statements dropped", ";;SHOW TOPICS;;  ;\n;", []Source{{"SHOW TOPICS", 1, 3}}},
		{"leading space and trailing space trimmed", "  \n\t SHOW TOPICS \t\n ;", []Source{{"SHOW TOPICS", 2, 3}}},
		{"multi-line statement", "CONSUME orders\n  FROM OLDEST\n  LIMIT 5;", []Source{{"CONSUME orders\n  FROM OLDEST\n  LIMIT 5", 1, 1}}},
		{"semicolon in single quotes", "PRODUCE t VALUE 'a;b'; SHOW TOPICS", []Source{{"PRODUCE t VALUE 'a;b'", 1, 1}, {"SHOW TOPICS", 1, 24}}},
		{"semicolon in double quotes", `PRODUCE t VALUE "a;b";`, []Source{{`PRODUCE t VALUE "a;b"`, 1, 1}}},
		{"semicolon in backquotes", "DESCRIBE TOPIC `a;b`;", []Source{{"DESCRIBE TOPIC `a;b`", 1, 1}}},
		{"escaped quote does not close", `PRODUCE t VALUE 'it\'s; fine'; SHOW TOPICS`, []Source{{`PRODUCE t VALUE 'it\'s; fine'`, 1, 1}, {"SHOW TOPICS", 1, 32}}},
		{"escaped backslash before quote closes", `PRODUCE t VALUE 'a\\'; SHOW TOPICS`, []Source{{`PRODUCE t VALUE 'a\\'`, 1, 1}, {"SHOW TOPICS", 1, 24}}},
		{"other quotes inside quotes", `PRODUCE t VALUE '"; ` + "`" + `'; SHOW TOPICS`, []Source{{`PRODUCE t VALUE '"; ` + "`" + `'`, 1, 1}, {"SHOW TOPICS", 1, 25}}},
		{"semicolon in hex literal quotes", "PRODUCE t VALUE x'00;'; SHOW TOPICS", []Source{{"PRODUCE t VALUE x'00;'", 1, 1}, {"SHOW TOPICS", 1, 25}}},
		{"newline in quotes", "PRODUCE t VALUE 'line1\nline2;';\nSHOW TOPICS", []Source{{"PRODUCE t VALUE 'line1\nline2;'", 1, 1}, {"SHOW TOPICS", 3, 1}}},
		{"semicolon in line comment", "SHOW TOPICS -- not here; really\n;SHOW BROKERS", []Source{{"SHOW TOPICS -- not here; really", 1, 1}, {"SHOW BROKERS", 2, 2}}},
		{"semicolon in block comment", "SHOW /* a; b */ TOPICS; SHOW BROKERS", []Source{{"SHOW /* a; b */ TOPICS", 1, 1}, {"SHOW BROKERS", 1, 25}}},
		{"multi-line block comment", "/* a;\n b; */ SHOW TOPICS;", []Source{{"SHOW TOPICS", 2, 8}}},
		{"comment-only statements dropped", "-- header\n/* x */;\n-- trailer", nil},
		{"leading comment skipped", "-- list them\nSHOW TOPICS;", []Source{{"SHOW TOPICS", 2, 1}}},
		{"dash inside names is not a comment", "DESCRIBE TOPIC my-topic-2;", []Source{{"DESCRIBE TOPIC my-topic-2", 1, 1}}},
		{"double dash inside a word starts a comment", "DESCRIBE TOPIC a--b;c\n;", []Source{{"DESCRIBE TOPIC a--b;c", 1, 1}}},
		{"slash alone is not a comment", "SHOW / TOPICS; x", []Source{{"SHOW / TOPICS", 1, 1}, {"x", 1, 16}}},
		{"columns count characters", "PRODUCE t VALUE 'ü'; SHOW TOPICS", []Source{{"PRODUCE t VALUE 'ü'", 1, 1}, {"SHOW TOPICS", 1, 22}}},
		{"CRLF line endings", "SHOW TOPICS;\r\nSHOW BROKERS;\r\n", []Source{{"SHOW TOPICS", 1, 1}, {"SHOW BROKERS", 2, 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.script)
			if err != nil {
				t.Fatalf("Split: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Split(%q)\n got %+v\nwant %+v", tc.script, got, tc.want)
			}
		})
	}
}

func TestSplitErrors(t *testing.T) {
	cases := []struct {
		name      string
		script    string
		line, col int
		msg       string
		before    int // statements returned with the error
	}{
		{"unclosed single quote", "SHOW TOPICS;\nPRODUCE t VALUE 'abc;\nSHOW BROKERS;", 2, 17, "unclosed quote: this ' has no closing '", 1},
		{"unclosed double quote", `DESCRIBE TOPIC "x`, 1, 16, `unclosed quote: this " has no closing "`, 0},
		{"unclosed backquote", "DESCRIBE TOPIC `x", 1, 16, "unclosed quote", 0},
		{"escaped closing quote", `PRODUCE t VALUE 'a\'`, 1, 17, "unclosed quote", 0},
		{"backslash at the very end", `PRODUCE t VALUE 'a\`, 1, 17, "unclosed quote", 0},
		{"unclosed hex", "PRODUCE t VALUE x'00", 1, 18, "unclosed quote", 0},
		{"unclosed block comment", "SHOW TOPICS; /* never\nclosed", 1, 14, "unclosed comment: this /* has no closing */", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.script)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("want *Error, got %v", err)
			}
			if e.Line != tc.line || e.Col != tc.col || !strings.HasPrefix(e.Msg, tc.msg) {
				t.Errorf("got %d:%d %q, want %d:%d %q", e.Line, e.Col, e.Msg, tc.line, tc.col, tc.msg)
			}
			if len(got) != tc.before {
				t.Errorf("got %d statements before the error, want %d", len(got), tc.before)
			}
			lines := strings.Split(e.Error(), "\n")
			if len(lines) < 3 || strings.IndexByte(lines[2], '^') != tc.col-1 {
				t.Errorf("caret not at column %d:\n%s", tc.col, e.Error())
			}
		})
	}
}

// TestSplitAgreesWithLexer: for statements that lex, the splitter and the
// lexer agree on where quotes and comments end, so every piece Split
// returns is one whole statement.
func TestSplitAgreesWithLexer(t *testing.T) {
	script := "PRODUCE t VALUE 'a;b\\';c' KEY \"x;\" HEADER `h;` x'3b';\n" +
		"SHOW TOPICS /* ; */ -- ;\n;" +
		"DESCRIBE TOPIC a-b.c_d;"
	srcs, err := Split(script)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 3 {
		t.Fatalf("got %d statements: %+v", len(srcs), srcs)
	}
	for _, s := range srcs {
		if _, err := ParseSource(s); err != nil {
			t.Errorf("statement %q does not parse: %v", s.Text, err)
		}
	}
}

func TestBuffer(t *testing.T) {
	var b Buffer
	if !b.Empty() || b.Complete() {
		t.Fatal("new buffer should be empty and incomplete")
	}
	b.Add("SHOW TOPICS; CONSUME orders")
	if !b.Complete() || b.Empty() {
		t.Fatal("want complete and not empty")
	}
	got := b.Take()
	if want := []Source{{"SHOW TOPICS", 1, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Take = %+v, want %+v", got, want)
	}
	if b.Complete() || b.Empty() || b.Pending() != "CONSUME orders" {
		t.Fatalf("after Take: complete=%v empty=%v pending=%q", b.Complete(), b.Empty(), b.Pending())
	}
	b.Add("  FROM NEWEST")
	if b.Complete() {
		t.Fatal("no ';' yet")
	}
	b.Add("  LIMIT 5; SHOW")
	got = b.Take()
	// Positions count from the first line added since the buffer was empty.
	if want := []Source{{"CONSUME orders\n  FROM NEWEST\n  LIMIT 5", 1, 14}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Take = %+v, want %+v", got, want)
	}
	if b.Pending() != "SHOW" {
		t.Fatalf("pending %q", b.Pending())
	}
	b.Add("BROKERS;")
	got = b.Take()
	if want := []Source{{"SHOW\nBROKERS", 3, 12}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Take = %+v, want %+v", got, want)
	}
	if !b.Empty() || b.Pending() != "" {
		t.Fatalf("want empty, pending %q", b.Pending())
	}
	// Once empty, positions start again at line 1.
	b.Add("SHWO TOPICS;")
	got = b.Take()
	if want := []Source{{"SHWO TOPICS", 1, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Take = %+v, want %+v", got, want)
	}
}

func TestBufferQuotesAndComments(t *testing.T) {
	var b Buffer
	b.Add("PRODUCE t VALUE 'first line;")
	if b.Complete() || b.Empty() {
		t.Fatal("a ';' inside an open quote does not complete a statement")
	}
	b.Add("second line';")
	got := b.Take()
	if want := []Source{{"PRODUCE t VALUE 'first line;\nsecond line'", 1, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Take = %+v, want %+v", got, want)
	}
	if !b.Empty() {
		t.Fatal("want empty")
	}

	b.Add("/* a comment; that goes on")
	if b.Complete() || b.Empty() {
		t.Fatal("an open /* comment is pending input")
	}
	b.Add("and ends */")
	if !b.Empty() {
		t.Fatal("a closed comment alone leaves the buffer empty")
	}
	b.Add("-- just a comment; with a semicolon")
	if b.Complete() || !b.Empty() {
		t.Fatal("a line comment is not a statement")
	}
	b.Reset()
	if !b.Empty() || b.Pending() != "" {
		t.Fatal("Reset should empty the buffer")
	}
}

func TestBufferFlush(t *testing.T) {
	var b Buffer
	b.Add("SHOW TOPICS;")
	b.Add("SHOW BROKERS")
	got, err := b.Flush()
	if err != nil {
		t.Fatal(err)
	}
	if want := []Source{{"SHOW TOPICS", 1, 1}, {"SHOW BROKERS", 2, 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Flush = %+v, want %+v", got, want)
	}
	if !b.Empty() {
		t.Fatal("Flush should empty the buffer")
	}
	b.Add("PRODUCE t VALUE 'open")
	_, err = b.Flush()
	var e *Error
	if !errors.As(err, &e) || e.Line != 1 || e.Col != 17 {
		t.Fatalf("want unclosed quote at 1:17, got %v", err)
	}
}

// TestBufferMatchesSplit: feeding a script line by line gives the same
// statements as splitting it whole.
func TestBufferMatchesSplit(t *testing.T) {
	script := "SHOW TOPICS; PRODUCE t VALUE 'a;\nb' KEY `k`;\n/* c;\n */ CONSUME t\n-- x;\nLIMIT 5; SHOW BROKERS"
	want, err := Split(script)
	if err != nil {
		t.Fatal(err)
	}
	var b Buffer
	var got []Source
	for _, line := range strings.Split(script, "\n") {
		b.Add(line)
		got = append(got, b.Take()...)
	}
	rest, err := b.Flush()
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, rest...)
	var gotText, wantText []string
	for _, s := range got {
		gotText = append(gotText, s.Text)
	}
	for _, s := range want {
		wantText = append(wantText, s.Text)
	}
	if !reflect.DeepEqual(gotText, wantText) {
		t.Errorf("buffer %q\nsplit  %q", gotText, wantText)
	}
}
