package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kql-dev/kql/exec"
	"github.com/kql-dev/kql/schema"
)

// Schemas from local files: --proto-path DIR and --proto-descriptor-set
// FILE (or kql.proto.path / kql.proto.descriptor.set in the properties
// file or profile), and the topic mappings kql.schema.TOPIC.key|value =
// protobuf:MESSAGE | avro:FILE.avsc there, or \set schema.TOPIC.value ...
// in the shell.

const (
	localSchemaPrefix   = "kql.schema."
	protoPathKey        = "kql.proto.path"
	protoDescriptorKey  = "kql.proto.descriptor.set"
	localSchemaSetUsage = `\set schema.TOPIC.key|value protobuf:MESSAGE | avro:FILE.avsc | off`
)

// localProps are a properties file's local-schema settings.
type localProps struct {
	schemas        map[string]schema.LocalSpec // by exec.MappingKey
	protoPaths     []string
	descriptorSets []string
}

// localSchemaKey reports whether kql acts on a properties key of local
// schemas.
func localSchemaKey(k string) bool {
	return k == protoPathKey || k == protoDescriptorKey || strings.HasPrefix(k, localSchemaPrefix)
}

// splitMappingKey splits "orders.v1.value" into the topic "orders.v1" and
// the side "value": topics may hold dots, the side is the last part.
func splitMappingKey(k string) (topic, side string, err error) {
	i := strings.LastIndexByte(k, '.')
	if i <= 0 {
		return "", "", fmt.Errorf("want TOPIC.key or TOPIC.value")
	}
	topic, side = k[:i], strings.ToLower(k[i+1:])
	if side != "key" && side != "value" {
		return "", "", fmt.Errorf("%q ends in %q: want TOPIC.key or TOPIC.value", k, k[i+1:])
	}
	return topic, side, nil
}

// readLocalProps reads the local-schema keys of a properties file; paths
// in it are relative to the file, as its other paths.
func readLocalProps(props []property, rel func(string) string, bad func(key, format string, a ...any) error) (localProps, error) {
	var lp localProps
	list := func(v string) []string {
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, rel(p))
			}
		}
		return out
	}
	for _, p := range props {
		switch {
		case p.key == protoPathKey:
			lp.protoPaths = list(p.value)
		case p.key == protoDescriptorKey:
			lp.descriptorSets = list(p.value)
		case strings.HasPrefix(p.key, localSchemaPrefix):
			topic, side, err := splitMappingKey(strings.TrimPrefix(p.key, localSchemaPrefix))
			if err != nil {
				return lp, bad(p.key, "%v", err)
			}
			spec, err := schema.ParseLocalSpec(p.value)
			if err != nil {
				return lp, bad(p.key, "%v", err)
			}
			if spec.Format == schema.FormatAvro {
				spec.Name = rel(spec.Name)
			}
			if lp.schemas == nil {
				lp.schemas = map[string]schema.LocalSpec{}
			}
			lp.schemas[exec.MappingKey(topic, side)] = spec
		}
	}
	return lp, nil
}

// localSchemas builds the session's local schemas from the properties file
// and the flags; flags replace the file's lists, as flags override the
// file elsewhere.
func localSchemasFrom(o *options, cc *commandConfig) *exec.LocalSchemas {
	var lp localProps
	ls := &exec.LocalSchemas{Session: map[string]schema.LocalSpec{}}
	if cc != nil {
		lp = cc.local
		ls.File, ls.FileName = lp.schemas, cc.path
	}
	cfg := schema.LocalConfig{ProtoPaths: lp.protoPaths, DescriptorSets: lp.descriptorSets}
	if len(o.protoPaths) > 0 {
		cfg.ProtoPaths = o.protoPaths
	}
	if len(o.descriptorSets) > 0 {
		cfg.DescriptorSets = o.descriptorSets
	}
	ls.Loader = schema.NewLocal(cfg)
	return ls
}

// setLocalSchema is \set schema.TOPIC.side SPEC (or off).
func (a *app) setLocalSchema(name, value string) error {
	topic, side, err := splitMappingKey(strings.TrimPrefix(name, "schema."))
	if err != nil {
		return fmt.Errorf(`\set %s: %v (%s)`, name, err, localSchemaSetUsage)
	}
	if a.local == nil {
		a.local = localSchemasFrom(a.opts, nil)
	}
	key := exec.MappingKey(topic, side)
	value = strings.TrimSpace(value)
	switch strings.ToLower(value) {
	case "":
		return fmt.Errorf(`\set %s: give a schema (%s)`, name, localSchemaSetUsage)
	case "off", "none":
		delete(a.local.Session, key)
		if f, ok := a.local.File[key]; ok {
			fmt.Fprintf(a.stderr, "The %s of %s is decoded with %s again (from %s).\n", side, topic, f, a.local.FileName)
		} else {
			fmt.Fprintf(a.stderr, "The %s of %s is no longer decoded with a local schema.\n", side, topic)
		}
		return nil
	}
	spec, err := schema.ParseLocalSpec(value)
	if err != nil {
		return fmt.Errorf(`\set %s: %v`, name, err)
	}
	// Loaded now, so a typo is said here and not by the next CONSUME.
	c, err := a.local.Loader.Codec(spec)
	if err != nil {
		return fmt.Errorf(`\set %s: %v`, name, err)
	}
	a.local.Session[key] = spec
	fmt.Fprintf(a.stderr, "The %s of %s is decoded and encoded with %s.\n", side, topic, c)
	return nil
}

// showLocalSchemas lists the mappings for a bare \set.
func (a *app) showLocalSchemas() {
	lines := a.local.Mappings()
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(a.stderr, l)
	}
}
