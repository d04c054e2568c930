package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/twmb/franz-go/pkg/sr"
)

// jsonCodec is a JSON Schema: the payload after the header is JSON text,
// shown compacted; writing validates against the schema first.
//
// The validator is google/jsonschema-go (draft-07 and 2020-12, what the
// Confluent serializers write). santhosh-tekuri/jsonschema was measured
// first: it compiles every draft's meta-schemas in its package init, 9.8 ms
// and 1.7 MB at the start of every kql process, registry or not, which
// doubled a one-shot SHOW TOPICS; this one's init is 0.5 ms.
type jsonCodec struct {
	schema     *jsonschema.Resolved
	compileErr error // the schema did not compile: records still read, none is written
}

// jsonSchemaBase is where the main schema lives for resolving relative
// $refs; references are placed beside it under the names the registry
// gives them. Nothing is fetched from it: the loader knows only the
// references.
const jsonSchemaBase = "https://kql.invalid/schemas/"

func compileJSONSchema(s sr.Schema, refs []reference) (codec, error) {
	var root jsonschema.Schema
	if err := json.Unmarshal([]byte(s.Schema), &root); err != nil {
		if !json.Valid([]byte(s.Schema)) {
			return nil, fmt.Errorf("the JSON Schema is not JSON: %w", err)
		}
		// JSON, but not a schema the validator takes ({"type": 5}):
		// records still read; writing says why it cannot validate.
		return &jsonCodec{compileErr: fmt.Errorf("the JSON Schema does not compile: %w", err)}, nil
	}
	// A main schema with an absolute "$id" resolves its relative $refs
	// against that $id, not against where kql put it. Confluent registers
	// each reference at its name resolved against the main $id
	// (JsonSchema.java); so does kql, as well as beside the main schema
	// for one without an $id.
	var idBase *url.URL
	if u, err := url.Parse(root.ID); err == nil && root.ID != "" && u.IsAbs() {
		idBase = u
	}
	byURL := map[string]*jsonschema.Schema{}
	for _, ref := range refs {
		var refSchema jsonschema.Schema
		if err := json.Unmarshal([]byte(ref.schema.Schema), &refSchema); err != nil {
			return nil, fmt.Errorf("reference %q is not JSON: %w", ref.name, err)
		}
		loc := ref.name
		u, err := url.Parse(ref.name)
		if err != nil || !u.IsAbs() {
			loc = jsonSchemaBase + ref.name
		}
		byURL[loc] = &refSchema
		if idBase != nil && err == nil {
			byURL[idBase.ResolveReference(u).String()] = &refSchema
		}
		if refSchema.ID != "" { // a reference may be asked for by its own $id
			if u, err := url.Parse(refSchema.ID); err == nil && u.IsAbs() {
				byURL[u.String()] = &refSchema
			}
		}
	}
	loader := func(u *url.URL) (*jsonschema.Schema, error) {
		noFrag := *u
		noFrag.Fragment = ""
		if rs, ok := byURL[noFrag.String()]; ok {
			return rs, nil
		}
		return nil, fmt.Errorf("%s is not among the schema's references: kql loads nothing else", u)
	}
	rs, err := root.Resolve(&jsonschema.ResolveOptions{BaseURI: jsonSchemaBase + "kql-registry-schema.json", Loader: loader})
	if err != nil {
		// Reading needs no schema (the payload is JSON already): only
		// writing, which validates, fails on it.
		return &jsonCodec{compileErr: fmt.Errorf("the JSON Schema does not compile: %w", err)}, nil
	}
	return &jsonCodec{schema: rs}, nil
}

func (c *jsonCodec) kind() sr.SchemaType { return sr.TypeJSON }

func (c *jsonCodec) appendJSON(dst, payload []byte) ([]byte, error) {
	if !utf8.Valid(payload) {
		// json.Compact copies string bytes as they are; output must stay
		// valid UTF-8 (JSON text is).
		payload = []byte(strings.ToValidUTF8(string(payload), "\uFFFD"))
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, payload); err != nil {
		return dst, fmt.Errorf("not JSON: %w", err)
	}
	return buf.Bytes(), nil
}

func (c *jsonCodec) encode(dst []byte, text []byte) ([]byte, error) {
	if c.compileErr != nil {
		return nil, c.compileErr
	}
	inst, err := parseJSON(text)
	if err != nil {
		return nil, err
	}
	if err := c.schema.Validate(plainJSON(inst)); err != nil {
		return nil, fmt.Errorf("does not fit the JSON Schema: %s", validationMessage(err))
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, text); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// plainJSON turns parseJSON's exact numbers into the float64s the validator
// takes (it checks "integer" by the value, so 7 and 7.0 are both integers).
func plainJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainJSON(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainJSON(e)
		}
	}
	return v
}

// validationMessage turns the validator's chain of "validating <schema
// location>:" prefixes into where in the value it failed and what failed:
// "at /ship/zip: pattern: ...". A $ref jumps to the referenced schema (its
// root, or its URL): locations after it are relative to it, so they are
// appended to the place the jump was made from.
func validationMessage(err error) string {
	msg, at, base := err.Error(), "", ""
	for first := true; strings.HasPrefix(msg, "validating "); first = false {
		j := strings.Index(msg, ": ")
		if j < 0 {
			break
		}
		loc := msg[len("validating "):j]
		msg = msg[j+2:]
		if i := strings.Index(loc, "#"); i >= 0 && strings.HasPrefix(loc[i+1:], "/") {
			loc = loc[i+1:]
		}
		if !strings.HasPrefix(loc, "/") {
			if !first {
				base = at // a jump into a referenced schema
			}
			continue
		}
		// A schema location names the value's place through the keywords
		// that lead to it; the value's own path is what a user wrote.
		loc = strings.ReplaceAll(loc, "/properties/", "/")
		loc = strings.ReplaceAll(loc, "/items", "/[]")
		at = base + loc
	}
	if at == "" {
		at = "/"
	}
	return "at " + at + ": " + msg
}
