package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAppendValueIsFixedSizeJSON(t *testing.T) {
	for _, i := range []int64{0, 7, 123, 999_999, 9_999_999, 123_456_789} {
		v := appendValue([]byte("prefix"), i)[len("prefix"):]
		if len(v) != valueSize {
			t.Errorf("value %d is %d bytes, want %d: %s", i, len(v), valueSize, v)
		}
		var got struct {
			ID   int64  `json:"id"`
			P    int64  `json:"p"`
			Name string `json:"name"`
		}
		if err := json.Unmarshal(v, &got); err != nil {
			t.Fatalf("value %d is not JSON: %v: %s", i, err, v)
		}
		if got.ID != i || got.P != i%10 || !strings.HasPrefix(got.Name, fmt.Sprintf("user-%d-", i)) {
			t.Errorf("value %d decodes to %+v", i, got)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []int64
		want int64
	}{{nil, 0}, {[]int64{5}, 5}, {[]int64{9, 1, 5}, 5}, {[]int64{4, 1, 3, 2}, 2}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %d, want %d", c.in, got, c.want)
		}
	}
	in := []time.Duration{3, 1, 2}
	median(in)
	if in[0] != 3 {
		t.Error("median sorted its input in place")
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		measured, target float64
		want             string
	}{
		{1.0, 1.3, "met (23% under)"},
		{1.3, 1.3, "met (0% under)"},
		{5.2, 1.3, "MISSED by 300%"},
		{70, 64, "MISSED by 9%"},
	} {
		if got := verdict(c.measured, c.target); got != c.want {
			t.Errorf("verdict(%v, %v) = %q, want %q", c.measured, c.target, got, c.want)
		}
	}
}

func TestVerdictAtLeast(t *testing.T) {
	if got := verdictAtLeast(53.3, 48); got != "met (11% over)" {
		t.Errorf("got %q", got)
	}
	if got := verdictAtLeast(24, 48); got != "MISSED by 50%" {
		t.Errorf("got %q", got)
	}
}

func TestSampleRoundTrip(t *testing.T) {
	s := sample{wall: 1500 * time.Millisecond, user: time.Second, sys: 3 * time.Millisecond, rssKiB: 65536}
	got, err := parseSample(formatSample(s))
	if err != nil || got != s {
		t.Fatalf("got %+v, %v; want %+v", got, err, s)
	}
	if _, err := parseSample("1 2 x 4"); err == nil {
		t.Error("a garbled report parsed")
	}
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestScanLines(t *testing.T) {
	// Lines that straddle scanLines' 1 MiB reads.
	var big strings.Builder
	for i := range 30000 {
		fmt.Fprintf(&big, "line %d %s\n", i, strings.Repeat("x", 90))
	}
	for _, c := range []struct {
		name, content string
		lines         int64
		first, last   string
	}{
		{"empty", "", 0, "", ""},
		{"one without newline", "a", 1, "a", "a"},
		{"one", "a\n", 1, "a", "a"},
		{"two, last without newline", "a\nbc", 2, "a", "bc"},
		{"three", "a\nb\nc\n", 3, "a", "c"},
		{"big", big.String(), 30000, "line 0 " + strings.Repeat("x", 90), "line 29999 " + strings.Repeat("x", 90)},
	} {
		st, err := scanLines(writeTemp(t, c.content))
		if err != nil {
			t.Fatal(err)
		}
		if st.lines != c.lines || st.first != c.first || st.last != c.last || st.size != int64(len(c.content)) {
			t.Errorf("%s: got %d lines, first %q, last %q, size %d", c.name, st.lines, st.first, st.last, st.size)
		}
	}
}

func TestValidators(t *testing.T) {
	rec := `{"partition":0,"offset":1,"timestamp":"2026-01-01T00:00:00Z","key":"k1","value":"v","headers":[]}` + "\n"
	if err := checkJSONL(2, true)(writeTemp(t, rec+rec)); err != nil {
		t.Errorf("good jsonl: %v", err)
	}
	if err := checkJSONL(3, true)(writeTemp(t, rec+rec)); err == nil {
		t.Error("jsonl with a record missing passed")
	}
	if err := checkJSONL(1, true)(writeTemp(t, `{"partition":0,"offset":1,"key":"k","value":"v","headers":[]}`+"\n")); err == nil {
		t.Error("jsonl without timestamp passed")
	}
	if err := checkJSONL(1, false)(writeTemp(t, `{"payload":"v"}`+"\n")); err != nil {
		t.Errorf("kcat line: %v", err)
	}
	if err := checkDelimited(2)(writeTemp(t, "partition,offset\n0,1\n0,2\n")); err != nil {
		t.Errorf("good csv: %v", err)
	}
	if err := checkDelimited(2)(writeTemp(t, "0,1\n0,2\n")); err == nil {
		t.Error("csv without header passed")
	}
	table := " partition | offset\n-----------+-------\n 0 | 1\n 0 | 2\n(2 rows)\n"
	if err := checkTable(2)(writeTemp(t, table)); err != nil {
		t.Errorf("good table: %v", err)
	}
	if err := checkTable(3)(writeTemp(t, table)); err == nil {
		t.Error("table with the wrong footer passed")
	}
	if err := checkCount(5)(writeTemp(t, "5\n")); err != nil {
		t.Errorf("floor count: %v", err)
	}
	if err := checkCount(5)(writeTemp(t, "4\n")); err == nil {
		t.Error("a short floor count passed")
	}
}
