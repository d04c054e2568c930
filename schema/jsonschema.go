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
	// The draft first: a draft-04 schema ("exclusiveMinimum": true) does
	// not even unmarshal, and one that does failed every PRODUCE with "does
	// not fit the JSON Schema: at /: cannot validate version", blaming the
	// value.
	var head struct {
		Schema string `json:"$schema"`
	}
	if json.Unmarshal([]byte(s.Schema), &head) == nil {
		if _, ok := jsonSchemaDraft(head.Schema); !ok {
			return &jsonCodec{compileErr: fmt.Errorf("the JSON Schema's \"$schema\" is %s: kql validates draft-07 and 2020-12 only, so it cannot write with this schema (its records still read)", head.Schema)}, nil
		}
	}
	var root jsonschema.Schema
	if err := json.Unmarshal([]byte(s.Schema), &root); err != nil {
		if !json.Valid([]byte(s.Schema)) {
			return nil, fmt.Errorf("the JSON Schema is not JSON: %w", err)
		}
		// JSON, but not a schema the validator takes ({"type": 5}):
		// records still read; writing says why it cannot validate.
		return &jsonCodec{compileErr: fmt.Errorf("the JSON Schema does not compile: %w", err)}, nil
	}
	root.Schema, _ = jsonSchemaDraft(root.Schema)
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

// jsonSchemaDraft is the "$schema" the validator knows for a draft-07 or
// 2020-12 "$schema", whatever its scheme and trailing "#": it takes only
// http://json-schema.org/draft-07/schema# and refused the same URL without
// the "#", which schemas are often written with.
func jsonSchemaDraft(s string) (string, bool) {
	u := strings.TrimSuffix(s, "#")
	u = strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
	switch u {
	case "":
		// No "$schema": draft-07, as Confluent's serializers assume (the
		// validator would take 2020-12, where a draft-07 tuple "items"
		// array means something else and was silently not checked).
		return "http://json-schema.org/draft-07/schema#", s == ""
	case "json-schema.org/draft-07/schema":
		return "http://json-schema.org/draft-07/schema#", true
	case "json-schema.org/draft/2020-12/schema":
		return "https://json-schema.org/draft/2020-12/schema", true
	}
	return s, false
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
// "at /ship/zip: pattern: ...". Each location is a JSON pointer from the
// root of its document (or the $id of a schema, or "root"): a location
// that extends the one before it went down through keywords (properties,
// items, allOf, ...), which translate to the value's path; one that does
// not is a $ref's jump (#/definitions/addr), which goes nowhere in the
// value. After a document root or an $id, a pointer is from that document
// root, unless it goes on from the pointer before (an $id inside the same
// document).
func validationMessage(err error) string {
	msg, at, prev := err.Error(), "", ""
	afterRoot := true // the chain starts at the main schema's root
	for strings.HasPrefix(msg, "validating ") {
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
			if loc == "root" || loc == "<anonymous schema>" {
				prev = "" // a document's root: its pointers start again
			}
			afterRoot = true
			continue
		}
		switch {
		case strings.HasPrefix(loc, prev+"/"):
			at += instancePath(loc[len(prev):])
		case afterRoot:
			at += instancePath(loc) // from the root of a referenced document
		}
		prev, afterRoot = loc, false
	}
	if at == "" {
		at = "/"
	}
	return "at " + at + ": " + msg
}

// instancePath turns the keywords of a schema pointer into the value's
// path: /properties/ship/properties/zip is /ship/zip, /items is /[] (the
// validator does not say which element), allOf/1 and the like are nothing.
func instancePath(ptr string) string {
	segs := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	var b strings.Builder
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties":
			if i+1 < len(segs) {
				i++
				name := strings.ReplaceAll(strings.ReplaceAll(segs[i], "~1", "/"), "~0", "~")
				b.WriteString("/" + name)
			}
		case "items":
			if i+1 < len(segs) && isIndex(segs[i+1]) { // draft-07's tuple form
				i++
				b.WriteString("/" + segs[i])
			} else {
				b.WriteString("/[]")
			}
		case "prefixItems":
			if i+1 < len(segs) {
				i++
				b.WriteString("/" + segs[i])
			}
		case "additionalItems", "contains", "unevaluatedItems":
			b.WriteString("/[]")
		case "additionalProperties", "unevaluatedProperties":
			b.WriteString("/*")
		case "patternProperties":
			i++
			b.WriteString("/*")
		case "allOf", "anyOf", "oneOf", "dependentSchemas", "dependencies", "$defs", "definitions":
			i++ // the keyword and its index or name
		}
		// not, if, then, else, propertyNames: the same value
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
