package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// property is one key=value of a Java properties file, with the line it
// started on so errors can point at it.
type property struct {
	key, value string
	line       int
}

// parseProperties reads the Java .properties format Kafka's tools take for
// --command-config: `key=value`, `key: value` or `key value`; # and ! comment
// lines; a trailing backslash continues the line (sasl.jaas.config is often
// split that way); \t \n \r \f \\ and \uXXXX escapes. A later key wins, as in
// java.util.Properties.
func parseProperties(r io.Reader) ([]property, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var props []property
	lineNo := 0
	for sc.Scan() {
		lineNo++
		start := lineNo
		line := strings.TrimLeftFunc(sc.Text(), unicode.IsSpace)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continues(line) {
			line = line[:len(line)-1]
			if !sc.Scan() {
				break
			}
			lineNo++
			line += strings.TrimLeftFunc(sc.Text(), unicode.IsSpace)
		}
		key, value, err := splitProperty(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", start, err)
		}
		props = append(props, property{key: key, value: value, line: start})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return props, nil
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func splitProperty(line string) (key, value string, err error) {
	var k strings.Builder
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			k.WriteByte(line[i])
			k.WriteByte(line[i+1])
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		k.WriteByte(c)
		i++
	}
	rest := strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	if key, err = unescapeProperty(k.String()); err != nil {
		return "", "", err
	}
	if value, err = unescapeProperty(rest); err != nil {
		return "", "", err
	}
	return key, value, nil
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`bad \u escape in %q: want four hex digits`, s)
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", fmt.Errorf(`bad \u escape in %q: want four hex digits`, s)
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// jaasConfig is what kql takes from a sasl.jaas.config value.
type jaasConfig struct {
	module  string // the login module's class name without its package
	options map[string]string
}

// parseJAAS reads one login module entry:
//
//	org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";
func parseJAAS(s string) (*jaasConfig, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, ";")
	fields, err := jaasTokens(s)
	if err != nil {
		return nil, err
	}
	if len(fields) < 2 {
		return nil, fmt.Errorf("want `<LoginModule class> required username=\"...\" password=\"...\";`, got %q", s)
	}
	class := fields[0]
	switch strings.ToLower(fields[1]) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return nil, fmt.Errorf("want a control flag (required) after %s, got %q", class, fields[1])
	}
	j := &jaasConfig{module: class[strings.LastIndex(class, ".")+1:], options: map[string]string{}}
	for _, f := range fields[2:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("option %q is not key=value", f)
		}
		j.options[k] = v
	}
	return j, nil
}

// jaasTokens splits on spaces outside double quotes and unquotes values.
func jaasTokens(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inQuote, have := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case c == '"':
			inQuote = !inQuote
			have = true
		case !inQuote && unicode.IsSpace(rune(c)):
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}
