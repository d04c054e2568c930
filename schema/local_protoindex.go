package schema

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// A --proto-path is a repository's tree of .proto files, and one of them
// that does not compile (work in progress, a file for another tool) must
// not stop the topics whose messages are elsewhere. So the files are only
// parsed up front, for the names of their messages, and a mapping compiles
// just the file that defines its message (and what that file imports).

// protoIndex is every loaded message's full name and where it is defined.
type protoIndex struct {
	names  []string                                  // nested ones too, map entries not
	set    map[string]protoreflect.MessageDescriptor // from descriptor sets
	file   map[string]string                         // from --proto-path: the .proto's import name
	broken []string                                  // .proto files that do not parse: "bad.proto:3:14: syntax error: ..."
}

func (l *Local) protoCodec(spec LocalSpec) (*LocalCodec, error) {
	l.protoOnce.Do(func() { l.index, l.protoErr = loadProtoIndex(l.cfg) })
	if l.protoErr != nil {
		return nil, l.protoErr
	}
	if len(l.cfg.ProtoPaths) == 0 && len(l.cfg.DescriptorSets) == 0 {
		return nil, fmt.Errorf("protobuf:%s: no Protobuf schemas are loaded: start kql with --proto-path DIR (the .proto files) or --proto-descriptor-set FILE", spec.Name)
	}
	ix := l.index
	full, err := findMessage(ix.names, spec.Name)
	if err != nil {
		if n := len(ix.broken); n > 0 {
			files := "files"
			if n == 1 {
				files = "file"
			}
			err = fmt.Errorf("%w; %d .proto %s in --proto-path %s could not be read or parsed, and the message may be there: %s",
				err, n, files, strings.Join(l.cfg.ProtoPaths, ","), strings.Join(ix.broken, "; "))
		}
		return nil, err
	}
	md := ix.set[full]
	if md == nil {
		fd, err := l.compileProto(ix.file[full])
		if err != nil {
			return nil, fmt.Errorf("protobuf:%s: %w", spec.Name, err)
		}
		md = findIn(fd, protoreflect.FullName(full))
		if md == nil {
			return nil, fmt.Errorf("protobuf:%s: %s does not define %s once compiled", spec.Name, ix.file[full], full)
		}
	}
	return &LocalCodec{Spec: spec, From: md.ParentFile().Path(), c: &localProto{md: md}}, nil
}

// findIn finds a message of fd, nested ones too, by its full name.
func findIn(fd protoreflect.FileDescriptor, full protoreflect.FullName) protoreflect.MessageDescriptor {
	var walk func(protoreflect.MessageDescriptors) protoreflect.MessageDescriptor
	walk = func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			if m.FullName() == full {
				return m
			}
			if n := walk(m.Messages()); n != nil {
				return n
			}
		}
		return nil
	}
	return walk(fd.Messages())
}

// compileProto compiles one .proto (by its import name) and its imports,
// once per session.
func (l *Local) compileProto(name string) (protoreflect.FileDescriptor, error) {
	l.mu.Lock()
	fd := l.compiled[name]
	l.mu.Unlock()
	if fd != nil {
		return fd, nil
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: l.cfg.ProtoPaths}),
	}
	out, err := c.Compile(context.Background(), name)
	if err != nil {
		return nil, fmt.Errorf("%s does not compile (--proto-path %s): %w", name, strings.Join(l.cfg.ProtoPaths, ","), err)
	}
	l.mu.Lock()
	if l.compiled == nil {
		l.compiled = map[string]protoreflect.FileDescriptor{}
	}
	l.compiled[name] = out[0]
	l.mu.Unlock()
	return out[0], nil
}

// loadProtoIndex reads every descriptor set and parses (does not compile)
// every .proto under the proto paths, for their messages' names. A path or
// set that cannot be read is an error; a .proto that does not parse is
// noted in broken, and only a mapping whose message is not found says so.
func loadProtoIndex(cfg LocalConfig) (*protoIndex, error) {
	ix := &protoIndex{set: map[string]protoreflect.MessageDescriptor{}, file: map[string]string{}}
	for _, set := range cfg.DescriptorSets {
		files, err := readDescriptorSet(set)
		if err != nil {
			return nil, err
		}
		files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
			if _, err := protoregistry.GlobalFiles.FindFileByPath(fd.Path()); err == nil && strings.HasPrefix(fd.Path(), "google/protobuf/") {
				return true // a well-known type the set carries along
			}
			var walk func(protoreflect.MessageDescriptors)
			walk = func(ms protoreflect.MessageDescriptors) {
				for i := 0; i < ms.Len(); i++ {
					if m := ms.Get(i); !m.IsMapEntry() {
						if n := string(m.FullName()); ix.set[n] == nil {
							ix.set[n] = m
							ix.names = append(ix.names, n)
						}
						walk(m.Messages())
					}
				}
			}
			walk(fd.Messages())
			return true
		})
	}
	if len(cfg.ProtoPaths) == 0 {
		return ix, nil
	}
	files, unreadable, err := protoFiles(cfg.ProtoPaths)
	if err != nil {
		return nil, err
	}
	ix.broken = unreadable
	for _, f := range files {
		fdp, err := parseProto(f)
		if err != nil {
			ix.broken = append(ix.broken, err.Error())
			continue
		}
		var walk func(prefix string, ms []*descriptorpb.DescriptorProto)
		walk = func(prefix string, ms []*descriptorpb.DescriptorProto) {
			for _, m := range ms {
				if m.GetOptions().GetMapEntry() {
					continue
				}
				n := prefix + m.GetName()
				if _, dup := ix.file[n]; !dup && ix.set[n] == nil {
					ix.file[n] = f.name
					ix.names = append(ix.names, n)
				}
				walk(n+".", m.GetNestedType())
			}
		}
		prefix := ""
		if p := fdp.GetPackage(); p != "" {
			prefix = p + "."
		}
		walk(prefix, fdp.GetMessageType())
	}
	return ix, nil
}

// parseProto parses one .proto for its declarations, without resolving
// its imports.
func parseProto(f protoFile) (*descriptorpb.FileDescriptorProto, error) {
	r, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := reporter.NewHandler(nil)
	node, err := parser.Parse(f.name, r, h)
	if err != nil {
		return nil, err
	}
	res, err := parser.ResultFromAST(node, false, h)
	if err != nil {
		return nil, err
	}
	return res.FileDescriptorProto(), nil
}

// protoFile is a .proto under a proto path: its import name (relative to
// the path, slash-separated) and where it is on disk.
type protoFile struct {
	name, path string
}

// protoFiles lists the .proto files under the import paths by the names
// imports use; a name in two paths is the first's, as protoc's -I.
// Symbolic links are followed, to directories too (a path that is itself
// a link, a vendored tree linked in), as protoc reads through them; a
// directory linked into itself is walked once. An entry that cannot be
// read (a dangling link) is in unreadable, not an error: it may hold no
// message anyone asks for.
func protoFiles(paths []string) (files []protoFile, unreadable []string, err error) {
	seen := map[string]bool{}
	for _, dir := range paths {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("--proto-path: %w", err)
		}
		if !st.IsDir() {
			return nil, nil, fmt.Errorf("--proto-path %s: not a directory (give the directory imports are relative to, as protoc's -I)", dir)
		}
		visited := map[string]bool{}
		var walk func(disk, rel string) error
		walk = func(disk, rel string) error {
			real, err := filepath.EvalSymlinks(disk)
			if err != nil {
				return err
			}
			if visited[real] {
				return nil
			}
			visited[real] = true
			entries, err := os.ReadDir(disk)
			if err != nil {
				return err
			}
			for _, e := range entries {
				p, r := filepath.Join(disk, e.Name()), e.Name()
				if rel != "" {
					r = rel + "/" + e.Name()
				}
				st, err := os.Stat(p) // through a link
				if err != nil {
					unreadable = append(unreadable, fmt.Sprintf("%s: %v", r, err))
					continue
				}
				if st.IsDir() {
					if err := walk(p, r); err != nil {
						return err
					}
					continue
				}
				if strings.HasSuffix(e.Name(), ".proto") && !seen[r] {
					seen[r] = true
					files = append(files, protoFile{name: r, path: p})
				}
			}
			return nil
		}
		if err := walk(dir, ""); err != nil {
			return nil, nil, fmt.Errorf("--proto-path %s: %w", dir, err)
		}
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("--proto-path %s: no .proto files there", strings.Join(paths, ","))
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, unreadable, nil
}
