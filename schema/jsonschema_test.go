package schema

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
)

const orderJSONSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "id": {"type": "integer"},
    "amount": {"type": "number", "minimum": 0},
    "tags": {"type": "array", "items": {"type": "string"}},
    "ship": {"$ref": "address.json"}
  },
  "required": ["id", "amount"],
  "additionalProperties": false
}`

const addressJSONSchema = `{
  "type": "object",
  "properties": {"city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]+$"}},
  "required": ["city"]
}`

func TestJSONSchema(t *testing.T) {
	f := newFake(t)
	f.register(t, "address", sr.Schema{Type: sr.TypeJSON, Schema: addressJSONSchema})
	id := f.register(t, "orders-value", sr.Schema{Type: sr.TypeJSON, Schema: orderJSONSchema,
		References: []sr.SchemaReference{{Name: "address.json", Subject: "address", Version: 1}}})
	reg := f.open(t)
	ctx := t.Context()
	dec := reg.NewDecoder(ctx)

	// Decoding compacts the payload, whatever its spacing.
	out, gotID, ok, err := dec.Decode([]byte("x"), wire(id, []byte("{ \"id\" : 1,\n\t\"amount\": 9.50, \"tags\": [ \"a\" , \"b\" ],\"ship\":{\"city\":\"Oslo\"} }\n")))
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, id, gotID)
	require.Equal(t, `x{"id":1,"amount":9.50,"tags":["a","b"],"ship":{"city":"Oslo"}}`, string(out))

	// A payload that is not JSON is a DecodeError, dst unchanged.
	out, _, _, err = dec.Decode([]byte("x"), wire(id, []byte(`{"id":`)))
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "x", string(out))

	// Encoding validates, through the reference too, and compacts.
	enc, err := reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(`{"id": 2, "amount": 1, "ship": {"city": "Bergen", "zip": "5003"}}`))
	require.NoError(t, err)
	require.Equal(t, "JSON", enc.Type)
	require.Equal(t, wire(id, []byte(`{"id":2,"amount":1,"ship":{"city":"Bergen","zip":"5003"}}`)), enc.Bytes)

	cases := []struct{ text, want string }{
		{`{"id": "2", "amount": 1}`, "at /id:"},
		{`{"id": 2, "amount": -1}`, "at /amount:"},
		{`{"id": 2}`, "amount"},
		{`{"id": 2, "amount": 1, "colour": "red"}`, "colour"},
		{`{"id": 2, "amount": 1, "tags": ["a", 3]}`, "at /tags/[]:"}, // the validator names the array, not the index
		{`{"id": 2, "amount": 1, "ship": {"zip": "x1"}}`, "at /ship"},
		{`{"id": 2, "amount": 1, "ship": {"city": "c", "zip": "x1"}}`, "at /ship/zip:"},
		{`{"id": 2, "amount": 1} x`, "not one JSON value"},
	}
	for _, tc := range cases {
		_, err := reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(tc.text))
		require.Error(t, err, tc.text)
		require.Contains(t, err.Error(), tc.want, tc.text)
		t.Logf("%s: %v", tc.text, err)
	}
}

// The common Confluent example has an "$id" in the main schema: a relative
// $ref then resolves against that $id, and Confluent's serializers register
// each reference at its name resolved against it.
func TestJSONSchemaReferenceWithAnID(t *testing.T) {
	f := newFake(t)
	f.register(t, "address", sr.Schema{Type: sr.TypeJSON, Schema: addressJSONSchema})
	main := `{"$id": "https://example.com/schemas/order.json", "type": "object",
	  "properties": {"ship": {"$ref": "address.json"}}, "required": ["ship"]}`
	id := f.register(t, "orders-value", sr.Schema{Type: sr.TypeJSON, Schema: main,
		References: []sr.SchemaReference{{Name: "address.json", Subject: "address", Version: 1}}})
	reg := f.open(t)
	ctx := t.Context()

	out, _, _, err := reg.NewDecoder(ctx).Decode(nil, wire(id, []byte(`{"ship": {"city": "Oslo"}}`)))
	require.NoError(t, err)
	require.Equal(t, `{"ship":{"city":"Oslo"}}`, string(out))
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(`{"ship": {"city": "Oslo"}}`))
	require.NoError(t, err)
	_, err = reg.Encode(ctx, Ref{Subject: "orders-value"}, []byte(`{"ship": {"zip": "1"}}`))
	require.ErrorContains(t, err, "at /ship")

	// A reference named by a full URL, with an $id of its own.
	f.register(t, "address-abs", sr.Schema{Type: sr.TypeJSON, Schema: `{"$id": "https://example.com/schemas/addr2.json", "type": "object", "required": ["city"]}`})
	id2 := f.register(t, "orders2-value", sr.Schema{Type: sr.TypeJSON,
		Schema:     `{"$id": "https://example.com/schemas/order2.json", "properties": {"ship": {"$ref": "https://example.com/schemas/addr2.json"}}}`,
		References: []sr.SchemaReference{{Name: "https://example.com/schemas/addr2.json", Subject: "address-abs", Version: 1}}})
	_, err = reg.Encode(ctx, Ref{ID: id2}, []byte(`{"ship": {}}`))
	require.ErrorContains(t, err, "at /ship")
}

// A relative reference name whose schema carries its own $id, under a main
// schema with an $id: registered twice over, it must still compile.
func TestJSONSchemaReferenceWithIDsOnBothSides(t *testing.T) {
	f := newFake(t)
	f.register(t, "addr3", sr.Schema{Type: sr.TypeJSON, Schema: `{"$id": "https://example.com/schemas/addr3.json", "type": "object", "required": ["city"]}`})
	id := f.register(t, "orders3-value", sr.Schema{Type: sr.TypeJSON,
		Schema:     `{"$id": "https://example.com/schemas/order3.json", "properties": {"ship": {"$ref": "addr3.json"}}}`,
		References: []sr.SchemaReference{{Name: "addr3.json", Subject: "addr3", Version: 1}}})
	reg := f.open(t)
	_, err := reg.Encode(t.Context(), Ref{ID: id}, []byte(`{"ship": {}}`))
	require.ErrorContains(t, err, "at /ship")
	_, err = reg.Encode(t.Context(), Ref{ID: id}, []byte(`{"ship": {"city": "x"}}`))
	require.NoError(t, err)
}

// A JSON Schema that does not compile still lets its records be read (the
// payload is JSON already); only PRODUCE, which validates, fails on it.
func TestJSONSchemaThatDoesNotCompileStillReads(t *testing.T) {
	f := newFake(t)
	id := f.register(t, "broken-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"type": 5}`})
	reg := f.open(t)
	out, _, _, err := reg.NewDecoder(t.Context()).Decode(nil, wire(id, []byte(`{"a": [1, 2]}`)))
	require.NoError(t, err)
	require.Equal(t, `{"a":[1,2]}`, string(out))
	_, err = reg.Encode(t.Context(), Ref{Subject: "broken-value"}, []byte(`{"a": 1}`))
	require.ErrorContains(t, err, "does not compile")
}

// A JSON Schema payload with bytes that are not UTF-8 still reads as valid
// JSON text (U+FFFD in their place): jsonl output must stay JSON.
func TestJSONSchemaPayloadWithInvalidUTF8StaysValidJSON(t *testing.T) {
	f := newFake(t)
	id := f.register(t, "j-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"type":"object","properties":{}}`})
	out, _, _, err := f.open(t).NewDecoder(t.Context()).Decode(nil, wire(id, []byte("{\"a\": \"x\xffy\"}")))
	require.NoError(t, err)
	require.Equal(t, "{\"a\":\"x\uFFFDy\"}", string(out))
}

// Bare text is taken for a string schema, but text that opens an object or
// an array is JSON with a typo: a schema that also accepts a string (a JSON
// Schema with no "type", an Avro union with a "string" branch) must refuse
// it, not write the typo as a string.
func TestEncodeBareTextIsNotMalformedJSON(t *testing.T) {
	f := newFake(t)
	f.register(t, "loose-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"properties": {"id": {"type": "integer"}}}`})
	f.register(t, "union-value", sr.Schema{Type: sr.TypeAvro, Schema: `["null", "string", {"type": "record", "name": "P", "fields": [{"name": "id", "type": "int"}]}]`})
	f.register(t, "str-value", sr.Schema{Type: sr.TypeAvro, Schema: `"string"`})
	reg := f.open(t)
	ctx := t.Context()
	for _, tc := range []struct{ subject, text string }{
		{"loose-value", `{"id": 1, amount: 2}`},
		{"loose-value", `[1, 2`},
		{"union-value", `{"P": {"id": 1}`},
		{"str-value", `{"a": 1`},
	} {
		_, err := reg.Encode(ctx, Ref{Subject: tc.subject}, []byte(tc.text))
		require.Error(t, err, "%s took %q, which is not JSON, as a string", tc.subject, tc.text)
	}
	// Bare text still goes in where a string fits.
	for _, subject := range []string{"loose-value", "union-value", "str-value"} {
		_, err := reg.Encode(ctx, Ref{Subject: subject}, []byte(`cust-7`))
		require.NoError(t, err, subject)
	}
}

// The place a PRODUCE error names is the value's path, whatever keywords
// the schema went through: a local $ref (#/definitions/...), allOf, a
// property named "items", a $ref into a referenced schema's fragment.
func TestJSONSchemaErrorNamesTheValuePath(t *testing.T) {
	f := newFake(t)
	f.register(t, "address", sr.Schema{Type: sr.TypeJSON, Schema: addressJSONSchema})
	defs := `{"type": "object",
	  "definitions": {"addr": {"type": "object", "properties": {"zip": {"type": "string", "pattern": "^[0-9]+$"}}}},
	  "properties": {"ship": {"$ref": "#/definitions/addr"},
	    "items": {"type": "array", "items": {"$ref": "#/definitions/addr"}},
	    "a~b/c": {"type": "string"}}}`
	f.register(t, "defs-value", sr.Schema{Type: sr.TypeJSON, Schema: defs})
	f.register(t, "allof-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"allOf": [{"type": "object", "required": ["a"]}, {"properties": {"a": {"type": "string"}}}]}`})
	f.register(t, "frag-value", sr.Schema{Type: sr.TypeJSON,
		Schema:     `{"type": "object", "properties": {"o": {"type": "object", "properties": {"zip": {"$ref": "address.json#/properties/zip"}}}}}`,
		References: []sr.SchemaReference{{Name: "address.json", Subject: "address", Version: 1}}})
	reg := f.open(t)
	for _, tc := range []struct{ subject, text, at string }{
		{"defs-value", `{"ship": {"zip": "x"}}`, "at /ship/zip:"},
		{"defs-value", `{"items": [{"zip": "1"}, {"zip": "y"}]}`, "at /items/[]/zip:"},
		{"defs-value", `{"a~b/c": 1}`, "at /a~b/c:"},
		{"allof-value", `{"a": 1}`, "at /a:"},
		{"frag-value", `{"o": {"zip": 5}}`, "at /o/zip:"},
	} {
		_, err := reg.Encode(t.Context(), Ref{Subject: tc.subject}, []byte(tc.text))
		require.ErrorContains(t, err, tc.at, "%s %s", tc.subject, tc.text)
	}
}

// "$schema" names the draft: draft-07 and 2020-12 validate however the URL
// is spelled (with or without the "#"); another draft still reads, and
// PRODUCE says the draft is why it cannot write, not that the value does
// not fit.
func TestJSONSchemaDrafts(t *testing.T) {
	f := newFake(t)
	body := `"type": "object", "properties": {"a": {"type": "integer"}}`
	drafts := map[string]bool{
		"http://json-schema.org/draft-07/schema#":       true,
		"http://json-schema.org/draft-07/schema":        true,
		"https://json-schema.org/draft-07/schema":       true,
		"https://json-schema.org/draft/2020-12/schema":  true,
		"https://json-schema.org/draft/2020-12/schema#": true,
		"http://json-schema.org/draft-04/schema#":       false,
		"https://json-schema.org/draft/2019-09/schema":  false,
	}
	subjects := map[string]string{}
	i := 0
	for d := range drafts {
		i++
		subjects[d] = fmt.Sprintf("d%d-value", i)
		f.register(t, subjects[d], sr.Schema{Type: sr.TypeJSON, Schema: `{"$schema": "` + d + `", ` + body + `}`})
	}
	// draft-04's boolean exclusiveMinimum does not even fit draft-07's shape.
	id04 := f.register(t, "d04-value", sr.Schema{Type: sr.TypeJSON, Schema: `{"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"a": {"minimum": 0, "exclusiveMinimum": true}}}`})
	reg := f.open(t)
	for d, ok := range drafts {
		_, err := reg.Encode(t.Context(), Ref{Subject: subjects[d]}, []byte(`{"a": "x"}`))
		if ok {
			require.ErrorContains(t, err, "at /a:", d)
			_, err = reg.Encode(t.Context(), Ref{Subject: subjects[d]}, []byte(`{"a": 1}`))
			require.NoError(t, err, d)
			continue
		}
		require.ErrorContains(t, err, "kql validates draft-07 and 2020-12 only", d)
		require.NotContains(t, err.Error(), "does not fit", d)
	}
	_, err := reg.Encode(t.Context(), Ref{Subject: "d04-value"}, []byte(`{"a": 1}`))
	require.ErrorContains(t, err, "draft-04")
	out, _, _, err := reg.NewDecoder(t.Context()).Decode(nil, wire(id04, []byte(`{"a": 1}`)))
	require.NoError(t, err)
	require.Equal(t, `{"a":1}`, string(out))
}

// A schema without "$schema" is draft-07, as Confluent's serializers take
// it: a tuple "items" array is checked item by item.
func TestJSONSchemaWithoutDraftIsDraft07(t *testing.T) {
	f := newFake(t)
	f.register(t, "tuple-value", sr.Schema{Type: sr.TypeJSON,
		Schema: `{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`})
	reg := f.open(t)
	_, err := reg.Encode(t.Context(), Ref{Subject: "tuple-value"}, []byte(`["a", 1]`))
	require.NoError(t, err)
	_, err = reg.Encode(t.Context(), Ref{Subject: "tuple-value"}, []byte(`["a", "b"]`))
	require.ErrorContains(t, err, "does not fit the JSON Schema")
}
