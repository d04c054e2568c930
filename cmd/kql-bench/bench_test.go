package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/kql-dev/kql/schema"
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

// avroPayment is the Avro schema as hamba/avro's struct, to hold
// appendAvroValue to an independent encoder.
type avroPayment struct {
	ID     int64     `avro:"id"`
	Amount *big.Rat  `avro:"amount"`
	At     time.Time `avro:"at"`
	Status string    `avro:"status"`
	Note   string    `avro:"note"`
}

func TestAvroValueMatchesHambaAndKQLsDecoder(t *testing.T) {
	sch, err := avro.Parse(avroSchema)
	if err != nil {
		t.Fatal(err)
	}
	reg := startTestRegistry(t)
	kreg, err := schema.Open(schema.Config{URLs: []string{reg.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	dec := kreg.NewDecoder(context.Background())
	for _, i := range []int64{0, 1, 7, 63, 64, 127, 12_627, 999_999, 9_999_999, 123_456_789} {
		v := appendAvroValue([]byte("prefix"), i)[len("prefix"):]
		if len(v) != valueSize {
			t.Errorf("value %d is %d bytes, want %d", i, len(v), valueSize)
		}
		if id, ok := schema.HeaderID(v); !ok || id != avroSchemaID {
			t.Errorf("value %d: header id %d, %v", i, id, ok)
		}
		var p avroPayment
		if err := avro.Unmarshal(sch, v[5:], &p); err != nil {
			t.Fatalf("value %d: hamba: %v", i, err)
		}
		wantAmount := new(big.Rat).SetFrac64(avroAmount(i), 100)
		if p.ID != i || p.Amount.Cmp(wantAmount) != 0 || !p.At.Equal(time.UnixMilli(avroAtBase+i*1000)) ||
			p.Status != avroStatus[i%4] || !strings.HasPrefix(p.Note, fmt.Sprintf("payment %d ", i)) {
			t.Errorf("value %d: hamba reads %+v", i, p)
		}
		again, err := avro.Marshal(sch, p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, v[5:]) {
			t.Errorf("value %d: hamba encodes\n%x\nthe bench wrote\n%x", i, again, v[5:])
		}
		out, _, ok, err := dec.Decode(nil, v)
		if err != nil || !ok {
			t.Fatalf("value %d: kql's decoder: %v, %v", i, ok, err)
		}
		if want := appendAvroJSON(nil, i); !bytes.Equal(out, want) {
			t.Errorf("value %d: kql decodes\n%s\nthe check expects\n%s", i, out, want)
		}
	}
	// The registry was asked once, for all of them.
	if got := reg.take(); len(got) != 1 || !strings.HasPrefix(got[0], "GET /schemas/ids/1") {
		t.Errorf("registry requests %q, want one GET /schemas/ids/1", got)
	}
}

func startTestRegistry(t *testing.T) *benchRegistry {
	t.Helper()
	reg, err := startRegistry("bench-avro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.close)
	return reg
}

// avroLines is kql's jsonl of records ids, decoded or raw.
func avroLines(ids []int64, decoded bool) string {
	var b strings.Builder
	for j, i := range ids {
		var v []byte
		if decoded {
			v = appendAvroJSON(nil, i)
		} else {
			v = fmt.Appendf(nil, `"x'%x'"`, appendAvroValue(nil, i))
		}
		fmt.Fprintf(&b, `{"partition":%d,"offset":%d,"timestamp":"2026-01-01T00:00:00.000Z","key":"k%d","value":%s,"headers":[]}`+"\n",
			i%3, j, i, v)
	}
	return b.String()
}

func TestAvroValidators(t *testing.T) {
	ids := []int64{3, 0, 4, 1, 2}
	good, raw := avroLines(ids, true), avroLines(ids, false)
	if err := checkAvroDecoded(5)(writeTemp(t, good)); err != nil {
		t.Errorf("good decoded: %v", err)
	}
	if err := checkAvroRaw(5)(writeTemp(t, raw)); err != nil {
		t.Errorf("good raw: %v", err)
	}
	lines := strings.SplitAfter(good, "\n")
	for name, bad := range map[string]string{
		"a record missing":               strings.Join(lines[1:], ""),
		"an id twice":                    lines[0] + strings.Join(lines[:4], ""),
		"an id too big":                  avroLines([]int64{3, 0, 4, 1, 5}, true),
		"no newline at all":              strings.TrimSpace(strings.ReplaceAll(good, "\n", " ")),
		"raw, not decoded":               raw,
		"value a JSON string":            strings.Replace(good, `"value":{`, `"value":"{`, 1),
		"a wrong amount":                 strings.Replace(good, `"amount":0.`, `"amount":1.`, 1),
		"a wrong status":                 strings.Replace(good, `"NEW"`, `"OLD"`, 1),
		"keys swapped":                   strings.Replace(strings.Replace(good, `"k3"`, `"kX"`, 1), `"k0"`, `"k3"`, 1),
		"truncated":                      good[:len(good)-30],
		"the first line without headers": strings.Replace(good, `,"headers":[]}`, `,"headers2":[]}`, 1),
		"empty":                          "",
	} {
		if err := checkAvroDecoded(5)(writeTemp(t, bad)); err == nil {
			t.Errorf("decoded check passed %s", name)
		}
	}
	for name, bad := range map[string]string{
		"decoded":          good,
		"a record missing": strings.Join(strings.SplitAfter(raw, "\n")[1:], ""),
		"another record's value": strings.Replace(raw, fmt.Sprintf("%x", appendAvroValue(nil, 3)),
			fmt.Sprintf("%x", appendAvroValue(nil, 4)), 1),
		"empty": "",
	} {
		if err := checkAvroRaw(5)(writeTemp(t, bad)); err == nil {
			t.Errorf("raw check passed %s", name)
		}
	}
}

// TestEveryCheckRejectsWrongOutput: no contender's check passes an empty
// output or garbage, and the Avro contenders' not one record too few, so no
// run that read too little counts.
func TestEveryCheckRejectsWrongOutput(t *testing.T) {
	const n = 5
	e := &benchEnv{
		cfg:  &config{n: n, flatN: 10 * n, topic: "bench", flat: true, timeout: time.Minute},
		kql:  filepath.Join(t.TempDir(), "no-kql"), // accepts nothing: the exec-api fallbacks
		self: "kql-bench", bootstrap: "localhost:9092", flatTopic: "bench-flat", avroTopic: "bench-avro",
		registry: startTestRegistry(t),
	}
	cs, _, err := contenders(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range cs {
		names = append(names, k.name)
		if err := k.check(writeTemp(t, "")); err == nil {
			t.Errorf("%s: the check passed an empty output", k.name)
		}
		if err := k.check(writeTemp(t, "garbage\n")); err == nil {
			t.Errorf("%s: the check passed garbage", k.name)
		}
	}
	for _, want := range []string{"exec-api jsonl Avro raw", "exec-api jsonl Avro decoded"} {
		if !slices.Contains(names, want) {
			t.Errorf("no contender %q in %q", want, names)
		}
	}
	ids := []int64{0, 1, 2, 3}
	for _, k := range cs {
		switch k.name {
		case "exec-api jsonl Avro decoded":
			if err := k.check(writeTemp(t, avroLines(ids, true))); err == nil {
				t.Errorf("%s: the check passed %d of %d records", k.name, len(ids), n)
			}
			if err := k.check(writeTemp(t, avroLines(append(ids, 4), true))); err != nil {
				t.Errorf("%s: %v", k.name, err)
			}
			if g := k.goal; g.wallRef != "exec-api jsonl Avro raw" || g.wallMax != 2 || g.rssMaxMiB != 64 || g.registryMax != 5 {
				t.Errorf("%s: goal %+v", k.name, g)
			}
		case "exec-api jsonl Avro raw":
			if err := k.check(writeTemp(t, avroLines(ids, false))); err == nil {
				t.Errorf("%s: the check passed %d of %d records", k.name, len(ids), n)
			}
			if err := k.check(writeTemp(t, avroLines(append(ids, 4), false))); err != nil {
				t.Errorf("%s: %v", k.name, err)
			}
		}
	}
}

func TestRegistryMeasured(t *testing.T) {
	got := registryMeasured(stats{runs: 3, registryMax: 1}, []string{"GET /schemas/ids/1"})
	if want := "1 (most of 3 runs; last: GET /schemas/ids/1)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = registryMeasured(stats{runs: 2, registryMax: 5}, []string{"a", "b", "c", "d", "e"})
	if want := "5 (most of 2 runs; last: a, b, c, ... 2 more)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
