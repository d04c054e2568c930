package schema

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/stretchr/testify/require"
)

// Every shape the decoder writes encodes back to the same value, and the
// bytes kql writes are what hamba reads to the same value.
func TestAvroEncodeRoundTrips(t *testing.T) {
	cases := []struct {
		name, schema, text string
	}{
		{"primitives", allPrimitivesAvro, `{"n":null,"b":true,"i":-7,"l":9223372036854775807,"f":1.1,"d":1e-300,"by":"AAH/","s":"héllo \"q\" \n \u0000"}`},
		{"int extremes", `{"type":"array","items":"int"}`, `[-2147483648,2147483647,0]`},
		{"long extremes", `{"type":"array","items":"long"}`, `[-9223372036854775808,9223372036854775807]`},
		{"floats", `{"type":"array","items":"float"}`, `[1.5,-0,3.4028235e+38,"NaN","Infinity","-Infinity"]`},
		{"doubles", `{"type":"array","items":"double"}`, `[0.1,1e+300,5e-324,"NaN","Infinity","-Infinity"]`},
		{"nested", `{"type":"record","name":"Outer","fields":[{"name":"inner","type":{"type":"record","name":"Inner","fields":[{"name":"x","type":"int"}]}},{"name":"again","type":"Inner"}]}`, `{"inner":{"x":1},"again":{"x":2}}`},
		{"array and map", `{"type":"record","name":"AM","fields":[{"name":"a","type":{"type":"array","items":{"type":"map","values":"long"}}}]}`, `{"a":[{"x":1,"y":2},{},{"z":3}]}`},
		{"nullable union", `{"type":"array","items":["null","string"]}`, `[null,"x","null"]`},
		{"three-way union", `{"type":"array","items":["null","long","string"]}`, `[null,5,"5"]`},
		{"union of named records", `{"type":"record","name":"U","namespace":"com.acme","fields":[
			{"name":"u","type":["null",{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]},{"type":"record","name":"B","fields":[{"name":"b","type":"string"}]}]},
			{"name":"v","type":["null","A","B"]}]}`, `{"u":{"b":"x"},"v":{"a":1}}`},
		{"enum", `{"type":"enum","name":"E","symbols":["A","B","C"]}`, `"B"`},
		{"fixed", `{"type":"fixed","name":"F","size":4}`, `"AQID+g=="`},
		{"logical", logicalAvro, `{"dec":-0.0500,"dec0":0,"decf":123456.78,"tsms":"1969-12-31T23:59:59.999Z","tsus":"2025-11-30T12:00:00.123456Z","ltsms":"2025-11-30T12:00:00.123","ltsus":"2025-11-30T12:00:00.123456","date":"1900-01-01","tms":"12:34:56.789","tus":"23:59:59.999999","uuid":"0b8e7d3c-0000-4000-8000-000000000001"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := avroCodecFor(t, tc.schema)
			b, err := c.encode(nil, []byte(tc.text))
			require.NoError(t, err)
			out, err := c.appendJSON(nil, b)
			require.NoError(t, err)
			requireSameJSON(t, []byte(tc.text), out)
			// Encoding the decoded text gives the same bytes again.
			b2, err := c.encode(nil, out)
			require.NoError(t, err)
			require.Equal(t, b, b2)
			// hamba reads kql's bytes to the same value.
			var generic any
			require.NoError(t, avro.Unmarshal(c.schema, b, &generic))
			want, err := json.Marshal(hambaJSON(t, c.schema, generic))
			require.NoError(t, err)
			requireSameJSON(t, want, out)
		})
	}
}

// Avro's own JSON encoding of unions, {"type": value}, and numbers for the
// time types are accepted too.
func TestAvroEncodeAcceptsAvroJSON(t *testing.T) {
	c := avroCodecFor(t, `{"type":"record","name":"W","namespace":"com.acme","fields":[
		{"name":"s","type":["null","string"]},
		{"name":"l","type":["null","string","long"]},
		{"name":"r","type":["null",{"type":"record","name":"A","fields":[{"name":"a","type":"int"}]}]},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"d","type":{"type":"int","logicalType":"date"}}]}`)
	b, err := c.encode(nil, []byte(`{"s":{"string":"x"},"l":{"long":5},"r":{"com.acme.A":{"a":1}},"ts":1764504000123,"d":-1}`))
	require.NoError(t, err)
	out, err := c.appendJSON(nil, b)
	require.NoError(t, err)
	require.Equal(t, `{"s":"x","l":5,"r":{"a":1},"ts":"2025-11-30T12:00:00.123Z","d":"1969-12-31"}`, string(out))

	// {"string": "5"} picks the string branch, where a bare "5" would too,
	// and {"long": 5} the long one.
	b, err = c.encode(nil, []byte(`{"s":null,"l":{"string":"5"},"r":null,"ts":0,"d":0}`))
	require.NoError(t, err)
	out, err = c.appendJSON(nil, b)
	require.NoError(t, err)
	require.Equal(t, `{"s":null,"l":"5","r":null,"ts":"1970-01-01T00:00:00.000Z","d":"1970-01-01"}`, string(out))
}

func TestAvroEncodeErrors(t *testing.T) {
	const s = `{"type":"record","name":"Order","namespace":"com.acme","fields":[
		{"name":"id","type":"int"},
		{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["CARD","CASH"]},"default":"CARD"},
		{"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":6,"scale":2},"default":"\u0000"},
		{"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
			{"name":"sku","type":"string"},
			{"name":"qty","type":"long"},
			{"name":"tag","type":["null","string","long"],"default":null}]}},"default":[]},
		{"name":"attrs","type":{"type":"map","values":"double"},"default":{}},
		{"name":"when","type":{"type":"long","logicalType":"timestamp-millis"},"default":0},
		{"name":"fx","type":{"type":"fixed","name":"F2","size":2},"default":"\u0000\u0001"}]}`
	c := avroCodecFor(t, s)
	cases := []struct {
		name, text string
		want       []string // substrings of the error
	}{
		{"wrong type", `{"id":"seven"}`, []string{`field id: expected an integer, got "seven" (string)`}},
		{"fraction for an int", `{"id":1.5}`, []string{`field id: expected an integer, got 1.5 (number)`}},
		{"int above 32 bits", `{"id":2147483648}`, []string{`field id:`, `int (32-bit)`, `2147483648`}},
		{"int below 32 bits", `{"id":-2147483649}`, []string{`field id:`, `int (32-bit)`}},
		{"missing without default", `{}`, []string{`field id: missing, and the schema gives it no default`}},
		{"missing nested without default", `{"id":1,"lines":[{"sku":"a","qty":1},{"sku":"b"}]}`, []string{`field lines[1].qty: missing`}},
		{"unknown field", `{"id":1,"colour":"red"}`, []string{`colour`, `com.acme.Order`}},
		{"unknown nested field", `{"id":1,"lines":[{"sku":"a","qty":1,"price":2}]}`, []string{`lines[0]`, `price`}},
		{"enum symbol not in the list", `{"id":1,"kind":"CHEQUE"}`, []string{`field kind: expected one of the symbols CARD, CASH, got "CHEQUE" (string)`}},
		{"decimal with too many places", `{"id":1,"price":1.234}`, []string{`field price:`, `1.234`, `decimal places`}},
		{"decimal with too many digits", `{"id":1,"price":12345.6}`, []string{`field price:`, `decimal(6,2)`}},
		{"decimal not a number", `{"id":1,"price":"abc"}`, []string{`field price: expected a decimal(6,2) number`}},
		{"wrong type in an array item", `{"id":1,"lines":[{"sku":1,"qty":1}]}`, []string{`field lines[0].sku: expected a string, got 1 (number)`}},
		{"wrong type in a map value", `{"id":1,"attrs":{"x":"y"}}`, []string{`field attrs.x: expected a number, got "y" (string)`}},
		{"union no branch accepts", `{"id":1,"lines":[{"sku":"a","qty":1,"tag":true}]}`, []string{`field lines[0].tag:`, `null, string, long`, `true (boolean)`}},
		{"bad timestamp text", `{"id":1,"when":"yesterday"}`, []string{`field when:`, `timestamp-millis`}},
		{"fixed of the wrong size", `{"id":1,"fx":"AAAA"}`, []string{`field fx:`, `2 bytes`}},
		{"not base64", `{"id":1,"fx":"!!"}`, []string{`field fx: expected bytes as a base64 string`}},
		{"not an object", `[1]`, []string{`expected an object for record com.acme.Order, got an array`}},
		{"not JSON", `{"id":`, []string{`not JSON`}},
		{"two values", `{"id":1} {"id":2}`, []string{`not one JSON value`}},
		{"trailing bracket", `{"id":1}]`, []string{`not one JSON value`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.encode(nil, []byte(tc.text))
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

// A field left out takes its schema default, whatever the type: the bytes
// are what hamba writes for a record with the default filled in.
func TestAvroEncodeFillsDefaults(t *testing.T) {
	const s = `{"type":"record","name":"D","namespace":"com.acme","fields":[
		{"name":"id","type":"int"},
		{"name":"n","type":["null","string"],"default":null},
		{"name":"s","type":["string","null"],"default":"dflt"},
		{"name":"i","type":"int","default":-3},
		{"name":"l","type":"long","default":1234567890123},
		{"name":"f","type":"float","default":1.5},
		{"name":"d","type":"double","default":0.1},
		{"name":"b","type":"boolean","default":true},
		{"name":"by","type":"bytes","default":"\u0000\u00ff"},
		{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]},"default":"B"},
		{"name":"a","type":{"type":"array","items":"int"},"default":[1,2]},
		{"name":"an","type":{"type":"array","items":["null","int"]},"default":[null]},
		{"name":"m","type":{"type":"map","values":"string"},"default":{"k":"v"}},
		{"name":"r","type":{"type":"record","name":"R","fields":[{"name":"x","type":"int","default":7},{"name":"y","type":["null","string"],"default":null}]},"default":{"x":1}},
		{"name":"fx","type":{"type":"fixed","name":"F2","size":2},"default":"\u0001\u0002"},
		{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":6,"scale":2},"default":"\u0001"},
		{"name":"decf","type":{"type":"fixed","name":"F4","size":4,"logicalType":"decimal","precision":6,"scale":2},"default":"\u0000\u0000\u0000\u0005"},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"},"default":1000}]}`
	c := avroCodecFor(t, s)
	b, err := c.encode(nil, []byte(`{"id":1}`))
	require.NoError(t, err)
	out, err := c.appendJSON(nil, b)
	require.NoError(t, err)
	require.Equal(t, `{"id":1,"n":null,"s":"dflt","i":-3,"l":1234567890123,"f":1.5,"d":0.1,"b":true,"by":"AP8=","e":"B","a":[1,2],"an":[null],"m":{"k":"v"},"r":{"x":1,"y":null},"fx":"AQI=","dec":0.01,"decf":0.05,"ts":"1970-01-01T00:00:01.000Z"}`, string(out))

	// hamba, reading a writer schema with only id, fills the same defaults
	// (but for the nulls inside an array or record default, which hamba
	// trips on itself: "unable to resolve type avro.nullDefaultType").
	c = avroCodecFor(t, strings.NewReplacer(`{"name":"an","type":{"type":"array","items":["null","int"]},"default":[null]},`, "",
		`,{"name":"y","type":["null","string"],"default":null}`, "").Replace(s))
	out, err = c.encode(nil, []byte(`{"id":1}`))
	require.NoError(t, err)
	out, err = c.appendJSON(nil, out)
	require.NoError(t, err)
	writer := avro.MustParse(`{"type":"record","name":"D","namespace":"com.acme","fields":[{"name":"id","type":"int"}]}`)
	onlyID, err := avro.Marshal(writer, map[string]any{"id": 1})
	require.NoError(t, err)
	var generic any
	resolved, err := avro.NewSchemaCompatibility().Resolve(c.schema, writer)
	require.NoError(t, err)
	require.NoError(t, avro.Unmarshal(resolved, onlyID, &generic))
	want, err := json.Marshal(hambaJSON(t, c.schema, generic))
	require.NoError(t, err)
	requireSameJSON(t, want, out)
}

func TestAvroEncodeFloatRanges(t *testing.T) {
	c := avroCodecFor(t, `"float"`)
	b, err := c.encode(nil, []byte(`0.1`))
	require.NoError(t, err)
	require.Equal(t, math.Float32bits(0.1), uint32(b[0])|uint32(b[1])<<8|uint32(b[2])<<16|uint32(b[3])<<24)
	_, err = c.encode(nil, []byte(`1e400`))
	require.Error(t, err)
}

// A bare value goes back into the branch decoding showed it from: an enum's
// symbol into the enum, a timestamp's text into the timestamp, though a
// string branch comes first in the union and would take either text.
func TestAvroEncodeBareUnionValueKeepsItsBranch(t *testing.T) {
	c := avroCodecFor(t, `{"type":"record","name":"U","fields":[
		{"name":"k","type":["null","string",{"type":"enum","name":"Kind","symbols":["CARD","CASH"]}]},
		{"name":"t","type":["null","string",{"type":"long","logicalType":"timestamp-millis"}]},
		{"name":"n","type":["null","double","long"]}]}`)
	text := `{"k":"CASH","t":"2025-11-30T12:00:00.123Z","n":7}`
	b, err := c.encode(nil, []byte(text))
	require.NoError(t, err)
	// branch indexes (zigzag): k enum = 2 -> 4, symbol 1 -> 2; t long = 2 -> 4; n long = 2 -> 4
	require.Equal(t, byte(4), b[0], "k: the enum branch")
	require.Equal(t, byte(2), b[1], "k: CASH")
	require.Equal(t, byte(4), b[2], "t: the timestamp branch")
	out, err := c.appendJSON(nil, b)
	require.NoError(t, err)
	require.Equal(t, text, string(out))
	b2, err := c.encode(nil, []byte(`{"k":"other","t":"not a time","n":7.5}`))
	require.NoError(t, err, "text no enum or time takes goes to the string branch")
	require.Equal(t, byte(2), b2[0])
	out, err = c.appendJSON(nil, b2)
	require.NoError(t, err)
	require.Equal(t, `{"k":"other","t":"not a time","n":7.5}`, string(out))
}

// Decoding shows a decimal as a number, never as a string: a string goes
// to a string branch before a decimal one. "9.50" from the string branch
// of ["null","string",decimal] went into the decimal, and read back as the
// number 9.50.
func TestAvroEncodeBareStringPrefersStringOverDecimal(t *testing.T) {
	c := avroCodecFor(t, `{"type":"record","name":"U","fields":[
		{"name":"d","type":["null","string",{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}]},
		{"name":"f","type":["null","string",{"type":"fixed","name":"Dec","size":8,"logicalType":"decimal","precision":9,"scale":2}]}]}`)
	text := `{"d":"9.50","f":"12"}`
	b, err := c.encode(nil, []byte(text))
	require.NoError(t, err)
	out, err := c.appendJSON(nil, b)
	require.NoError(t, err)
	require.Equal(t, text, string(out))
	// A number still goes to the decimal (the string branch refuses it).
	b, err = c.encode(nil, []byte(`{"d":9.50,"f":12}`))
	require.NoError(t, err)
	out, err = c.appendJSON(nil, b)
	require.NoError(t, err)
	require.Equal(t, `{"d":9.50,"f":12.00}`, string(out))
}

// A timestamp decodes as text, so a bare number in a union of a double and
// a timestamp came from the double: it goes back there, as it did before
// integers were preferred. A plain long still comes before the double.
func TestAvroEncodeBareNumberPrefersPlainIntegers(t *testing.T) {
	c := avroCodecFor(t, `{"type":"record","name":"U","fields":[
		{"name":"x","type":["null","double",{"type":"long","logicalType":"timestamp-millis"}]},
		{"name":"n","type":["null","double","long"]}]}`)
	b, err := c.encode(nil, []byte(`{"x":5,"n":7}`))
	require.NoError(t, err)
	require.Equal(t, byte(2), b[0], "x: the double branch")
	out, err := c.appendJSON(nil, b)
	require.NoError(t, err)
	require.Equal(t, `{"x":5,"n":7}`, string(out))
}
