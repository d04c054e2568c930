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
		return "", "", fmt.Errorf("key: %w", err)
	}
	if value, err = unescapeProperty(rest); err != nil {
		// The value may be a password: name the key and the position only.
		return "", "", fmt.Errorf("%s: %w (the value is not shown: it may hold a password)", key, err)
	}
	return key, value, nil
}

// unescapeProperty undoes the properties escapes. Its errors never quote
// the text, which may be a password.
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
			bad := fmt.Errorf(`bad \u escape at character %d: want four hex digits`, i)
			if i+5 > len(s) {
				return "", bad
			}
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", bad
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

// parseJAAS reads one login module entry, as Kafka's JaasConfig does:
//
//	org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";
//
// A value is a double-quoted string (with \ escapes) or a bare word; the
// entry ends with ';' and nothing but white space may follow it (Kafka
// rejects the line otherwise, and kql must not send the rest as part of a
// password). No error message quotes a value: it may be a password.
func parseJAAS(s string) (*jaasConfig, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return nil, err
	}
	const shape = `want "<LoginModule class> required username=\"...\" password=\"...\";"`
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty; %s", shape)
	}
	if toks[0].kind != jaasWord {
		return nil, fmt.Errorf("character %d: want a login module class name first; %s", toks[0].pos, shape)
	}
	class := toks[0].text
	if len(toks) < 2 || toks[1].kind != jaasWord {
		return nil, fmt.Errorf("want a control flag (required) after %s; %s", class, shape)
	}
	switch strings.ToLower(toks[1].text) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return nil, fmt.Errorf("character %d: want a control flag (required) after %s, got %q", toks[1].pos, class, toks[1].text)
	}
	j := &jaasConfig{module: class[strings.LastIndex(class, ".")+1:], options: map[string]string{}}
	i := 2
	for ; i < len(toks) && toks[i].kind != jaasSemi; i += 3 {
		key := toks[i]
		if key.kind != jaasWord {
			return nil, fmt.Errorf("character %d: want an option name (username, password)", key.pos)
		}
		if i+1 >= len(toks) || toks[i+1].kind != jaasEquals {
			return nil, fmt.Errorf("character %d: option %s: want %s=\"value\" (a value with spaces must be quoted)", key.pos, safeName(key.text), safeName(key.text))
		}
		if i+2 >= len(toks) || (toks[i+2].kind != jaasWord && toks[i+2].kind != jaasQuoted) {
			return nil, fmt.Errorf("character %d: option %s has no value", key.pos, safeName(key.text))
		}
		j.options[key.text] = toks[i+2].text
	}
	if i >= len(toks) {
		return nil, fmt.Errorf("the entry does not end with ';'")
	}
	if i+1 < len(toks) {
		return nil, fmt.Errorf("character %d: text after the ';' that ends the login module entry (kql, like Kafka, takes exactly one entry; the rest is not shown)", toks[i+1].pos)
	}
	return j, nil
}

// safeName returns an option name for an error message if it is one kql
// knows, else a placeholder: in `password=two words;` the "option" is the
// second half of a password.
func safeName(s string) string {
	switch s {
	case "username", "password", "tokenauth", "serviceName", "unsecuredLoginStringClaim_sub":
		return s
	}
	return "(a word that is not shown: it may be part of a password)"
}

type jaasKind int

const (
	jaasWord jaasKind = iota
	jaasQuoted
	jaasEquals
	jaasSemi
)

type jaasToken struct {
	kind jaasKind
	text string
	pos  int // 1-based character position in the value
}

// jaasTokens splits a JAAS entry into words, quoted strings, '=' and ';'.
func jaasTokens(s string) ([]jaasToken, error) {
	var out []jaasToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case c == '=':
			out = append(out, jaasToken{jaasEquals, "=", i + 1})
			i++
		case c == ';':
			out = append(out, jaasToken{jaasSemi, ";", i + 1})
			i++
		case c == '"':
			start := i
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				if s[i] == '\\' && i+1 < len(s) {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				if s[i] == '"' {
					closed = true
					i++
					break
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed {
				return nil, fmt.Errorf("character %d: unterminated quote (the quoted text is not shown)", start+1)
			}
			out = append(out, jaasToken{jaasQuoted, b.String(), start + 1})
		default:
			start := i
			for i < len(s) && !unicode.IsSpace(rune(s[i])) && s[i] != '=' && s[i] != ';' && s[i] != '"' {
				i++
			}
			out = append(out, jaasToken{jaasWord, s[start:i], start + 1})
		}
	}
	return out, nil
}
