package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/twmb/franz-go/pkg/sr"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// jsonCodec is a JSON Schema: the payload after the header is JSON text,
// shown compacted; writing validates against the schema first.
type jsonCodec struct {
	schema     *jsonschema.Schema
	compileErr error // the schema did not compile: records still read, none is written
}

// jsonSchemaBase is where the main schema lives for resolving relative
// $refs; references are placed beside it under the names the registry
// gives them. Nothing is fetched from it: the loader refuses every URL.
const jsonSchemaBase = "https://kql.invalid/schemas/"

type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%s is not among the schema's references: kql loads nothing else", u)
}

func compileJSONSchema(s sr.Schema, refs []reference) (codec, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s.Schema)))
	if err != nil {
		return nil, fmt.Errorf("the JSON Schema is not JSON: %w", err)
	}
	// A main schema with an absolute "$id" resolves its relative $refs
	// against that $id, not against where kql put it, so a reference only
	// beside it was not found ("failing loading https://example.com/
	// schemas/address.json") and the schema did not compile: not even its
	// records decoded. Confluent registers each reference at its name
	// resolved against the main $id (JsonSchema.java); so does kql, as well
	// as beside the main schema for one without an $id.
	var idBase *url.URL
	if m, ok := doc.(map[string]any); ok {
		for _, k := range []string{"$id", "id"} { // "id" before draft 6
			if id, ok := m[k].(string); ok {
				if u, err := url.Parse(id); err == nil && u.IsAbs() {
					idBase = u
					break
				}
			}
		}
	}
	for _, ref := range refs {
		refDoc, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(ref.schema.Schema)))
		if err != nil {
			return nil, fmt.Errorf("reference %q is not JSON: %w", ref.name, err)
		}
		loc := ref.name
		u, err := url.Parse(ref.name)
		if err != nil || !u.IsAbs() {
			loc = jsonSchemaBase + ref.name
		}
		locs := []string{loc}
		if idBase != nil && err == nil {
			if byID := idBase.ResolveReference(u).String(); byID != loc {
				locs = append(locs, byID)
			}
		}
		for _, l := range locs {
			if err := c.AddResource(l, refDoc); err != nil {
				return nil, fmt.Errorf("reference %q: %w", ref.name, err)
			}
		}
	}
	main := jsonSchemaBase + "kql-registry-schema.json"
	if err := c.AddResource(main, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(main)
	if err != nil {
		// Reading needs no schema (the payload is JSON already): only
		// writing, which validates, fails on it.
		return &jsonCodec{compileErr: fmt.Errorf("the JSON Schema does not compile: %w", err)}, nil
	}
	return &jsonCodec{schema: sch}, nil
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
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if err := c.schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("does not fit the JSON Schema: %s", validationMessage(ve))
		}
		return nil, err
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, text); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var englishPrinter = message.NewPrinter(language.English)

// validationMessage is the innermost causes of a validation error, each at
// its instance location: "at /amount: got string, want number".
func validationMessage(ve *jsonschema.ValidationError) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/"
			for i, p := range e.InstanceLocation {
				if i == 0 {
					loc = ""
				}
				loc += "/" + p
			}
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(englishPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	msg := ""
	for i, l := range leaves {
		if i > 0 {
			msg += "; "
		}
		msg += l
	}
	return msg
}
