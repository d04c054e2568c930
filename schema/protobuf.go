package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"github.com/twmb/franz-go/pkg/sr"

	_ "github.com/kql-dev/kql/schema/protofeatures" // before protocompile's init: see there
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// protoCodec decodes Protobuf payloads with dynamicpb after compiling the
// registry's .proto text (and its references, by the import names the
// registry gives them) with protocompile. The message is chosen by the
// wire format's message-index path: [0] is the file's first message, [1 2]
// the third message nested in the second, and so on.
//
// JSON is the proto3 JSON mapping (protojson) with the .proto field names
// and every field present (EmitUnpopulated), so a path like value.amount
// finds a zero amount too. 64-bit integers are JSON strings, as that
// mapping writes them; google.protobuf.Timestamp is RFC 3339 text.
type protoCodec struct {
	file protoreflect.FileDescriptor

	mu      sync.Mutex // guards msgs and scratch: a codec is shared by the session
	msgs    map[string]*dynamicpb.Message
	scratch []byte
}

// mainProtoName is the compiled schema's own file name: references keep the
// names the registry gives them, which a schema imports by.
const mainProtoName = "kql-registry-schema.proto"

func compileProtobuf(s sr.Schema, refs []reference) (codec, error) {
	files := map[string]string{mainProtoName: s.Schema}
	for _, ref := range refs {
		files[ref.name] = ref.schema.Schema
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(files),
		}),
	}
	out, err := c.Compile(context.Background(), mainProtoName)
	if err != nil {
		return nil, fmt.Errorf("the .proto does not compile: %w", err)
	}
	fd := out[0]
	if fd.Messages().Len() == 0 {
		return nil, errors.New("the .proto defines no message")
	}
	return &protoCodec{file: fd, msgs: map[string]*dynamicpb.Message{}}, nil
}

func (c *protoCodec) kind() sr.SchemaType { return sr.TypeProtobuf }

// message returns the descriptor at a message-index path. The path counts
// the messages the .proto declares, as Confluent's reference (Java)
// serializer and deserializer do, walking the parsed .proto text: not the
// entry messages protoc makes for map fields, which protoreflect lists
// among a message's nested ones at their field's place. Counting those, a
// message with a map field declared before its nested message Line read
// Line's bytes, index [1 0], as the map's entry: {"key":...,"value":...}.
func (c *protoCodec) message(index []int) (protoreflect.MessageDescriptor, error) {
	msgs := c.file.Messages()
	var md protoreflect.MessageDescriptor
	for depth, i := range index {
		declared := make([]protoreflect.MessageDescriptor, 0, msgs.Len())
		for j := 0; j < msgs.Len(); j++ {
			if m := msgs.Get(j); !m.IsMapEntry() {
				declared = append(declared, m)
			}
		}
		if i < 0 || i >= len(declared) {
			return nil, fmt.Errorf("message index %v: level %d has %d messages, not %d", index, depth, len(declared), i+1)
		}
		md = declared[i]
		msgs = md.Messages()
	}
	if md == nil {
		return nil, fmt.Errorf("empty message index")
	}
	return md, nil
}

var protoJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

func (c *protoCodec) appendJSON(dst, payload []byte) ([]byte, error) {
	var h sr.ConfluentHeader
	index, rest, err := h.DecodeIndex(payload, 64)
	if err != nil {
		return dst, fmt.Errorf("message index: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := fmt.Sprint(index)
	m := c.msgs[key]
	if m == nil {
		md, err := c.message(index)
		if err != nil {
			return dst, err
		}
		m = dynamicpb.NewMessage(md)
		c.msgs[key] = m
	}
	dst, c.scratch, err = appendProtoJSON(dst, c.scratch, m, rest)
	return dst, err
}

// appendProtoJSON decodes payload into m and appends it as compact JSON
// text; scratch is the caller's reused buffer (returned grown). Shared by
// registry and local schemas, so both show a message the same way.
func appendProtoJSON(dst, scratch []byte, m *dynamicpb.Message, payload []byte) ([]byte, []byte, error) {
	if err := proto.Unmarshal(payload, m); err != nil {
		return dst, scratch, fmt.Errorf("%s: %w", m.Descriptor().FullName(), err)
	}
	scratch, err := protoJSON.MarshalAppend(scratch[:0], m)
	if err != nil {
		return dst, scratch, fmt.Errorf("%s: %w", m.Descriptor().FullName(), err)
	}
	// protojson varies its whitespace on purpose; compact it so output is
	// stable and one record is one line.
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, scratch); err != nil {
		return dst, scratch, err
	}
	return buf.Bytes(), scratch, nil
}

// encode writes JSON text (the proto3 JSON mapping) as the one top-level
// message of the file the text fits (every field known, every value of its
// field's type): a .proto often declares helper messages before the one a
// topic carries. Text that fits several (an empty object fits any) is an
// error asking for MESSAGE: writing the wrong one would go unnoticed until
// a consumer read it. The index path in the header names the message.
func (c *protoCodec) encode(dst []byte, text []byte) ([]byte, error) {
	return c.encodeAs(dst, text, "")
}

// encodeAs is encode with the message named (MESSAGE name): a full name, or
// a name unique in the schema's messages, nested ones included.
func (c *protoCodec) encodeAs(dst []byte, text []byte, name string) ([]byte, error) {
	if name != "" {
		md, err := c.messageNamed(name)
		if err != nil {
			return nil, err
		}
		m := dynamicpb.NewMessage(md)
		if err := protojson.Unmarshal(text, m); err != nil {
			return nil, fmt.Errorf("does not fit %s: %s", md.FullName(), protoErrText(err))
		}
		return c.appendMessage(dst, md, m)
	}
	msgs := c.file.Messages()
	var fits []*dynamicpb.Message
	var firstErr error
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		m := dynamicpb.NewMessage(md)
		if err := protojson.Unmarshal(text, m); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("does not fit %s: %s", md.FullName(), protoErrText(err))
			}
			continue
		}
		fits = append(fits, m)
	}
	switch {
	case len(fits) == 1:
		return c.appendMessage(dst, fits[0].Descriptor(), fits[0])
	case len(fits) > 1:
		names := make([]string, len(fits))
		for i, m := range fits {
			names[i] = string(m.Descriptor().FullName())
		}
		return nil, fmt.Errorf("the text fits %d of its messages (%s): say which with MESSAGE and one of these names", len(fits), strings.Join(names, ", "))
	case msgs.Len() > 1:
		return nil, fmt.Errorf("%w (nor any other of its %d top-level messages; to write a nested message, name it with MESSAGE)", firstErr, msgs.Len())
	}
	return nil, firstErr
}

// appendMessage appends m (of descriptor md) after its message-index path:
// the bytes after the magic byte and id.
func (c *protoCodec) appendMessage(dst []byte, md protoreflect.MessageDescriptor, m *dynamicpb.Message) ([]byte, error) {
	var h sr.ConfluentHeader
	header, _ := h.AppendEncode(nil, 0, indexOf(md))
	dst = append(dst, header[5:]...)
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", md.FullName(), err)
	}
	return b, nil
}

// protoErrText is a protobuf error without its "proto:" prefix, which
// protobuf-go writes with a space or, on purpose to discourage matching, a
// non-breaking space.
func protoErrText(err error) string {
	t := err.Error()
	if rest, ok := strings.CutPrefix(t, "proto:"); ok {
		return strings.TrimLeft(rest, " \u00a0")
	}
	return t
}

// indexOf is md's message-index path, counted as message does: the
// messages declared at each level, not map entries.
func indexOf(md protoreflect.MessageDescriptor) []int {
	var path []int
	for {
		var siblings protoreflect.MessageDescriptors
		parent, nested := md.Parent().(protoreflect.MessageDescriptor)
		if nested {
			siblings = parent.Messages()
		} else {
			siblings = md.ParentFile().Messages()
		}
		i := 0
		for j := 0; j < siblings.Len() && siblings.Get(j).FullName() != md.FullName(); j++ {
			if !siblings.Get(j).IsMapEntry() {
				i++
			}
		}
		path = append([]int{i}, path...)
		if !nested {
			return path
		}
		md = parent
	}
}

// messageNamed finds the message a MESSAGE clause names: its full name, or
// the one message whose full name ends in "."+name.
//
// A leading dot (".pkg.Msg", as descriptors and protoc print type names)
// makes the name a full name.
func (c *protoCodec) messageNamed(name string) (protoreflect.MessageDescriptor, error) {
	full, exact := strings.CutPrefix(name, ".")
	var all []protoreflect.MessageDescriptor
	var walk func(protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			if m := ms.Get(i); !m.IsMapEntry() {
				all = append(all, m)
				walk(m.Messages())
			}
		}
	}
	walk(c.file.Messages())
	var matches []protoreflect.MessageDescriptor
	for _, m := range all {
		fn := string(m.FullName())
		if fn == full {
			return m, nil
		}
		if !exact && strings.HasSuffix(fn, "."+name) {
			matches = append(matches, m)
		}
	}
	names := func(ms []protoreflect.MessageDescriptor) string {
		out := make([]string, 0, len(ms))
		for _, m := range ms {
			out = append(out, string(m.FullName()))
		}
		if len(out) > 12 {
			out = append(out[:12], fmt.Sprintf("and %d more", len(out)-12))
		}
		return strings.Join(out, ", ")
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, fmt.Errorf("MESSAGE %s: the schema has no such message (messages of files it imports are written with their own subject's schema); its messages are %s", name, names(all))
	}
	return nil, fmt.Errorf("MESSAGE %s matches %s: write the full name", name, names(matches))
}
