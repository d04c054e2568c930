package schema

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bufbuild/protocompile"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The .proto files (acme/order.proto imports acme/common/money.proto) and
// .avsc files the local-schema tests of every package share.
var (
	protoDir = filepath.Join("..", "testdata", "schemas", "proto")
	avroDir  = filepath.Join("..", "testdata", "schemas", "avro")
)

const orderJSON = `{"id":7,"customer":"ada","total":{"currency":"EUR","units":"12"},"lines":[{"sku":"A-1","quantity":2}],"placed":"2026-12-01T12:00:00Z"}`

func TestLocalProtobufWithImportRoundTrip(t *testing.T) {
	l := NewLocal(LocalConfig{ProtoPaths: []string{protoDir}})
	c, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
	require.NoError(t, err)
	require.Equal(t, "acme/order.proto", c.From)

	raw, err := c.Encode([]byte(orderJSON))
	require.NoError(t, err)
	require.NotEqual(t, byte(0), raw[0], "raw Protobuf: no wire-format header")

	out, id, header, err := c.Decode(nil, raw)
	require.NoError(t, err)
	require.False(t, header)
	require.Zero(t, id)
	requireSameJSON(t, []byte(orderJSON), out)

	// The same bytes behind a registry header (schema id 42, index [0]):
	// the local message decodes what follows it.
	framed := append([]byte{0, 0, 0, 0, 42, 0}, raw...)
	out, id, header, err = c.Decode(nil, framed)
	require.NoError(t, err)
	require.True(t, header)
	require.EqualValues(t, 42, id)
	requireSameJSON(t, []byte(orderJSON), out)

	// A nested message by its full name, and a short name that ends one.
	_, err = l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order.Line"})
	require.NoError(t, err)
	k, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "OrderKey"})
	require.NoError(t, err)
	require.Equal(t, "acme.OrderKey", string(k.c.(*localProto).md.FullName()))
}

func TestLocalProtobufErrors(t *testing.T) {
	l := NewLocal(LocalConfig{ProtoPaths: []string{protoDir}})
	_, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Ordr"})
	require.EqualError(t, err, "protobuf:acme.Ordr: no such message in the loaded .proto files; did you mean acme.Order?")

	c, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
	require.NoError(t, err)
	_, err = c.Encode([]byte(`{"id":"seven"}`))
	require.EqualError(t, err, `PROTOBUF acme.Order (acme/order.proto): does not fit acme.Order: (line 1:7): invalid value for int32 field id: "seven"`)
	_, err = c.Encode([]byte(`{"colour":"red"}`))
	require.ErrorContains(t, err, `unknown field "colour"`)
	_, _, _, err = c.Decode(nil, []byte{0x0a, 0x05, 'a'}) // field 1 as length-delimited, cut short
	require.ErrorContains(t, err, "PROTOBUF acme.Order (acme/order.proto): payload does not decode: acme.Order:")

	// A file that does not parse: its file:line:col.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.proto"), []byte("syntax = \"proto3\";\nmessage Bad {\n  int32 id = ;\n}\n"), 0o644))
	_, err = NewLocal(LocalConfig{ProtoPaths: []string{dir}}).Codec(LocalSpec{Format: FormatProtobuf, Name: "Bad"})
	require.ErrorContains(t, err, "bad.proto:3:14: syntax error")

	// An import no path holds.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.proto"), []byte("syntax = \"proto3\";\nimport \"nowhere/x.proto\";\nmessage Bad {}\n"), 0o644))
	_, err = NewLocal(LocalConfig{ProtoPaths: []string{dir}}).Codec(LocalSpec{Format: FormatProtobuf, Name: "Bad"})
	require.ErrorContains(t, err, "bad.proto:2:8")
	require.ErrorContains(t, err, "nowhere/x.proto")

	_, err = NewLocal(LocalConfig{}).Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
	require.ErrorContains(t, err, "no Protobuf schemas are loaded: start kql with --proto-path DIR")
}

// writeDescriptorSet compiles the test .proto files and writes what protoc
// --descriptor_set_out --include_imports would (no protoc binary here).
func writeDescriptorSet(t *testing.T, withImports bool) string {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{protoDir}})}
	files, err := c.Compile(context.Background(), "acme/order.proto")
	require.NoError(t, err)
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
			if withImports || imps.Get(i).Path() == "acme/common/money.proto" {
				add(imps.Get(i).FileDescriptor)
			}
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(files[0])
	b, err := proto.Marshal(&set)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "acme.pb")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestLocalDescriptorSet(t *testing.T) {
	for _, withImports := range []bool{true, false} {
		set := writeDescriptorSet(t, withImports)
		l := NewLocal(LocalConfig{DescriptorSets: []string{set}})
		c, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
		require.NoError(t, err, "with imports %v", withImports)
		raw, err := c.Encode([]byte(orderJSON))
		require.NoError(t, err)
		out, _, _, err := c.Decode(nil, raw)
		require.NoError(t, err)
		requireSameJSON(t, []byte(orderJSON), out)
	}
	bad := filepath.Join(t.TempDir(), "x.pb")
	require.NoError(t, os.WriteFile(bad, []byte("not a descriptor set"), 0o644))
	_, err := NewLocal(LocalConfig{DescriptorSets: []string{bad}}).Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
	require.ErrorContains(t, err, "not a FileDescriptorSet")
}

func TestLocalAvroRoundTrip(t *testing.T) {
	l := NewLocal(LocalConfig{})
	path := filepath.Join(avroDir, "order.avsc")
	c, err := l.Codec(LocalSpec{Format: FormatAvro, Name: path})
	require.NoError(t, err)
	text := `{"id":7,"customer":"ada","note":null,"total":{"currency":"EUR","units":12}}`
	raw, err := c.Encode([]byte(text))
	require.NoError(t, err)
	out, _, header, err := c.Decode(nil, raw)
	require.NoError(t, err)
	require.False(t, header)
	requireSameJSON(t, []byte(text), out)

	// Behind a registry header the raw read fails (bytes left over), and
	// the bytes after the header decode.
	out, id, header, err := c.Decode(nil, append([]byte{0, 0, 0, 0, 9}, raw...))
	require.NoError(t, err)
	require.True(t, header)
	require.EqualValues(t, 9, id)
	requireSameJSON(t, []byte(text), out)

	_, err = c.Encode([]byte(`{"id":7,"customer":"ada","total":{"currency":"EUR"}}`))
	require.ErrorContains(t, err, "total.units")

	// A string key schema takes bare text, as reading shows it.
	k, err := l.Codec(LocalSpec{Format: FormatAvro, Name: filepath.Join(avroDir, "key.avsc")})
	require.NoError(t, err)
	kb, err := k.Encode([]byte("cust-7"))
	require.NoError(t, err)
	out, _, _, err = k.Decode(nil, kb)
	require.NoError(t, err)
	require.Equal(t, `"cust-7"`, string(out))
}

func TestLocalAvroFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.avsc")
	require.NoError(t, os.WriteFile(bad, []byte("{\n  \"type\": \"record\",\n  \"name\": \"X\"\n  \"fields\": []\n}\n"), 0o644))
	_, err := NewLocal(LocalConfig{}).Codec(LocalSpec{Format: FormatAvro, Name: bad})
	require.EqualError(t, err, bad+`:4:3: not JSON: invalid character '"' after object key:value pair`)

	require.NoError(t, os.WriteFile(bad, []byte(`{"type": "recrd", "name": "X"}`), 0o644))
	_, err = NewLocal(LocalConfig{}).Codec(LocalSpec{Format: FormatAvro, Name: bad})
	require.ErrorContains(t, err, bad+": not an Avro schema:")

	none := filepath.Join(dir, "none.avsc")
	_, err = NewLocal(LocalConfig{}).Codec(LocalSpec{Format: FormatAvro, Name: none})
	require.EqualError(t, err, "cannot read the Avro schema file "+none+": no such file or directory", "the path once")
}

func TestParseLocalSpec(t *testing.T) {
	s, err := ParseLocalSpec("PROTOBUF:acme.Order")
	require.NoError(t, err)
	require.Equal(t, LocalSpec{Format: FormatProtobuf, Name: "acme.Order"}, s)
	s, err = ParseLocalSpec("avro: key.avsc")
	require.NoError(t, err)
	require.Equal(t, LocalSpec{Format: FormatAvro, Name: "key.avsc"}, s)
	_, err = ParseLocalSpec("acme.Order")
	require.EqualError(t, err, `"acme.Order": want protobuf:MESSAGE (e.g. protobuf:acme.Order) or avro:FILE.avsc`)
	_, err = ParseLocalSpec("json:x")
	require.EqualError(t, err, `"json:x": unknown schema format "json" (want protobuf or avro)`)
}

// TestLocalProtobufHeaderMessageIndex: a headered payload's message index
// picks the message in its file; one naming another message than the
// mapping's (a nested one, the file's second) is an error, never that
// message's bytes read as the mapped one (which Protobuf does without
// complaint: OrderKey{id: 1} reads as Order{id: 1}).
func TestLocalProtobufHeaderMessageIndex(t *testing.T) {
	l := NewLocal(LocalConfig{ProtoPaths: []string{protoDir}})
	order, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
	require.NoError(t, err)
	line, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order.Line"})
	require.NoError(t, err)
	key, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.OrderKey"})
	require.NoError(t, err)

	header := []byte{0, 0, 0, 0, 42}
	lineRaw, err := line.Encode([]byte(`{"sku":"A-1","quantity":2}`))
	require.NoError(t, err)
	lineFramed := append(append(header[:5:5], 4, 0, 0), lineRaw...) // index [0 0]: Order.Line
	keyRaw, err := key.Encode([]byte(`{"id":1}`))
	require.NoError(t, err)
	keyFramed := append(append(header[:5:5], 2, 2), keyRaw...) // index [1]: OrderKey

	out, id, hdr, err := line.Decode(nil, lineFramed)
	require.NoError(t, err)
	require.True(t, hdr)
	require.EqualValues(t, 42, id)
	require.JSONEq(t, `{"sku":"A-1","quantity":2}`, string(out))
	out, _, _, err = key.Decode(nil, keyFramed)
	require.NoError(t, err)
	require.JSONEq(t, `{"id":1}`, string(out))

	_, _, _, err = order.Decode(nil, lineFramed)
	require.EqualError(t, err, "PROTOBUF acme.Order (acme/order.proto): wire-format header of schema id 42: its message index [0 0] names acme.Order.Line in acme/order.proto, not acme.Order: map the topic to acme.Order.Line (or decode it with the registry)")
	_, _, _, err = order.Decode(nil, keyFramed)
	require.ErrorContains(t, err, "its message index [1] names acme.OrderKey in acme/order.proto, not acme.Order")

	// An index the local file does not hold: the registered file is not
	// this one, and the mapping decides.
	out, _, _, err = key.Decode(nil, append(append(header[:5:5], 2, 8), keyRaw...)) // index [4]
	require.NoError(t, err)
	require.JSONEq(t, `{"id":1}`, string(out))
}

// ambiguousAvsc is a schema under which a headered payload can also read
// whole as raw Avro: the header's zero byte and the three zeros of its
// schema id 22 are a, b, c and d, and the id's last byte (22, zigzag 11) is
// the length of e, which then takes the eleven bytes after the header.
const ambiguousAvsc = `{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"int"},{"name":"c","type":"int"},{"name":"d","type":"int"},{"name":"e","type":"string"}]}`

// ambiguousAvroPayloads are, under ambiguousAvsc, a headered payload that
// reads one way only (after its header) and one that reads both ways.
var ambiguousAvroPayloads = [][]byte{
	{0, 0, 0, 0, 22, 2, 4, 6, 8, 4, 'h', 'i'},
	{0, 0, 0, 0, 22, 2, 4, 6, 8, 12, 'h', 'e', 'l', 'l', 'o', '!'},
}

// TestLocalAvroAmbiguousHeader: a payload that decodes whole both as raw
// Avro and after a wire-format header is reported ambiguous, and the
// caller picks the reading; one that decodes one way only is that way.
func TestLocalAvroAmbiguousHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.avsc")
	require.NoError(t, os.WriteFile(path, []byte(ambiguousAvsc), 0o644))
	c, err := NewLocal(LocalConfig{}).Codec(LocalSpec{Format: FormatAvro, Name: path})
	require.NoError(t, err)

	out, rd, err := c.DecodeAs(nil, ambiguousAvroPayloads[0], false)
	require.NoError(t, err)
	require.Equal(t, LocalRead{ID: 22, Header: true}, rd)
	require.Equal(t, `{"a":1,"b":2,"c":3,"d":4,"e":"hi"}`, string(out))

	out, rd, err = c.DecodeAs([]byte("x"), ambiguousAvroPayloads[1], false)
	require.NoError(t, err)
	require.Equal(t, LocalRead{ID: 22, Ambiguous: true}, rd)
	require.Equal(t, `x{"a":0,"b":0,"c":0,"d":0,"e":"\u0002\u0004\u0006\u0008\u000chello!"}`, string(out))
	out, rd, err = c.DecodeAs([]byte("x"), ambiguousAvroPayloads[1], true)
	require.NoError(t, err)
	require.Equal(t, LocalRead{ID: 22, Header: true, Ambiguous: true}, rd)
	require.Equal(t, `x{"a":1,"b":2,"c":3,"d":4,"e":"hello!"}`, string(out))

	// A raw payload starting with a zero that reads one way only: raw.
	out, rd, err = c.DecodeAs(nil, []byte{0, 2, 4, 6, 2, 'z'}, true)
	require.NoError(t, err)
	require.Equal(t, LocalRead{}, rd)
	require.Equal(t, `{"a":0,"b":1,"c":2,"d":3,"e":"z"}`, string(out))

	_, _, err = c.DecodeAs(nil, []byte{0, 0, 0, 0, 22, 2}, false)
	require.ErrorContains(t, err, "payload does not decode, neither as it is (")
	require.ErrorContains(t, err, ") nor after a wire-format header of schema id 22 (")
}

// TestLocalProtobufBrokenFileElsewhere: a .proto that does not parse, or
// does not compile, fails only the mappings whose messages need it; the
// other topics of the --proto-path still decode.
func TestLocalProtobufBrokenFileElsewhere(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("good/ok.proto", "syntax = \"proto3\";\npackage good;\nmessage Ok { int32 id = 1; }\n")
	write("wip/bad.proto", "syntax = \"proto3\";\npackage wip;\nmessage Bad {\n  int32 id = ;\n}\n")
	write("wip/unlinked.proto", "syntax = \"proto3\";\npackage wip;\nmessage Unlinked { Missing m = 1; }\n")
	write("uses/user.proto", "syntax = \"proto3\";\npackage uses;\nimport \"wip/bad.proto\";\nmessage User { wip.Bad b = 1; }\n")
	l := NewLocal(LocalConfig{ProtoPaths: []string{dir}})

	c, err := l.Codec(LocalSpec{Format: FormatProtobuf, Name: "good.Ok"})
	require.NoError(t, err)
	raw, err := c.Encode([]byte(`{"id":3}`))
	require.NoError(t, err)
	out, _, _, err := c.Decode(nil, raw)
	require.NoError(t, err)
	require.Equal(t, `{"id":3}`, string(out))

	_, err = l.Codec(LocalSpec{Format: FormatProtobuf, Name: "wip.Bad"})
	require.ErrorContains(t, err, "protobuf:wip.Bad: no such message in the loaded .proto files")
	require.ErrorContains(t, err, "1 .proto file in --proto-path "+dir+" could not be read or parsed, and the message may be there: wip/bad.proto:4:14: syntax error")
	_, err = l.Codec(LocalSpec{Format: FormatProtobuf, Name: "wip.Unlinked"})
	require.ErrorContains(t, err, "protobuf:wip.Unlinked: wip/unlinked.proto does not compile")
	require.ErrorContains(t, err, "wip/unlinked.proto:3:20")
	_, err = l.Codec(LocalSpec{Format: FormatProtobuf, Name: "uses.User"})
	require.ErrorContains(t, err, "protobuf:uses.User: uses/user.proto does not compile")
	require.ErrorContains(t, err, "wip/bad.proto:4:14: syntax error")
}

// TestLocalProtobufSymlinks: a --proto-path that is a symbolic link, and a
// directory linked into it, are read through the links as protoc does,
// imports named by the linked path.
func TestLocalProtobufSymlinks(t *testing.T) {
	root := t.TempDir()
	abs, err := filepath.Abs(protoDir)
	require.NoError(t, err)
	link := filepath.Join(root, "protos")
	require.NoError(t, os.Symlink(abs, link))
	c, err := NewLocal(LocalConfig{ProtoPaths: []string{link}}).Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
	require.NoError(t, err)
	require.Equal(t, "acme/order.proto", c.From)

	// acme/ linked into another tree, and that tree linked into itself.
	tree := filepath.Join(root, "tree")
	require.NoError(t, os.MkdirAll(tree, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(abs, "acme"), filepath.Join(tree, "acme")))
	require.NoError(t, os.Symlink(tree, filepath.Join(tree, "loop")))
	c, err = NewLocal(LocalConfig{ProtoPaths: []string{tree}}).Codec(LocalSpec{Format: FormatProtobuf, Name: "acme.Order"})
	require.NoError(t, err)
	raw, err := c.Encode([]byte(orderJSON))
	require.NoError(t, err)
	out, _, _, err := c.Decode(nil, raw)
	require.NoError(t, err)
	requireSameJSON(t, []byte(orderJSON), out)
}

// A descriptor set written without --include_imports holds only the user's
// files; the built-in files they import are taken from kql, and so must be
// the built-in files those import in turn: protoc's C++ and Java feature
// files import descriptor.proto, api.proto imports type.proto and
// source_context.proto. Taking only the first level left the set
// unresolvable, with an error that named no file and said nothing to do.
func TestLocalDescriptorSetWithoutImportsOfBuiltinFiles(t *testing.T) {
	const src = `edition = "2023";
package feat;
import "google/protobuf/api.proto";
import "google/protobuf/cpp_features.proto";
import "google/protobuf/java_features.proto";
option features.(pb.cpp).legacy_closed_enum = true;
option features.(pb.java).utf8_validation = VERIFY;
message Svc { string name = 1; google.protobuf.Api api = 2; }
`
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"feat.proto": src}),
	})}
	files, err := c.Compile(context.Background(), "feat.proto")
	require.NoError(t, err)
	b, err := proto.Marshal(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(files[0])}})
	require.NoError(t, err)
	set := filepath.Join(t.TempDir(), "feat.pb")
	require.NoError(t, os.WriteFile(set, b, 0o644))

	codec, err := NewLocal(LocalConfig{DescriptorSets: []string{set}}).Codec(LocalSpec{Format: FormatProtobuf, Name: "feat.Svc"})
	require.NoError(t, err)
	const js = `{"name":"orders","api":{"name":"acme.Orders","version":"v1"}}`
	raw, err := codec.Encode([]byte(js))
	require.NoError(t, err)
	out, _, _, err := codec.Decode(nil, raw)
	require.NoError(t, err)
	require.Contains(t, string(out), `"name":"orders"`)
	require.Contains(t, string(out), `"name":"acme.Orders"`)
}
