package lang

import (
	"testing"
)

// NULL is the null key or value. A header key cannot be null, and a topic
// config value is text; yet HEADER NULL 'v' silently becomes a header whose
// key is the four letters "NULL", and WITH (x = NULL) the config value
// 'NULL' -- a keyword quietly read as a name, the kind of silent surprise
// the seed warns about. Either is better as an error at NULL.
func TestNULLIsNotSilentlyTheTextNULL(t *testing.T) {
	for _, src := range []string{
		"PRODUCE t VALUE 'a' HEADER NULL 'v'",
		"CREATE TOPIC t WITH (cleanup.policy = NULL)",
	} {
		st, err := Parse(src)
		if err == nil {
			t.Errorf("%s: parsed as %s; want an error at NULL", src, Format(st))
		}
	}
}
