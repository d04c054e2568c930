package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/rogpeppe/go-internal/testscript"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/kql-dev/kql/kafka"
)

// cmdProtoset is `protoset OUT DIR FILE.proto`: it writes what protoc
// --descriptor_set_out=OUT --include_imports -I DIR FILE.proto would (there
// is no protoc binary on the test machines; protocompile is protoc's
// compiler in Go).
func cmdProtoset(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: protoset OUT DIR FILE.proto")
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{ts.MkAbs(args[1])}})}
	files, err := c.Compile(context.Background(), args[2])
	ts.Check(err)
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		for i := 0; i < fd.Imports().Len(); i++ {
			add(fd.Imports().Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	add(files[0])
	b, err := proto.Marshal(&set)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
}

// TestREPLSetLocalSchema: \set schema.TOPIC.value maps a topic for the
// session, over the properties file's mapping; off puts the file's back;
// a message that does not exist is said at \set, not by the next CONSUME.
func TestREPLSetLocalSchema(t *testing.T) {
	_, boot := ptyCluster(t)
	dir := t.TempDir()
	writeFile := func(name, text string) string {
		p := dir + "/" + name
		if err := os.MkdirAll(p[:strings.LastIndexByte(p, '/')], 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	writeFile("protos/shop.proto", "syntax = \"proto3\";\npackage shop;\nmessage Order { int32 id = 1; string note = 2; }\nmessage Refund { string id = 1; }\n")
	writeFile("order.avsc", `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"}]}`)
	props := writeFile("dev.properties", "kql.proto.path=protos\nkql.schema.sets.value=avro:order.avsc\n")
	h := newHarness(t)
	h.tty, h.stdin = true, strings.Join([]string{
		`CREATE TOPIC sets PARTITIONS 3;`,
		`PRODUCE INTO sets VALUE '{"id": 5}' PARTITION 0;`, // the file's Avro mapping encodes it
		`SELECT value.id FROM sets;`,
		`\set schema.sets.value protobuf:shop.Ordr`,
		`\set schema.sets.value protobuf:shop.Order`,
		`\set`,
		`PRODUCE INTO sets VALUE '{"id": 6, "note": "pb"}' PARTITION 1;`,
		`SELECT value.note FROM sets PARTITION 1;`,
		`\set schema.sets.value off`,
		`SELECT value.id FROM sets PARTITION 0;`,
		`\set schema.sets.colour avro:order.avsc`,
		``}, "\n")
	r := h.runWithDial([]string{"--no-history", "--color", "never", "--format", "csv", "--bootstrap", boot, "--command-config", props}, func(cfg kafka.Config) (*connection, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return dialKafka(ctx, cfg)
	})
	if r.code != 0 {
		t.Fatalf("the shell failed:\n%s", r)
	}
	wantAll(t, "stderr", r.stderr,
		`\set schema.sets.value: protobuf:shop.Ordr: no such message in the loaded .proto files; did you mean shop.Order?`,
		"The value of sets is decoded and encoded with PROTOBUF shop.Order (shop.proto).",
		`schema.sets.value protobuf:shop.Order (\set)`,
		"The value of sets is decoded with avro:"+dir+"/order.avsc again (from "+props+").",
		`\set schema.sets.colour: "sets.colour" ends in "colour": want TOPIC.key or TOPIC.value`)
	wantAll(t, "stdout", r.stdout, "value.id\n5\n", "value.note\npb\n")
	if strings.Count(r.stdout, "value.id\n5\n") != 2 {
		t.Errorf("the file's mapping did not come back after \\set ... off:\n%s", r.stdout)
	}
}
