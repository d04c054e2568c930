package exec

import (
	"fmt"
	"regexp"
	"strings"
)

// globRe turns a SHOW ... LIKE pattern into a regular expression: * and %
// are any run of characters, ? and _ one character, [a-z] a class, and \
// makes the next character plain. kql has always taken * and ?; % and _ are
// SQL's spelling of the same.
func globRe(glob string) (*regexp.Regexp, error) {
	var sb strings.Builder
	sb.WriteString(`^(?s:`)
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*', '%':
			sb.WriteString(`.*`)
		case '?', '_':
			sb.WriteString(`.`)
		case '\\':
			if i+1 >= len(glob) {
				return nil, fmt.Errorf("LIKE %q: the pattern ends with a \\ that escapes nothing", glob)
			}
			i++
			sb.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("LIKE %q: the [ at %d has no closing ] (use * or %% for any run of characters, ? or _ for one, [a-z] for a class)", glob, i+1)
			}
			class := glob[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:] // path.Match's negation
			}
			sb.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			sb.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	sb.WriteString(`)$`)
	re, err := regexp.Compile(sb.String())
	if err != nil {
		return nil, fmt.Errorf("LIKE %q: bad pattern: %v (use * or %% for any run of characters, ? or _ for one, [a-z] for a class)", glob, err)
	}
	return re, nil
}

// likeMatcher returns a matcher for the optional LIKE pattern (nil: all).
func likeMatcher(glob *string) (func(string) bool, error) {
	if glob == nil {
		return func(string) bool { return true }, nil
	}
	re, err := globRe(*glob)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}
