// Package protofeatures registers protoc's C++ and Java feature files
// (google/protobuf/cpp_features.proto and java_features.proto) in the
// global file registry, lazily, before protocompile's package init runs.
//
// Why: protocompile's init includes these two files among the standard
// imports, and unless a program links generated Go code for them (no Go
// package provides it) it builds them there with protodesc.NewFile, which
// first unmarshals every descriptor type's reflection tables: about 1 ms of
// CPU at every start of kql, a tenth of a one-shot SHOW TOPICS, for files
// that only a Protobuf schema importing them ever reads. Registered here
// the way generated code registers its files (protoimpl.DescBuilder), they
// cost nothing until used, and protocompile takes them from the registry.
//
// This package must be initialised before protocompile; Go initialises,
// of the packages whose imports are all initialised, the first by import
// path, and protocompile imports google.golang.org/protobuf/types/pluginpb
// and types/known/..., which sort after this package and depend on what it
// imports. The package's test checks that protocompile uses these
// descriptors, and that they are byte for byte what protocompile builds
// (go generate rewrites them).
package protofeatures

//go:generate go run gen.go

import (
	_ "embed"

	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/runtime/protoimpl"
	_ "google.golang.org/protobuf/types/descriptorpb" // the files import descriptor.proto
)

var (
	//go:embed cpp_features.binpb
	cppFeatures []byte
	//go:embed java_features.binpb
	javaFeatures []byte
)

func init() {
	for _, raw := range [][]byte{cppFeatures, javaFeatures} {
		protoimpl.DescBuilder{RawDescriptor: raw, FileRegistry: protoregistry.GlobalFiles}.Build()
	}
}
