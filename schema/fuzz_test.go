package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
)

// fuzzAvroSchemas are the schemas FuzzAvroDecode reads random bytes with:
// the first byte of an input picks one.
var fuzzAvroSchemas = []string{
	allPrimitivesAvro,
	logicalAvro,
	`{"type":"record","name":"U","namespace":"com.acme","fields":[
		{"name":"u","type":["null",{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]},{"type":"record","name":"B","fields":[{"name":"b","type":"string"}]}]},
		{"name":"v","type":["null","string","long","A"]},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["X","Y","Z"]}},
		{"name":"f","type":{"type":"fixed","name":"F","size":3}}]}`,
	`{"type":"map","values":{"type":"array","items":["null","double",{"type":"map","values":"string"}]}}`,
	`{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}`,
	`{"type":"array","items":"null"}`,
	`{"type":"array","items":{"type":"record","name":"Empty","fields":[]}}`,
	`{"type":"array","items":{"type":"array","items":{"type":"bytes","logicalType":"decimal","precision":20,"scale":3}}}`,
}

func fuzzSeeds(tb testing.TB) [][]byte {
	values := []any{
		map[string]any{"n": nil, "b": true, "i": int32(-7), "l": int64(math.MaxInt64), "f": float32(1.1), "d": math.NaN(), "by": []byte{0, 1, 255}, "s": "h\"é\x00"},
		map[string]any{"dec": big.NewRat(-5, 100), "dec0": big.NewRat(7, 1), "decf": big.NewRat(123, 100), "tsms": time.UnixMilli(-1).UTC(), "tsus": time.UnixMicro(5).UTC(),
			"ltsms": time.UnixMilli(3), "ltsus": time.UnixMicro(4), "date": time.Unix(-86400, 0).UTC(), "tms": 5 * time.Millisecond, "tus": 7 * time.Microsecond, "uuid": "0b8e7d3c-0000-4000-8000-000000000001"},
		map[string]any{"u": map[string]any{"com.acme.B": map[string]any{"b": "x"}}, "v": map[string]any{"com.acme.A": map[string]any{"a": 1}}, "e": "Z", "f": [3]byte{1, 2, 3}},
		map[string]any{"a": []any{nil, 1.5, map[string]any{"map": map[string]any{"k": "v"}}}, "b": []any{}},
		map[string]any{"v": 1, "next": map[string]any{"L": map[string]any{"v": 2, "next": nil}}},
		[]any{nil, nil, nil},
		[]any{map[string]any{}, map[string]any{}},
		[]any{[]any{big.NewRat(1, 1000), big.NewRat(-123456789, 1)}, []any{}},
	}
	cfg := avro.Config{BlockLength: 2}.Freeze()
	var seeds [][]byte
	for i, v := range values {
		c := avroCodecFor(tb, fuzzAvroSchemas[i])
		b, err := cfg.Marshal(c.schema, v)
		if err != nil {
			tb.Fatalf("seed %d: %v", i, err)
		}
		seeds = append(seeds, append([]byte{byte(i)}, b...))
	}
	return seeds
}

// FuzzAvroDecode: random bytes under any of the schemas never panic nor
// hang, and whatever decodes is valid JSON that encodes back to the same
// JSON.
func FuzzAvroDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte{4, 2, 2, 2, 2, 2, 2, 2})
	f.Add([]byte{5, 0xfe, 0xff, 0xff, 0xff, 0x0f})
	codecs := make([]*avroCodec, len(fuzzAvroSchemas))
	for i, s := range fuzzAvroSchemas {
		codecs[i] = avroCodecFor(f, s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		c := codecs[int(in[0])%len(codecs)]
		payload := in[1:]
		start := time.Now()
		prefix := []byte(`{"prefix":`)
		out, err := c.appendJSON(append([]byte{}, prefix...), payload)
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%d bytes took %v", len(payload), d)
		}
		if !bytes.HasPrefix(out, prefix) {
			t.Fatalf("dst lost its prefix: %q", out)
		}
		if err != nil {
			return
		}
		text := out[len(prefix):]
		if !json.Valid(text) {
			t.Fatalf("invalid JSON %q from %x", text, payload)
		}
		if hasDuplicateKeys(text) || strings.Contains(string(text), "\uFFFD") {
			return // a map read twice the same key, or text not UTF-8: not the same after a trip
		}
		b, err := c.encode(nil, text)
		if err != nil {
			if strings.Contains(err.Error(), ") or a number") {
				return // a timestamp beyond year 9999 or before year 0: RFC 3339 has no text for it
			}
			if strings.Contains(err.Error(), "more digits than decimal") {
				return // bytes holding more digits than the precision: shown as they are, refused on the way back
			}
			t.Fatalf("decoded %s does not encode back: %v", text, err)
		}
		again, err := c.appendJSON(nil, b)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", text, err)
		}
		// The same value: map keys may come back in another order (the
		// encoder sorts them).
		if !reflect.DeepEqual(canonical(t, again), canonical(t, text)) {
			t.Fatalf("round trip changed\n%s\nto\n%s", text, again)
		}
	})
}

// hasDuplicateKeys reports whether some object in text repeats a key.
func hasDuplicateKeys(text []byte) bool {
	d := json.NewDecoder(bytes.NewReader(text))
	var value func() bool
	value = func() bool {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k, _ := d.Token()
				key, _ := k.(string)
				if seen[key] || value() {
					return true
				}
				seen[key] = true
			}
			_, _ = d.Token()
		case json.Delim('['):
			for d.More() {
				if value() {
					return true
				}
			}
			_, _ = d.Token()
		}
		return false
	}
	return value()
}
