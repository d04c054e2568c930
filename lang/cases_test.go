package lang

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// parseCase is a statement's text and the AST it must parse to.
type parseCase struct {
	src  string
	want Statement
}

// formatCase is a statement's text and the canonical text Format prints
// for it.
type formatCase struct{ src, want string }

// checkParses checks that each case parses to its AST and, with roundTrip,
// that the AST prints as KafkaQL that parses back to the same AST.
func checkParses(t *testing.T, cases []parseCase, roundTrip bool) {
	t.Helper()
	for _, tc := range cases {
		got, err := Parse(tc.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q)\n got %#v\nwant %#v", tc.src, got, tc.want)
		}
		if roundTrip {
			checkRoundTrip(t, tc)
		}
	}
}

// checkRoundTrip checks that tc's AST prints as KafkaQL that parses back
// to the same AST.
func checkRoundTrip(t *testing.T, tc parseCase) {
	t.Helper()
	text := Format(tc.want)
	back, err := Parse(text)
	if err != nil {
		t.Errorf("Parse(Format(%q)) = Parse(%q): %v", tc.src, text, err)
		return
	}
	if !reflect.DeepEqual(back, tc.want) {
		t.Errorf("Parse(Format(%q)) = Parse(%q)\n got %#v\nwant %#v", tc.src, text, back, tc.want)
	}
}

// checkFormats checks that each case parses and prints as its canonical
// text.
func checkFormats(t *testing.T, cases []formatCase) {
	t.Helper()
	for _, tc := range cases {
		st, err := Parse(tc.src)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if got := Format(st); got != tc.want {
			t.Errorf("Format(Parse(%q)) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// errorCase is a statement's text and how its syntax error begins.
type errorCase struct{ src, msg string }

// hintCase is an errorCase whose error's hint must also contain hint (any
// hint, where hint is empty).
type hintCase struct{ src, msg, hint string }

// checkErrors checks that each case fails to parse with a syntax error
// that begins with its message.
func checkErrors(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		if e := syntaxError(t, tc.src); e != nil && !strings.HasPrefix(e.Error(), tc.msg) {
			t.Errorf("Parse(%q):\n got %s\nwant %s...", tc.src, e.Error(), tc.msg)
		}
	}
}

// checkHints is checkErrors for cases that also name their error's hint.
func checkHints(t *testing.T, cases []hintCase) {
	t.Helper()
	for _, tc := range cases {
		if e := syntaxError(t, tc.src); e != nil && (!strings.HasPrefix(e.Error(), tc.msg) || !strings.Contains(e.Hint, tc.hint)) {
			t.Errorf("Parse(%q):\n got %s\nwant %s... with a hint containing %q", tc.src, e.Error(), tc.msg, tc.hint)
		}
	}
}

// syntaxError is the syntax error src fails to parse with, or nil, after
// reporting it, when src parses or fails some other way.
func syntaxError(t *testing.T, src string) *Error {
	t.Helper()
	_, err := Parse(src)
	var e *Error
	if !errors.As(err, &e) {
		t.Errorf("Parse(%q): want a syntax error, got %v", src, err)
		return nil
	}
	return e
}
