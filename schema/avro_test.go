package schema

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
)

// hambaJSON turns hamba/avro's generic decoding (avro.Unmarshal into an
// any) into the JSON shapes the avroCodec documents, so the two decoders
// can be compared: hamba reads the bytes, this only reshapes what it read.
func hambaJSON(t *testing.T, s avro.Schema, v any) any {
	t.Helper()
	switch s := s.(type) {
	case *avro.RefSchema:
		return hambaJSON(t, s.Schema(), v)
	case *avro.NullSchema:
		require.Nil(t, v)
		return nil
	case *avro.PrimitiveSchema:
		var logical avro.LogicalType
		if l := s.Logical(); l != nil {
			logical = l.Type()
		}
		switch logical {
		case avro.Date:
			return v.(time.Time).UTC().Format("2006-01-02")
		case avro.TimeMillis:
			return time.Time{}.Add(v.(time.Duration)).Format("15:04:05.000")
		case avro.TimeMicros:
			return time.Time{}.Add(v.(time.Duration)).Format("15:04:05.000000")
		case avro.TimestampMillis:
			return v.(time.Time).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		case avro.TimestampMicros:
			return v.(time.Time).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
		case avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			// hamba reads a local timestamp as wall-clock time in time.Local;
			// kql writes the same wall clock, in no zone (no Z).
			tm := v.(time.Time)
			wall := time.Date(tm.Year(), tm.Month(), tm.Day(), tm.Hour(), tm.Minute(), tm.Second(), tm.Nanosecond(), time.UTC)
			if logical == avro.LocalTimestampMillis {
				return wall.Format("2006-01-02T15:04:05.000")
			}
			return wall.Format("2006-01-02T15:04:05.000000")
		case avro.Decimal:
			return json.Number(v.(*big.Rat).FloatString(s.Logical().(*avro.DecimalLogicalSchema).Scale()))
		}
		switch s.Type() {
		case avro.Boolean:
			return v.(bool)
		case avro.Int, avro.Long:
			return json.Number(fmt.Sprint(v))
		case avro.Float:
			return floatJSON(float64(v.(float32)), 32)
		case avro.Double:
			return floatJSON(v.(float64), 64)
		case avro.String:
			return strings.ToValidUTF8(v.(string), "\uFFFD")
		case avro.Bytes:
			return base64.StdEncoding.EncodeToString(v.([]byte))
		}
	case *avro.RecordSchema:
		m := v.(map[string]any)
		out := map[string]any{}
		for _, f := range s.Fields() {
			out[f.Name()] = hambaJSON(t, f.Type(), m[f.Name()])
		}
		return out
	case *avro.EnumSchema:
		return v.(string)
	case *avro.ArraySchema:
		out := []any{}
		for _, x := range v.([]any) {
			out = append(out, hambaJSON(t, s.Items(), x))
		}
		return out
	case *avro.MapSchema:
		out := map[string]any{}
		for k, x := range v.(map[string]any) {
			out[k] = hambaJSON(t, s.Values(), x)
		}
		return out
	case *avro.FixedSchema:
		if l := s.Logical(); l != nil && l.Type() == avro.Decimal {
			return json.Number(v.(*big.Rat).FloatString(l.(*avro.DecimalLogicalSchema).Scale()))
		}
		rv := reflect.ValueOf(v)
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return base64.StdEncoding.EncodeToString(b)
	case *avro.UnionSchema:
		if v == nil {
			return nil
		}
		// hamba wraps a branch it cannot name in Go ({"com.acme.A": ...}).
		if m, ok := v.(map[string]any); ok && len(m) == 1 {
			for name, inner := range m {
				for _, b := range s.Types() {
					if unionBranchName(b) == name {
						return hambaJSON(t, b, inner)
					}
				}
			}
		}
		for _, b := range s.Types() {
			if b.Type() != avro.Null && goFits(b, v) {
				return hambaJSON(t, b, v)
			}
		}
		t.Fatalf("no branch of %s for %#v", s, v)
	}
	t.Fatalf("schema %s: value %#v", s, v)
	return nil
}

// goFits says whether hamba would have decoded branch b into v's Go type.
func goFits(b avro.Schema, v any) bool {
	switch v.(type) {
	case string:
		return b.Type() == avro.String || b.Type() == avro.Enum
	case int, int32:
		return b.Type() == avro.Int
	case int64:
		return b.Type() == avro.Long
	case float32:
		return b.Type() == avro.Float
	case float64:
		return b.Type() == avro.Double
	case bool:
		return b.Type() == avro.Boolean
	case []byte:
		return b.Type() == avro.Bytes
	case []any:
		return b.Type() == avro.Array
	case map[string]any:
		return b.Type() == avro.Map || b.Type() == avro.Record
	case time.Time, time.Duration, *big.Rat:
		_, ok := b.(avro.LogicalTypeSchema)
		return ok
	}
	return false
}

func floatJSON(f float64, bits int) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}

// checkAvroAgainstHamba writes value with hamba's encoder under schema
// (with cfg, for block sizes), decodes it with kql's codec and with hamba's
// generic decoder, and requires the same JSON. It returns kql's text.
func checkAvroAgainstHamba(t *testing.T, cfg avro.API, schema string, value any) string {
	t.Helper()
	c := avroCodecFor(t, schema)
	payload, err := cfg.Marshal(c.schema, value)
	require.NoError(t, err, "hamba encode")
	got, err := c.appendJSON(nil, payload)
	require.NoError(t, err)
	var generic any
	require.NoError(t, cfg.Unmarshal(c.schema, payload, &generic), "hamba decode")
	want, err := json.Marshal(hambaJSON(t, c.schema, generic))
	require.NoError(t, err)
	requireSameJSON(t, want, got)
	return string(got)
}

const allPrimitivesAvro = `{"type":"record","name":"Prims","namespace":"t","fields":[
 {"name":"n","type":"null"},
 {"name":"b","type":"boolean"},
 {"name":"i","type":"int"},
 {"name":"l","type":"long"},
 {"name":"f","type":"float"},
 {"name":"d","type":"double"},
 {"name":"by","type":"bytes"},
 {"name":"s","type":"string"}
]}`

func TestAvroDecodeMatchesHamba(t *testing.T) {
	hamba := avro.DefaultConfig
	blocks := avro.Config{BlockLength: 2}.Freeze()                                 // negative counts with byte sizes
	positive := avro.Config{BlockLength: 2, DisableBlockSizeHeader: true}.Freeze() // positive counts only
	cases := []struct {
		name   string
		cfg    avro.API
		schema string
		value  any
		want   string // kql's exact text, when it matters
	}{
		{"primitives", hamba, allPrimitivesAvro, map[string]any{"n": nil, "b": true, "i": int32(-7), "l": int64(math.MaxInt64), "f": float32(1.1), "d": 1e-300, "by": []byte{0, 1, 255}, "s": "héllo"},
			`{"n":null,"b":true,"i":-7,"l":9223372036854775807,"f":1.1,"d":1e-300,"by":"AAH/","s":"héllo"}`},
		{"primitive extremes", hamba, allPrimitivesAvro, map[string]any{"n": nil, "b": false, "i": int32(math.MinInt32), "l": int64(math.MinInt64), "f": float32(math.MaxFloat32), "d": math.SmallestNonzeroFloat64, "by": []byte{}, "s": ""}, ""},
		{"top-level int", hamba, `"int"`, int32(42), `42`},
		{"top-level string", hamba, `"string"`, "x", `"x"`},
		{"top-level null", hamba, `"null"`, nil, `null`},
		{"nested records", hamba, `{"type":"record","name":"Outer","fields":[
			{"name":"inner","type":{"type":"record","name":"Inner","fields":[
				{"name":"deep","type":{"type":"record","name":"Deep","fields":[{"name":"x","type":"int"}]}},
				{"name":"again","type":"Deep"}]}},
			{"name":"empty","type":{"type":"record","name":"Empty","fields":[]}}]}`,
			map[string]any{"inner": map[string]any{"deep": map[string]any{"x": 1}, "again": map[string]any{"x": 2}}, "empty": map[string]any{}},
			`{"inner":{"deep":{"x":1},"again":{"x":2}},"empty":{}}`},
		{"array in several negative blocks", blocks, `{"type":"array","items":"long"}`, []any{int64(1), int64(2), int64(3), int64(4), int64(5)}, `[1,2,3,4,5]`},
		{"array in several positive blocks", positive, `{"type":"array","items":"string"}`, []any{"a", "b", "c"}, `["a","b","c"]`},
		{"empty array", blocks, `{"type":"array","items":"string"}`, []any{}, `[]`},
		{"map in several negative blocks", blocks, `{"type":"map","values":"int"}`, map[string]any{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}, ""},
		{"map in several positive blocks", positive, `{"type":"map","values":{"type":"array","items":"int"}}`, map[string]any{"a": []any{1, 2, 3}, "b": []any{}, "c": []any{4}}, ""},
		{"array of maps of records", blocks, `{"type":"array","items":{"type":"map","values":{"type":"record","name":"P","fields":[{"name":"q","type":"int"}]}}}`,
			[]any{map[string]any{"x": map[string]any{"q": 1}, "y": map[string]any{"q": 2}, "z": map[string]any{"q": 3}}, map[string]any{}, map[string]any{"w": map[string]any{"q": 4}}}, ""},
		{"nullable union null", hamba, `["null","string"]`, nil, `null`},
		{"nullable union value", hamba, `["null","string"]`, "x", `"x"`},
		{"three-way union long", hamba, `["null","string","long"]`, map[string]any{"long": int64(5)}, `5`},
		{"three-way union string", hamba, `["null","string","long"]`, map[string]any{"string": "5"}, `"5"`},
		{"union of named records", hamba, `{"type":"record","name":"U","namespace":"com.acme","fields":[
			{"name":"u","type":["null",{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]},{"type":"record","name":"B","fields":[{"name":"b","type":"string"}]}]},
			{"name":"v","type":["null","A","B"]}]}`,
			map[string]any{"u": map[string]any{"com.acme.B": map[string]any{"b": "x"}}, "v": map[string]any{"com.acme.A": map[string]any{"a": 1}}},
			`{"u":{"b":"x"},"v":{"a":1}}`},
		{"enum", hamba, `{"type":"enum","name":"E","symbols":["A","B","C"]}`, "C", `"C"`},
		{"fixed", hamba, `{"type":"fixed","name":"F","size":4}`, [4]byte{1, 2, 3, 250}, `"AQID+g=="`},
		{"NaN and infinities", hamba, `{"type":"record","name":"Fl","fields":[{"name":"a","type":"double"},{"name":"b","type":"double"},{"name":"c","type":"float"},{"name":"d","type":"float"}]}`,
			map[string]any{"a": math.NaN(), "b": math.Inf(1), "c": float32(math.Inf(-1)), "d": float32(math.NaN())},
			`{"a":"NaN","b":"Infinity","c":"-Infinity","d":"NaN"}`},
		{"strings that need escaping", hamba, `{"type":"array","items":"string"}`,
			[]any{`say "hi"`, `back\slash`, "tab\tnl\ncr\r", "\x00\x01\x1f\x7f", "\u2028\u2029", "emoji 🎉", "</script>"},
			`["say \"hi\"","back\\slash","tab\tnl\ncr\r","\u0000\u0001\u001f` + "\x7f" + `","\u2028\u2029","emoji 🎉","</script>"]`},
		{"string that is not UTF-8", hamba, `"string"`, "a\xffb\xc3", `"a` + "\uFFFD" + `b` + "\uFFFD" + `"`},
		{"map keys that need escaping", hamba, `{"type":"map","values":"int"}`, map[string]any{`"q"`: 1, "a\nb": 2, "\xff": 3}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := checkAvroAgainstHamba(t, tc.cfg, tc.schema, tc.value)
			if tc.want != "" {
				require.Equal(t, tc.want, got)
			}
		})
	}
}

const logicalAvro = `{"type":"record","name":"Logical","fields":[
 {"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":38,"scale":4}},
 {"name":"dec0","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":0}},
 {"name":"decf","type":{"type":"fixed","name":"D8","size":8,"logicalType":"decimal","precision":18,"scale":2}},
 {"name":"tsms","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"tsus","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"ltsms","type":{"type":"long","logicalType":"local-timestamp-millis"}},
 {"name":"ltsus","type":{"type":"long","logicalType":"local-timestamp-micros"}},
 {"name":"date","type":{"type":"int","logicalType":"date"}},
 {"name":"tms","type":{"type":"int","logicalType":"time-millis"}},
 {"name":"tus","type":{"type":"long","logicalType":"time-micros"}},
 {"name":"uuid","type":{"type":"string","logicalType":"uuid"}}
]}`

func TestAvroLogicalTypes(t *testing.T) {
	rat := func(s string) *big.Rat {
		r, ok := new(big.Rat).SetString(s)
		require.True(t, ok, s)
		return r
	}
	// Raw payloads written by hand with hamba's Writer for the time types:
	// hamba's Marshal of time.Time for local timestamps depends on
	// time.Local, which the test does not control.
	cases := []struct {
		name                     string
		dec, dec0, decf          string
		tsms, tsus, ltsms, ltsus int64
		date, tms                int32
		tus                      int64
		want                     string
	}{
		{"ordinary", "9.5", "42", "0.05", 1764504000123, 1764504000123456, 1764504000123, 1764504000123456, 20422, 45296789, 45296789012,
			`{"dec":9.5000,"dec0":42,"decf":0.05,"tsms":"2025-11-30T12:00:00.123Z","tsus":"2025-11-30T12:00:00.123456Z","ltsms":"2025-11-30T12:00:00.123","ltsus":"2025-11-30T12:00:00.123456","date":"2025-11-30","tms":"12:34:56.789","tus":"12:34:56.789012","uuid":"0b8e7d3c-0000-4000-8000-000000000001"}`},
		{"negative and before 1970", "-0.5", "-1", "-0.05", -1, -1, -1001, -1, -1, 0, 0,
			`{"dec":-0.5000,"dec0":-1,"decf":-0.05,"tsms":"1969-12-31T23:59:59.999Z","tsus":"1969-12-31T23:59:59.999999Z","ltsms":"1969-12-31T23:59:58.999","ltsus":"1969-12-31T23:59:59.999999","date":"1969-12-31","tms":"00:00:00.000","tus":"00:00:00.000000","uuid":"0b8e7d3c-0000-4000-8000-000000000001"}`},
		{"zeros", "0", "0", "0", 0, 0, 0, 0, 0, 0, 0,
			`{"dec":0.0000,"dec0":0,"decf":0.00,"tsms":"1970-01-01T00:00:00.000Z","tsus":"1970-01-01T00:00:00.000000Z","ltsms":"1970-01-01T00:00:00.000","ltsus":"1970-01-01T00:00:00.000000","date":"1970-01-01","tms":"00:00:00.000","tus":"00:00:00.000000","uuid":"0b8e7d3c-0000-4000-8000-000000000001"}`},
		{"large precision", "-1234567890123456789012345678901234.5678", "9999999999", "-9999999999999999.99", 253402300799999, 253402300799999999, -62135596800000, 0, -719162, 86399999, 86399999999,
			`{"dec":-1234567890123456789012345678901234.5678,"dec0":9999999999,"decf":-9999999999999999.99,"tsms":"9999-12-31T23:59:59.999Z","tsus":"9999-12-31T23:59:59.999999Z","ltsms":"0001-01-01T00:00:00.000","ltsus":"1970-01-01T00:00:00.000000","date":"0001-01-01","tms":"23:59:59.999","tus":"23:59:59.999999","uuid":"0b8e7d3c-0000-4000-8000-000000000001"}`},
		{"small fractions", "0.0001", "-128", "-1.28", 0, 0, 0, 0, 0, 0, 0,
			`{"dec":0.0001,"dec0":-128,"decf":-1.28,"tsms":"1970-01-01T00:00:00.000Z","tsus":"1970-01-01T00:00:00.000000Z","ltsms":"1970-01-01T00:00:00.000","ltsus":"1970-01-01T00:00:00.000000","date":"1970-01-01","tms":"00:00:00.000","tus":"00:00:00.000000","uuid":"0b8e7d3c-0000-4000-8000-000000000001"}`},
	}
	c := avroCodecFor(t, logicalAvro)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := avro.NewWriter(nil, 64)
			writeDec := func(s string, scale int) []byte {
				n := new(big.Rat).Mul(rat(s), new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
				require.True(t, n.IsInt())
				return twosComplementRef(n.Num())
			}
			w.WriteBytes(writeDec(tc.dec, 4))
			w.WriteBytes(writeDec(tc.dec0, 0))
			fixed := writeDec(tc.decf, 2)
			pad := byte(0)
			if fixed[0]&0x80 != 0 {
				pad = 0xff
			}
			for len(fixed) < 8 {
				fixed = append([]byte{pad}, fixed...)
			}
			_, _ = w.Write(fixed)
			w.WriteLong(tc.tsms)
			w.WriteLong(tc.tsus)
			w.WriteLong(tc.ltsms)
			w.WriteLong(tc.ltsus)
			w.WriteInt(tc.date)
			w.WriteInt(tc.tms)
			w.WriteLong(tc.tus)
			w.WriteString("0b8e7d3c-0000-4000-8000-000000000001")
			require.NoError(t, w.Error)
			payload := w.Buffer()

			got, err := c.appendJSON(nil, payload)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(got))

			// hamba reads the same bytes to the same values (local
			// timestamps aside, which it puts in time.Local).
			var generic any
			require.NoError(t, avro.Unmarshal(c.schema, payload, &generic))
			want, err := json.Marshal(hambaJSON(t, c.schema, generic))
			require.NoError(t, err)
			requireSameJSON(t, want, got)

			// hamba's own encoder writes the decimals the same bytes.
			byHamba, err := avro.Marshal(c.schema, map[string]any{
				"dec": rat(tc.dec), "dec0": rat(tc.dec0), "decf": rat(tc.decf),
				"tsms": generic.(map[string]any)["tsms"], "tsus": generic.(map[string]any)["tsus"],
				"ltsms": generic.(map[string]any)["ltsms"], "ltsus": generic.(map[string]any)["ltsus"],
				"date": generic.(map[string]any)["date"], "tms": generic.(map[string]any)["tms"], "tus": generic.(map[string]any)["tus"],
				"uuid": "0b8e7d3c-0000-4000-8000-000000000001",
			})
			require.NoError(t, err)
			got2, err := c.appendJSON(nil, byHamba)
			require.NoError(t, err)
			requireSameJSON(t, got, got2)

			// And the text encodes back to the same bytes.
			enc, err := c.encode(nil, got)
			require.NoError(t, err)
			require.Equal(t, payload, enc)
		})
	}
}

// twosComplementRef is the decimal bytes by the textbook: the shortest
// big-endian two's complement, computed independently of twosComplement.
func twosComplementRef(n *big.Int) []byte {
	for size := 1; ; size++ {
		lim := new(big.Int).Lsh(big.NewInt(1), uint(8*size-1))
		if n.Cmp(new(big.Int).Neg(lim)) >= 0 && n.Cmp(lim) < 0 {
			v := new(big.Int).Set(n)
			if v.Sign() < 0 {
				v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*size)))
			}
			b := v.FillBytes(make([]byte, size))
			return b
		}
	}
}

func TestAvroBadPayloadsFailWithoutPanic(t *testing.T) {
	c := avroCodecFor(t, allPrimitivesAvro)
	good, err := avro.Marshal(c.schema, map[string]any{"n": nil, "b": true, "i": int32(1), "l": int64(2), "f": float32(3), "d": 4.0, "by": []byte("xyz"), "s": "hello"})
	require.NoError(t, err)
	_, err = c.appendJSON(nil, good)
	require.NoError(t, err)

	for n := 0; n < len(good); n++ {
		out, err := c.appendJSON(nil, good[:n])
		require.Errorf(t, err, "truncated to %d bytes: %s", n, out)
	}
	_, err = c.appendJSON(nil, append(append([]byte{}, good...), 0, 0))
	require.ErrorContains(t, err, "2 bytes left over")

	// An error names the field it happened in.
	_, err = c.appendJSON(nil, good[:len(good)-2])
	require.ErrorContains(t, err, "field s:")

	nested := avroCodecFor(t, `{"type":"record","name":"O","fields":[{"name":"items","type":{"type":"array","items":{"type":"record","name":"I","fields":[{"name":"price","type":"double"}]}}}]}`)
	_, err = nested.appendJSON(nil, []byte{2, 0, 0})
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "items.price", fe.Path)

	// Out-of-range enum and union indexes, a negative length.
	_, err = avroCodecFor(t, `{"type":"enum","name":"E","symbols":["A"]}`).appendJSON(nil, []byte{2})
	require.ErrorContains(t, err, "no symbol 1")
	_, err = avroCodecFor(t, `{"type":"enum","name":"E","symbols":["A"]}`).appendJSON(nil, []byte{1})
	require.ErrorContains(t, err, "no symbol -1")
	_, err = avroCodecFor(t, `["null","int"]`).appendJSON(nil, []byte{4})
	require.Error(t, err)
	_, err = avroCodecFor(t, `["null","int"]`).appendJSON(nil, []byte{1})
	require.Error(t, err)
	_, err = avroCodecFor(t, `"string"`).appendJSON(nil, []byte{1})
	require.Error(t, err)
	// A varint longer than 10 bytes.
	_, err = avroCodecFor(t, `"long"`).appendJSON(nil, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	require.Error(t, err)
	// An int beyond 32 bits is not an int (it would not write back).
	_, err = avroCodecFor(t, `"int"`).appendJSON(nil, binary.AppendVarint(nil, math.MaxInt32+1))
	require.ErrorContains(t, err, "does not fit an int")
	out, err := avroCodecFor(t, `"int"`).appendJSON(nil, binary.AppendVarint(nil, math.MinInt32))
	require.NoError(t, err)
	require.Equal(t, "-2147483648", string(out))
	// A block count far beyond the bytes left.
	_, err = avroCodecFor(t, `{"type":"array","items":"null"}`).appendJSON(nil, []byte{0xfe, 0xff, 0xff, 0xff, 0x0f})
	require.Error(t, err)
}

// A record type defined in another subject, named by the schema that uses
// it and listed as a reference, decodes and encodes.
func TestAvroReferenceToAnotherSubject(t *testing.T) {
	f := newFake(t)
	f.register(t, "address", sr.Schema{Type: sr.TypeAvro, Schema: `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"city","type":"string"},{"name":"zip","type":["null","string"],"default":null}]}`})
	id := f.register(t, "people-value", sr.Schema{Type: sr.TypeAvro,
		Schema:     `{"type":"record","name":"Person","namespace":"com.acme","fields":[{"name":"name","type":"string"},{"name":"home","type":"Address"},{"name":"work","type":["null","com.acme.Address"],"default":null}]}`,
		References: []sr.SchemaReference{{Name: "com.acme.Address", Subject: "address", Version: 1}}})
	reg := f.open(t)
	ctx := t.Context()

	text := `{"name":"Ann","home":{"city":"Oslo","zip":"0150"},"work":{"city":"Bergen","zip":null}}`
	enc, err := reg.Encode(ctx, Ref{Subject: "people-value"}, []byte(text))
	require.NoError(t, err)
	require.Equal(t, id, enc.ID)
	out, gotID, ok, err := reg.NewDecoder(ctx).Decode(nil, enc.Bytes)
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, id, gotID)
	require.Equal(t, text, string(out))
}

// Two versions of one subject, the second adding a field with a default:
// records written with either decode under their own id in one Decoder.
func TestAvroSchemaEvolution(t *testing.T) {
	f := newFake(t)
	v1 := `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"}]}`
	v2 := `{"type":"record","name":"User","namespace":"com.acme","fields":[{"name":"id","type":"long"},{"name":"email","type":"string","default":"none"}]}`
	id1 := f.register(t, "users-value", sr.Schema{Type: sr.TypeAvro, Schema: v1})
	id2 := f.register(t, "users-value", sr.Schema{Type: sr.TypeAvro, Schema: v2})
	require.NotEqual(t, id1, id2)
	reg := f.open(t)
	ctx := t.Context()

	old, err := reg.Encode(ctx, Ref{Subject: "users-value", Version: 1}, []byte(`{"id":1}`))
	require.NoError(t, err)
	require.Equal(t, id1, old.ID)
	cur, err := reg.Encode(ctx, Ref{Subject: "users-value"}, []byte(`{"id":2}`))
	require.NoError(t, err)
	require.Equal(t, id2, cur.ID)
	require.Equal(t, 2, cur.Version)

	dec := reg.NewDecoder(ctx)
	for range 3 { // interleaved, so neither id's codec leaks into the other's
		out, _, _, err := dec.Decode(nil, old.Bytes)
		require.NoError(t, err)
		require.Equal(t, `{"id":1}`, string(out))
		out, _, _, err = dec.Decode(nil, cur.Bytes)
		require.NoError(t, err)
		require.Equal(t, `{"id":2,"email":"none"}`, string(out))
	}
}

// Bytes a schema does not describe must end in an error soon, whatever the
// schema: not in a stack overflow (which Go cannot recover from: it ends
// kql) nor in hundreds of megabytes of output.
func TestAvroHostilePayloadsEndSoon(t *testing.T) {
	list := avroCodecFor(t, `{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}`)

	// A legitimately long list decodes.
	out, err := list.appendJSON(nil, append(bytesOf(2, 5000), 0))
	require.NoError(t, err)
	require.True(t, json.Valid(out))
	require.Equal(t, 5001, strings.Count(string(out), "{"))

	// A 1 MiB payload of union index 1 nests a record per byte: it used
	// to overflow the goroutine stack ("fatal error: stack overflow").
	_, err = list.appendJSON(nil, append(bytesOf(2, 1<<20), 0))
	require.ErrorContains(t, err, "nested more than")

	// Arrays of items that take no bytes: many blocks, each with a count
	// near the old per-block limit, made 335 MB of output from 3 kB.
	nulls := avroCodecFor(t, `{"type":"array","items":"null"}`)
	var p []byte
	for len(p) < 3000 {
		p = binary.AppendVarint(p, 65536+int64(3000-len(p))-10)
	}
	out, err = nulls.appendJSON(nil, p)
	require.Error(t, err)
	require.Less(t, len(out), 1<<20)

	// A block count of -2^63 (whose negation is itself) is an error.
	p = binary.AppendVarint(nil, math.MinInt64)
	p = binary.AppendVarint(p, 1)
	_, err = nulls.appendJSON(nil, append(p, 0))
	require.Error(t, err)
}

func bytesOf(b byte, n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = b
	}
	return p
}
