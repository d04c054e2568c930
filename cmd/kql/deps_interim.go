package main

// Interim stand-ins for the lang, render and history APIs that are being
// built on other branches. Each is the smallest thing that lets the shell
// compile and its tests run; this file is deleted when those branches are
// merged and deps.go calls the real packages.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

type source struct {
	Text      string
	Line, Col int
}

func splitScript(text string) ([]source, error) {
	var out []source
	line, col := 1, 1
	start, sl, sc := 0, 1, 1
	inQuote := byte(0)
	began := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !began && !isSpace(c) {
			began, start, sl, sc = true, i, line, col
		}
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
		case c == '\'' || c == '"':
			inQuote = c
		case c == ';':
			if began {
				out = append(out, source{Text: text[start : i+1], Line: sl, Col: sc})
			}
			began = false
		}
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if began {
		out = append(out, source{Text: text[start:], Line: sl, Col: sc})
	}
	return out, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type interimBuffer struct{ lines []string }

func newStmtBuffer() stmtBuffer { return &interimBuffer{} }

func (b *interimBuffer) Add(line string) { b.lines = append(b.lines, line) }
func (b *interimBuffer) Complete() bool {
	return strings.HasSuffix(strings.TrimSpace(strings.Join(b.lines, "\n")), ";")
}
func (b *interimBuffer) Take() []source {
	src, _ := splitScript(strings.Join(b.lines, "\n"))
	b.lines = nil
	return src
}
func (b *interimBuffer) Empty() bool {
	return strings.TrimSpace(strings.Join(b.lines, "\n")) == ""
}
func (b *interimBuffer) Reset()          { b.lines = nil }
func (b *interimBuffer) Pending() string { return strings.Join(b.lines, "\n") }

func parseSource(src source) (lang.Statement, error) {
	text := strings.TrimSuffix(strings.TrimSpace(src.Text), ";")
	f := strings.Fields(text)
	up := strings.ToUpper(strings.Join(f, " "))
	unq := func(s string) string { return strings.Trim(s, `"'`) }
	switch {
	case up == "SHOW TOPICS":
		return &lang.ShowTopics{}, nil
	case up == "SHOW BROKERS":
		return &lang.ShowBrokers{}, nil
	case up == "SHOW CLUSTER":
		return &lang.ShowCluster{}, nil
	case up == "SHOW GROUPS":
		return &lang.ShowGroups{}, nil
	case len(f) == 3 && strings.HasPrefix(up, "DESCRIBE TOPIC "):
		return &lang.DescribeTopic{Topic: unq(f[2])}, nil
	case len(f) == 3 && strings.HasPrefix(up, "DESCRIBE GROUP "):
		return &lang.DescribeGroup{Group: unq(f[2])}, nil
	case len(f) >= 2 && strings.EqualFold(f[0], "CONSUME"):
		c := &lang.Consume{Topic: unq(f[1])}
		if len(f) == 4 && strings.EqualFold(f[2], "LIMIT") {
			n, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil {
				return nil, err
			}
			c.Limit = &n
		}
		return c, nil
	}
	return nil, fmt.Errorf("%d:%d: syntax error (interim parser): %s", src.Line, src.Col, text)
}

func formatStatement(s lang.Statement) string {
	switch s := s.(type) {
	case *lang.ShowTopics:
		return "SHOW TOPICS;"
	case *lang.ShowBrokers:
		return "SHOW BROKERS;"
	case *lang.ShowCluster:
		return "SHOW CLUSTER;"
	case *lang.ShowGroups:
		return "SHOW GROUPS;"
	case *lang.DescribeTopic:
		return fmt.Sprintf("DESCRIBE TOPIC %q;", s.Topic)
	case *lang.DescribeGroup:
		return fmt.Sprintf("DESCRIBE GROUP %q;", s.Group)
	case *lang.Consume:
		if s.Limit != nil {
			return fmt.Sprintf("CONSUME %q LIMIT %d;", s.Topic, *s.Limit)
		}
		return fmt.Sprintf("CONSUME %q;", s.Topic)
	}
	return fmt.Sprintf("%T;", s)
}

func keywords() []string {
	return []string{"SHOW", "TOPICS", "BROKERS", "CLUSTER", "GROUPS", "DESCRIBE", "TOPIC", "GROUP", "CONSUME", "FROM", "LIMIT", "PRODUCE", "INTO", "KEY", "VALUE"}
}

func statementHelp() []helpEntry {
	return []helpEntry{
		{Name: "SHOW TOPICS", Syntax: "SHOW TOPICS [LIKE 'glob'];", Example: "SHOW TOPICS LIKE 'ord*';"},
		{Name: "CONSUME", Syntax: "CONSUME [FROM] topic [LIMIT n];", Example: "CONSUME orders LIMIT 10;"},
	}
}

// ---- render ----

type outputFormat string

func parseFormat(s string) (outputFormat, error) {
	for _, n := range formatNames {
		if strings.EqualFold(s, n) {
			return outputFormat(n), nil
		}
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(formatNames, ", "))
}

func (f outputFormat) String() string { return string(f) }

func renderResult(w io.Writer, res result.Result, o renderOptions) (int64, error) {
	cols := res.Columns()
	var n int64
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	if o.Format != "jsonl" && o.Format != "json" {
		for i, c := range cols {
			if i > 0 {
				bw.WriteString("\t")
			}
			bw.WriteString(c.Name)
		}
		bw.WriteString("\n")
	}
	for {
		row, ok := res.Next()
		if !ok {
			break
		}
		n++
		if o.Format == "jsonl" || o.Format == "json" {
			m := map[string]any{}
			for i, c := range cols {
				m[c.Name] = jsonValue(row[i])
			}
			b, _ := json.Marshal(m)
			bw.Write(b)
			bw.WriteString("\n")
			continue
		}
		for i := range cols {
			if i > 0 {
				bw.WriteString("\t")
			}
			bw.WriteString(cellText(row[i]))
		}
		bw.WriteString("\n")
	}
	if o.Footer {
		fmt.Fprintf(bw, "(%d rows)\n", n)
	}
	return n, res.Err()
}

func jsonValue(v any) any {
	switch v := v.(type) {
	case []byte:
		return string(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	}
	return v
}

func cellText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return string(v)
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// ---- history ----

type interimHistory struct {
	f       *os.File
	entries []string
}

func defaultHistoryPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "kql", "history"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, ".kql_history"), nil
}

func openHistory(path string, max int) (historyStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	h := &interimHistory{}
	if data, err := os.ReadFile(path); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" {
				h.entries = append(h.entries, l)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	h.f = f
	return h, nil
}

func (h *interimHistory) Add(e string) error {
	if len(h.entries) > 0 && h.entries[len(h.entries)-1] == e {
		return nil
	}
	h.entries = append(h.entries, e)
	_, err := h.f.WriteString(e + "\n")
	return err
}
func (h *interimHistory) Entries() []string { return h.entries }
func (h *interimHistory) Close() error      { return h.f.Close() }
