package protofeatures_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	_ "github.com/kql-dev/kql/schema/protofeatures"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// protocompile must take the feature files from the registry, where this
// package put them before protocompile's init ran; had it built its own
// (the init order changed, or protocompile stopped looking), start-up pays
// for it again and this fails.
func TestProtocompileUsesTheRegisteredFeatureFiles(t *testing.T) {
	r := protocompile.WithStandardImports(&protocompile.SourceResolver{})
	for _, path := range []string{"google/protobuf/cpp_features.proto", "google/protobuf/java_features.proto"} {
		reg, err := protoregistry.GlobalFiles.FindFileByPath(path)
		if err != nil {
			t.Fatalf("%s is not registered: %v", path, err)
		}
		res, err := r.FindFileByPath(path)
		if err != nil {
			t.Fatalf("protocompile's standard imports have no %s: %v", path, err)
		}
		if res.Desc != reg {
			t.Errorf("protocompile built its own %s instead of taking the registered one", path)
		}
	}
}

// A schema that imports the C++ features and sets one compiles, and the
// option is read through the lazily registered descriptor.
func TestASchemaUsingCppFeaturesCompiles(t *testing.T) {
	const src = `edition = "2023";
package demo;
import "google/protobuf/cpp_features.proto";
option features.(pb.cpp).legacy_closed_enum = true;
enum Color {
  option features.enum_type = CLOSED;
  COLOR_UNSPECIFIED = 0;
  RED = 1;
}
message Paint { Color color = 1; }
`
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"demo.proto": src}),
	})}
	files, err := c.Compile(context.Background(), "demo.proto")
	if err != nil {
		t.Fatal(err)
	}
	e := files[0].Enums().ByName("Color")
	if e == nil || !e.IsClosed() {
		t.Fatalf("Color: want a closed enum, got %v", e)
	}
	if got := prototext.Format(files[0].Options()); !strings.Contains(got, "legacy_closed_enum") {
		t.Errorf("demo.proto's options: want pb.cpp's legacy_closed_enum set, got %s", got)
	}
}

// The embedded descriptors are what protocompile itself builds: gen.go,
// which does not link this package, writes them again (after a protocompile
// upgrade, run go generate).
func TestEmbeddedDescriptorsAreProtocompiles(t *testing.T) {
	dir := t.TempDir()
	out, err := exec.Command("go", "run", "gen.go", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("go run gen.go: %v\n%s", err, out)
	}
	for _, name := range []string{"cpp_features.binpb", "java_features.binpb"} {
		embedded, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, embedded) {
			t.Errorf("%s differs from what protocompile builds: run go generate ./schema/protofeatures", name)
		}
	}
}
