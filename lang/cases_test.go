package lang

import (
	"reflect"
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
