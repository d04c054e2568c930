package main

// Interim stand-ins for the lang API that is being built on branch lang:
// the smallest thing that lets the shell compile and its tests run. This
// file is deleted when lang is merged and deps.go calls the real package.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kql-dev/kql/lang"
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
