//go:build ignore

// gen writes the descriptors of protoc's C++ and Java feature files as
// protocompile builds them (see protofeatures.go). Run by go generate; the
// package's test runs it again and compares.
package main

import (
	"fmt"
	"os"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
)

func main() {
	r := protocompile.WithStandardImports(&protocompile.SourceResolver{})
	for _, name := range []string{"cpp_features", "java_features"} {
		res, err := r.FindFileByPath("google/protobuf/" + name + ".proto")
		if err != nil || res.Desc == nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", name, err)
			os.Exit(1)
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(protodesc.ToFileDescriptorProto(res.Desc))
		if err != nil {
			fmt.Fprintf(os.Stderr, "gen: %s: %v\n", name, err)
			os.Exit(1)
		}
		out := name + ".binpb"
		if len(os.Args) > 1 {
			out = os.Args[1] + "/" + out
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "gen: %v\n", err)
			os.Exit(1)
		}
	}
}
