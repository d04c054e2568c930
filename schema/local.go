package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Local schemas are for topics whose payloads carry no registry header:
// Protobuf messages compiled from .proto files (--proto-path, imports
// resolved like protoc's -I) or read from a descriptor set (protoc
// --descriptor_set_out), and Avro schemas read from .avsc files. They decode
// and encode with the registry's codecs, so JSON output, paths and errors
// are the same.

// Formats of a LocalSpec.
const (
	FormatProtobuf = "protobuf"
	FormatAvro     = "avro"
)

// LocalSpec names a local schema: a Protobuf message by its full name, or
// an Avro schema by its .avsc file.
type LocalSpec struct {
	Format string // FormatProtobuf or FormatAvro
	Name   string // the message's full name, or the .avsc file's path
}

func (s LocalSpec) String() string { return s.Format + ":" + s.Name }

// ParseLocalSpec reads "protobuf:acme.Order" or "avro:key.avsc" (the
// format in any case; "proto" for protobuf).
func ParseLocalSpec(text string) (LocalSpec, error) {
	f, name, ok := strings.Cut(strings.TrimSpace(text), ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return LocalSpec{}, fmt.Errorf("%q: want protobuf:MESSAGE (e.g. protobuf:acme.Order) or avro:FILE.avsc", text)
	}
	spec, err := NewLocalSpec(f, name)
	if err != nil {
		return LocalSpec{}, fmt.Errorf("%q: %w", text, err)
	}
	return spec, nil
}

// NewLocalSpec checks a format (protobuf, proto or avro, in any case).
func NewLocalSpec(format, name string) (LocalSpec, error) {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "protobuf", "proto":
		return LocalSpec{Format: FormatProtobuf, Name: name}, nil
	case "avro":
		return LocalSpec{Format: FormatAvro, Name: name}, nil
	}
	return LocalSpec{}, fmt.Errorf("unknown schema format %q (want protobuf or avro)", format)
}

// LocalConfig is where local Protobuf schemas come from.
type LocalConfig struct {
	ProtoPaths     []string // directories of .proto files, as protoc's -I
	DescriptorSets []string // FileDescriptorSet files (protoc --descriptor_set_out)
}

// Local compiles local schemas, once each per session. Safe for
// concurrent use.
type Local struct {
	cfg LocalConfig

	protoOnce sync.Once
	index     *protoIndex // every message's name and where it is defined
	protoErr  error       // a --proto-path or descriptor set that cannot be read

	mu       sync.Mutex
	codecs   map[LocalSpec]*LocalCodec
	compiled map[string]protoreflect.FileDescriptor // .proto files compiled so far, by import name
}

// NewLocal returns a loader; it reads nothing until a schema is asked for.
func NewLocal(cfg LocalConfig) *Local {
	return &Local{cfg: cfg, codecs: map[LocalSpec]*LocalCodec{}}
}

// Config is what the loader was made with.
func (l *Local) Config() LocalConfig { return l.cfg }

// Codec returns spec's compiled schema. A message no file defines is an
// error listing near matches; a file that does not parse, one naming its
// file:line:col.
func (l *Local) Codec(spec LocalSpec) (*LocalCodec, error) {
	l.mu.Lock()
	c := l.codecs[spec]
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	var err error
	switch spec.Format {
	case FormatProtobuf:
		c, err = l.protoCodec(spec)
	case FormatAvro:
		c, err = avroFileCodec(spec)
	default:
		err = fmt.Errorf("unknown schema format %q", spec.Format)
	}
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.codecs[spec] = c
	l.mu.Unlock()
	return c, nil
}

// LocalCodec is one local schema, compiled.
type LocalCodec struct {
	Spec LocalSpec
	// From says where the schema was found, for EXPLAIN and messages:
	// "acme/order.proto in --proto-path protos", "key.avsc".
	From string
	c    codec
}

func (c *LocalCodec) String() string {
	return fmt.Sprintf("%s %s (%s)", typeName(c.c.kind()), c.Spec.Name, c.From)
}

// LocalRead says how Decode read a payload.
type LocalRead struct {
	ID     int32 // the wire-format header's schema id, when Header or Ambiguous
	Header bool  // a wire-format header was taken off before decoding
	// Ambiguous: an Avro payload that decodes whole both as it is and after
	// its first five bytes taken as a header (raw Avro often starts with a
	// zero: an int 0, an empty string, the null of an optional field).
	// Header says which reading came back; the caller should say so.
	Ambiguous bool
}

// Decode is DecodeAs preferring the raw reading of an ambiguous Avro
// payload, reporting the header's id and whether there was one.
func (c *LocalCodec) Decode(dst, b []byte) (out []byte, id int32, header bool, err error) {
	out, rd, err := c.DecodeAs(dst, b, false)
	return out, rd.ID, rd.Header, err
}

// DecodeAs appends the payload b decoded as JSON text to dst. b is the raw
// encoding (no wire-format header); a payload that does carry one (a zero
// byte and a schema id, as registry producers write) is decoded by the
// local schema after its header. For Protobuf a leading zero byte is always
// a header (no message starts with one: field number 0 is invalid), and
// its message index must not name another message of the file than the
// mapped one. For Avro, whose raw binary may well start with a zero, both
// readings are tried: the one that decodes whole wins; when both do, the
// payload is ambiguous and preferHeader picks the reading.
func (c *LocalCodec) DecodeAs(dst, b []byte, preferHeader bool) (out []byte, rd LocalRead, err error) {
	n := len(dst)
	if c.c.kind() == sr.TypeProtobuf {
		if hid, ok := HeaderID(b); ok {
			rd = LocalRead{ID: hid, Header: true}
			var h sr.ConfluentHeader
			index, rest, err := h.DecodeIndex(b[5:], 64)
			if err != nil {
				return dst[:n], rd, fmt.Errorf("%s: wire-format header of schema id %d: message index: %w", c, hid, err)
			}
			if err := c.c.(*localProto).checkIndex(index); err != nil {
				return dst[:n], rd, fmt.Errorf("%s: wire-format header of schema id %d: %w", c, hid, err)
			}
			out, err := c.c.appendJSON(dst, rest)
			if err != nil {
				return dst[:n], rd, fmt.Errorf("%s: payload does not decode: %w", c, err)
			}
			return out, rd, nil
		}
		out, err := c.c.appendJSON(dst, b)
		if err != nil {
			return dst[:n], rd, fmt.Errorf("%s: payload does not decode: %w", c, err)
		}
		return out, rd, nil
	}
	out, err = c.c.appendJSON(dst, b)
	hid, framed := HeaderID(b)
	if !framed {
		if err != nil {
			return dst[:n], rd, fmt.Errorf("%s: payload does not decode: %w", c, err)
		}
		return out, rd, nil
	}
	if err != nil {
		out, herr := c.c.appendJSON(dst[:n], b[5:])
		if herr != nil {
			return dst[:n], rd, fmt.Errorf("%s: payload does not decode, neither as it is (%v) nor after a wire-format header of schema id %d (%v)", c, err, hid, herr)
		}
		return out, LocalRead{ID: hid, Header: true}, nil
	}
	// The raw reading decoded; does the one after a header too? Decoded
	// into a buffer of its own, so out stays whole whichever is kept.
	headered, herr := c.c.appendJSON(nil, b[5:])
	if herr != nil {
		return out, rd, nil
	}
	rd = LocalRead{ID: hid, Ambiguous: true}
	if preferHeader {
		rd.Header = true
		return append(dst[:n], headered...), rd, nil
	}
	return out, rd, nil
}

// Encode writes JSON text in the schema's raw binary encoding (no
// wire-format header). Text that does not fit is an error naming the
// field; nothing comes back to write.
func (c *LocalCodec) Encode(text []byte) ([]byte, error) {
	b, err := c.c.encode(nil, text)
	if err != nil && c.c.kind() == sr.TypeAvro && !json.Valid(text) && !meantAsJSON(text) {
		// A string schema takes bare text, as the registry's Encode does.
		quoted, _ := json.Marshal(string(text))
		if qb, qerr := c.c.encode(nil, quoted); qerr == nil {
			return qb, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	return b, nil
}

// localProto is one Protobuf message of a local file: raw bytes, no
// message-index path (the mapping names the message).
type localProto struct {
	md      protoreflect.MessageDescriptor
	mu      sync.Mutex
	m       *dynamicpb.Message
	scratch []byte
}

func (c *localProto) kind() sr.SchemaType { return sr.TypeProtobuf }

// checkIndex refuses a headered payload whose message index names another
// message of the mapped message's file (a nested one, or the file's second
// message): Protobuf decodes the bytes of one message as another without an
// error (fields of the wrong wire type become unknown ones), so the record
// would show as {} or half-empty, silently. An index the local file does
// not hold (the registered file differs from the local one) leaves the
// mapping to decide.
func (c *localProto) checkIndex(index []int) error {
	ms := c.md.ParentFile().Messages()
	var named protoreflect.MessageDescriptor
	for _, i := range index {
		if i < 0 || i >= ms.Len() {
			return nil
		}
		named = ms.Get(i)
		ms = named.Messages()
	}
	if named == nil || named.FullName() == c.md.FullName() {
		return nil
	}
	return fmt.Errorf("its message index %v names %s in %s, not %s: map the topic to %s (or decode it with the registry)",
		index, named.FullName(), c.md.ParentFile().Path(), c.md.FullName(), named.FullName())
}

func (c *localProto) appendJSON(dst, payload []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = dynamicpb.NewMessage(c.md)
	}
	var err error
	dst, c.scratch, err = appendProtoJSON(dst, c.scratch, c.m, payload)
	return dst, err
}

func (c *localProto) encode(dst, text []byte) ([]byte, error) {
	m := dynamicpb.NewMessage(c.md)
	if err := protojson.Unmarshal(text, m); err != nil {
		return nil, fmt.Errorf("does not fit %s: %s", c.md.FullName(), protoErrText(err))
	}
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.md.FullName(), err)
	}
	return b, nil
}

// readDescriptorSet reads a FileDescriptorSet. Files it imports but does not
// hold (protoc without --include_imports) are taken from the well-known
// types compiled into kql.
func readDescriptorSet(path string) (*protoregistry.Files, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--proto-descriptor-set: %w", err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("--proto-descriptor-set %s: not a FileDescriptorSet (protoc --descriptor_set_out=FILE --include_imports writes one): %s", path, protoErrText(err))
	}
	have := map[string]bool{}
	for _, f := range set.File {
		have[f.GetName()] = true
	}
	// Index, not range: a built-in file added here has imports of its own
	// (cpp_features.proto and go_features.proto import descriptor.proto,
	// api.proto imports type.proto), which the set may not hold either.
	for i := 0; i < len(set.File); i++ {
		f := set.File[i]
		for _, dep := range f.GetDependency() {
			if have[dep] {
				continue
			}
			fd, err := protoregistry.GlobalFiles.FindFileByPath(dep)
			if err != nil {
				return nil, fmt.Errorf("--proto-descriptor-set %s: %s imports %s, which the set does not hold: write it with protoc --include_imports", path, f.GetName(), dep)
			}
			set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
			have[dep] = true
		}
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("--proto-descriptor-set %s: %s", path, protoErrText(err))
	}
	return files, nil
}

// findMessage finds a message's full name by its full name (a leading dot
// allowed), or by a name that ends exactly one message's full name.
func findMessage(names []string, name string) (string, error) {
	full, exact := strings.CutPrefix(name, ".")
	var matches []string
	for _, fn := range names {
		if fn == full {
			return fn, nil
		}
		if !exact && strings.HasSuffix(fn, "."+name) {
			matches = append(matches, fn)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		near := nearNames(names, full)
		if len(near) == 0 {
			return "", fmt.Errorf("protobuf:%s: no such message in the loaded .proto files (%d messages)", name, len(names))
		}
		return "", fmt.Errorf("protobuf:%s: no such message in the loaded .proto files; did you mean %s?", name, strings.Join(near, ", "))
	}
	return "", fmt.Errorf("protobuf:%s matches %s: write the full name", name, strings.Join(matches, ", "))
}

// nearNames are up to five message names close to name: the same last
// part in another case or package, or a few letters apart.
func nearNames(names []string, name string) []string {
	type cand struct {
		name string
		d    int
	}
	low := strings.ToLower(name)
	short := low[strings.LastIndexByte(low, '.')+1:]
	var cs []cand
	for _, fn := range names {
		lfn := strings.ToLower(fn)
		d := editDistance(low, lfn)
		if ls := lfn[strings.LastIndexByte(lfn, '.')+1:]; ls == short || strings.Contains(ls, short) || strings.Contains(short, ls) {
			d = min(d, 1)
		}
		if d <= max(2, len(low)/3) {
			cs = append(cs, cand{fn, d})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 5; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// avroFileCodec reads and compiles an .avsc file. A file that is not JSON
// gets its line:col.
func avroFileCodec(spec LocalSpec) (*LocalCodec, error) {
	b, err := os.ReadFile(spec.Name)
	if err != nil {
		// The path once: os's error repeats it after "open".
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read the Avro schema file %s: %w", spec.Name, err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(b, int(se.Offset))
			return nil, fmt.Errorf("%s:%d:%d: not JSON: %v", spec.Name, line, col, se)
		}
		return nil, fmt.Errorf("%s: not JSON: %v", spec.Name, err)
	}
	sch, err := avro.ParseBytesWithCache(b, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("%s: not an Avro schema: %v", spec.Name, err)
	}
	return &LocalCodec{Spec: spec, From: spec.Name, c: &avroCodec{schema: sch}}, nil
}

// lineCol is the 1-based line and column of the byte at off (a
// json.SyntaxError's Offset is just past the offending byte).
func lineCol(b []byte, off int) (line, col int) {
	off = max(0, min(off-1, len(b)))
	line, col = 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
