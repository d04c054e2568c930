package kafkatest_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kql-dev/kql/kafka/kafkatest"
)

// registryBackend is one schema registry the tests run on, with what it is
// known to do where registries differ. The "apicurio" backend is the test
// bed's real registry (kafkatest.SharedRegistry); "srfake" is franz-go's
// in-process fake, which kql's unit tests use. Confluent Schema Registry
// itself is not run here; where it differs, the comments say what it does
// (from its API reference).
type registryBackend struct {
	name string
	url  string

	// Global compatibility level of a fresh registry.
	// Confluent: BACKWARD.
	globalCompat sr.CompatibilityLevel
	// GET /config/{subject} for a subject without a level of its own
	// answers 200 with the global level. Confluent: 404, code 40408.
	subjectCompatFallsBack bool
	// Registering a schema that breaks the subject's compatibility level is
	// refused with 409. Confluent: yes.
	enforcesCompat bool
	// The Avro text read back is byte for byte what was registered.
	// Confluent: no, it returns the canonical compact form.
	textAsRegistered bool
	// A formatting variant of an existing schema registered in ANOTHER
	// subject gets the existing id. Confluent: yes.
	variantSharesID bool
	// GET /schemas/ids/{id}/subjects works. Confluent: yes.
	subjectsByID bool
	// Reads return the GUID of Confluent Platform 8. Confluent 7: no.
	guid bool
	// GET /schemas/ids/{id} still finds a schema after the only subject
	// that had it was hard-deleted. Confluent: no (40403).
	idOutlivesHardDelete bool
	// A JSON Schema with neither "$schema" nor "properties" at the top
	// (e.g. {"type":"string"}) is refused with 422, code 42201.
	// Confluent: accepted.
	jsonNeedsSchemaOrProperties bool
	// An invalid Avro schema (a record without fields) is refused with 422,
	// code 42201. Confluent: yes.
	rejectsInvalidAvro bool
	// GET /schemas (sr's AllSchemas) and GET /mode (sr's Mode) work.
	// Confluent: yes.
	allSchemas, mode bool
	// The HTTP status of a hard delete of a subject that was not soft
	// deleted first, with error code 40405; 0 if it is allowed.
	// Confluent: 404.
	hardDeleteFirstStatus int
	// GET /schemas/ids/{id}/schema (sr's SchemaTextByID) answers the text
	// JSON-quoted ("{\"type\":...}") instead of the text itself.
	// Confluent: the text itself.
	rawTextQuoted bool
}

// eachRegistry runs fn on every registry backend, with a client and a
// context that bounds the subtest.
func eachRegistry(t *testing.T, fn func(t *testing.T, b registryBackend, ctx context.Context, cl *sr.Client)) {
	for _, b := range registryBackends(t) {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cl, err := sr.NewClient(sr.URLs(b.url))
			if err != nil {
				t.Fatal(err)
			}
			fn(t, b, ctx, cl)
		})
	}
}

func registryBackends(t *testing.T) []registryBackend {
	fake := srfake.New()
	t.Cleanup(fake.Close)
	return []registryBackend{
		{
			name: "apicurio", url: kafkatest.SharedRegistry(t).URL(),
			globalCompat: sr.CompatNone, subjectCompatFallsBack: true, enforcesCompat: true,
			textAsRegistered: true, variantSharesID: false, subjectsByID: false, guid: false,
			idOutlivesHardDelete: false, jsonNeedsSchemaOrProperties: true, rejectsInvalidAvro: true, allSchemas: false, mode: false,
			hardDeleteFirstStatus: 409, rawTextQuoted: false,
		},
		{
			name: "srfake", url: fake.URL(),
			globalCompat: sr.CompatBackward, subjectCompatFallsBack: true, enforcesCompat: false,
			textAsRegistered: true, variantSharesID: true, subjectsByID: true, guid: true,
			idOutlivesHardDelete: true, jsonNeedsSchemaOrProperties: false, rejectsInvalidAvro: false, allSchemas: true, mode: true,
			hardDeleteFirstStatus: 0, rawTextQuoted: true,
		},
	}
}

const (
	avroOrder = `{"type":"record","name":"Order","namespace":"kql.test","fields":[{"name":"id","type":"string"},{"name":"amount","type":"long"}]}`
	// The same schema, formatted differently.
	avroOrderSpaced = `{
  "type": "record", "name": "Order", "namespace": "kql.test",
  "fields": [ {"name": "id", "type": "string"}, {"name": "amount", "type": "long"} ]
}`
	// Adds a field without a default: a reader with this schema cannot read
	// avroOrder data, so it is not BACKWARD compatible.
	avroOrderBreaking = `{"type":"record","name":"Order","namespace":"kql.test","fields":[{"name":"id","type":"string"},{"name":"amount","type":"long"},{"name":"currency","type":"string"}]}`

	protoMoneyPath = "kql/test/money.proto"
	protoMoney     = `syntax = "proto3";
package kql.test;

message Money {
  int64 units = 1;
  string currency = 2;
}
`
	protoOrder = `syntax = "proto3";
package kql.test;

import "kql/test/money.proto";

message Order {
  string id = 1;
  kql.test.Money total = 2;
}
`
	jsonOrder = `{"$schema":"http://json-schema.org/draft-07/schema#","title":"Order","type":"object","properties":{"id":{"type":"string"},"amount":{"type":"integer"}},"required":["id"]}`
)

// TestRegistrySchemas registers an Avro, a Protobuf (importing another
// subject through a reference) and a JSON schema with franz-go's sr client,
// the client kql uses, and reads them back every way kql will.
func TestRegistrySchemas(t *testing.T) {
	eachRegistry(t, func(t *testing.T, b registryBackend, ctx context.Context, cl *sr.Client) {
		base := kafkatest.SubjectName(t)
		avroA, avroB, avroC := base+"-avro-a-value", base+"-avro-b-value", base+"-avro-c-value"
		money, order, js := base+"-money-value", base+"-order-value", base+"-json-value"

		create := func(subject string, s sr.Schema) sr.SubjectSchema {
			t.Helper()
			ss, err := cl.CreateSchema(ctx, subject, s)
			if err != nil {
				t.Fatalf("registering in %s: %v", subject, err)
			}
			if ss.ID <= 0 || ss.Version <= 0 || ss.Subject != subject {
				t.Fatalf("registering in %s answered %+v, want a positive id and version and the subject", subject, ss)
			}
			t.Logf("%s: id %d version %d", subject, ss.ID, ss.Version)
			return ss
		}

		// Avro: one id for the same schema in two subjects.
		a := create(avroA, sr.Schema{Schema: avroOrder, Type: sr.TypeAvro})
		bb := create(avroB, sr.Schema{Schema: avroOrder})
		if bb.ID != a.ID || bb.Version != 1 {
			t.Errorf("the same schema in a second subject got id %d version %d, want id %d (the first subject's) version 1", bb.ID, bb.Version, a.ID)
		}
		// A formatting variant in the same subject is the same version.
		again := create(avroA, sr.Schema{Schema: avroOrderSpaced})
		if again.ID != a.ID || again.Version != a.Version {
			t.Errorf("a formatting variant in the same subject got id %d version %d, want the existing id %d version %d", again.ID, again.Version, a.ID, a.Version)
		}
		if vs, err := cl.SubjectVersions(ctx, avroA); err != nil || !slices.Equal(vs, []int{1}) {
			t.Errorf("SubjectVersions(%s) = %v, %v; want [1]", avroA, vs, err)
		}
		found, err := cl.LookupSchema(ctx, avroA, sr.Schema{Schema: avroOrderSpaced})
		if err != nil || found.ID != a.ID || found.Version != 1 {
			t.Errorf("LookupSchema of a formatting variant = %+v, %v; want id %d version 1", found, err, a.ID)
		}
		// The variant in another subject.
		c := create(avroC, sr.Schema{Schema: avroOrderSpaced})
		if got := c.ID == a.ID; got != b.variantSharesID {
			t.Errorf("a formatting variant in another subject got id %d (the original's is %d): shares the id = %v, want %v", c.ID, a.ID, got, b.variantSharesID)
		}

		s, err := cl.SchemaByID(ctx, a.ID)
		if err != nil {
			t.Fatalf("SchemaByID(%d): %v", a.ID, err)
		}
		if s.Type != sr.TypeAvro || len(s.References) != 0 {
			t.Errorf("SchemaByID(%d) = type %v references %v, want avro and none", a.ID, s.Type, s.References)
		}
		if got := s.Schema == avroOrder; got != b.textAsRegistered {
			t.Errorf("SchemaByID(%d) text %q: as registered = %v, want %v", a.ID, s.Schema, got, b.textAsRegistered)
		}
		text, err := cl.SchemaTextByID(ctx, a.ID)
		if b.rawTextQuoted {
			text, _ = strconv.Unquote(strings.TrimSpace(text))
		}
		if err != nil || (text == avroOrder) != b.textAsRegistered {
			t.Errorf("SchemaTextByID(%d) = %q, %v; want the schema text (as registered: %v, JSON-quoted: %v)", a.ID, text, err, b.textAsRegistered, b.rawTextQuoted)
		}
		if c.ID != a.ID {
			if s, err := cl.SchemaByID(ctx, c.ID); err != nil || s.Schema != avroOrderSpaced {
				t.Errorf("SchemaByID(%d) = %q, %v; want the variant as registered", c.ID, s.Schema, err)
			}
		}

		// Protobuf with an import resolved through a reference.
		m := create(money, sr.Schema{Schema: protoMoney, Type: sr.TypeProtobuf})
		refs := []sr.SchemaReference{{Name: protoMoneyPath, Subject: money, Version: m.Version}}
		o := create(order, sr.Schema{Schema: protoOrder, Type: sr.TypeProtobuf, References: refs})
		if o.ID == m.ID {
			t.Errorf("the importing schema got the imported one's id %d", o.ID)
		}
		s, err = cl.SchemaByID(ctx, o.ID)
		if err != nil {
			t.Fatalf("SchemaByID(%d): %v", o.ID, err)
		}
		if s.Type != sr.TypeProtobuf || s.Schema != protoOrder || !slices.Equal(s.References, refs) {
			t.Errorf("SchemaByID(%d) = %+v, want the protobuf schema as registered with references %+v", o.ID, s, refs)
		}
		latest, err := cl.SchemaByVersion(ctx, order, -1)
		if err != nil {
			t.Fatalf("SchemaByVersion(%s, latest): %v", order, err)
		}
		if latest.Subject != order || latest.Version != 1 || latest.ID != o.ID || latest.Type != sr.TypeProtobuf || !slices.Equal(latest.References, refs) {
			t.Errorf("SchemaByVersion(%s, latest) = %+v, want version 1 id %d protobuf with references %+v", order, latest, o.ID, refs)
		}
		if got := latest.GUID != ""; got != b.guid {
			t.Errorf("SchemaByVersion GUID %q: present = %v, want %v", latest.GUID, got, b.guid)
		}
		refBy, err := cl.SchemaReferences(ctx, money, m.Version)
		if err != nil {
			t.Errorf("SchemaReferences(%s, %d): %v", money, m.Version, err)
		} else if len(refBy) != 1 || refBy[0].ID != o.ID || refBy[0].Subject != order {
			t.Errorf("SchemaReferences(%s, %d) = %+v, want the importing schema (id %d in %s)", money, m.Version, refBy, o.ID, order)
		}

		// JSON Schema.
		j := create(js, sr.Schema{Schema: jsonOrder, Type: sr.TypeJSON})
		s, err = cl.SchemaByID(ctx, j.ID)
		if err != nil || s.Type != sr.TypeJSON || s.Schema != jsonOrder {
			t.Errorf("SchemaByID(%d) = %+v, %v; want the JSON schema as registered", j.ID, s, err)
		}

		// Listing.
		subjects, err := cl.Subjects(ctx)
		if err != nil {
			t.Fatalf("Subjects: %v", err)
		}
		for _, want := range []string{avroA, avroB, avroC, money, order, js} {
			if !slices.Contains(subjects, want) {
				t.Errorf("Subjects() does not list %s: %v", want, subjects)
			}
		}

		// Who uses an id.
		usages, err := cl.SchemaUsagesByID(ctx, a.ID)
		if err != nil {
			t.Fatalf("SchemaUsagesByID(%d): %v", a.ID, err)
		}
		var used []string
		for _, u := range usages {
			if u.ID != a.ID || u.Version != 1 {
				t.Errorf("SchemaUsagesByID(%d) lists %+v, want id %d version 1", a.ID, u, a.ID)
			}
			used = append(used, u.Subject)
		}
		wantUsed := []string{avroA, avroB}
		if b.variantSharesID {
			wantUsed = append(wantUsed, avroC)
		}
		slices.Sort(used)
		if !slices.Equal(used, wantUsed) {
			t.Errorf("SchemaUsagesByID(%d) subjects = %v, want %v", a.ID, used, wantUsed)
		}
		bySubject, err := cl.SubjectsByID(ctx, a.ID)
		if b.subjectsByID {
			slices.Sort(bySubject)
			if err != nil || !slices.Equal(bySubject, wantUsed) {
				t.Errorf("SubjectsByID(%d) = %v, %v; want %v", a.ID, bySubject, err, wantUsed)
			}
		} else {
			var re *sr.ResponseError
			if !errors.As(err, &re) || re.StatusCode != 404 || re.ErrorCode != 0 || len(re.Raw) != 0 {
				t.Errorf("SubjectsByID(%d) = %v, %v; want what Apicurio 3.0.9 answers: 404 with an empty body (not implemented)", a.ID, bySubject, err)
			}
		}
	})
}

// TestRegistryErrors checks the error codes a decoder meets: unknown id,
// subject and version.
func TestRegistryErrors(t *testing.T) {
	eachRegistry(t, func(t *testing.T, b registryBackend, ctx context.Context, cl *sr.Client) {
		subject := kafkatest.SubjectName(t)
		if _, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: avroOrder}); err != nil {
			t.Fatal(err)
		}
		check := func(what string, err error, want *sr.Error) {
			t.Helper()
			var re *sr.ResponseError
			if !errors.As(err, &re) {
				t.Errorf("%s: got %v (%T), want a *sr.ResponseError", what, err, err)
				return
			}
			if re.StatusCode != 404 || re.ErrorCode != want.Code || re.SchemaError() != want {
				t.Errorf("%s: got HTTP %d error_code %d (%q), want 404 and %d (%s)", what, re.StatusCode, re.ErrorCode, re.Message, want.Code, want.Name)
			}
			// sr's errors are not wrapped: errors.Is does not see them.
			if errors.Is(err, want) {
				t.Errorf("%s: errors.Is(err, sr.%s) is true; sr v1.8.0 did not wrap them, update the notes in kafkatest/registry.go", what, want.Name)
			}
			t.Logf("%s: HTTP %d, error_code %d, message %q", what, re.StatusCode, re.ErrorCode, re.Message)
		}
		_, err := cl.SchemaByID(ctx, 1<<30)
		check("unknown id", err, sr.ErrSchemaNotFound)
		_, err = cl.SchemaByVersion(ctx, subject+"-nope", -1)
		check("unknown subject", err, sr.ErrSubjectNotFound)
		_, err = cl.SchemaByVersion(ctx, subject, 99)
		check("unknown version", err, sr.ErrVersionNotFound)
	})
}

// TestRegistryCompatibility reads the global and per-subject compatibility
// levels, sets and resets a subject's, and checks whether a level is
// enforced. It never changes the global level: the registry is shared.
func TestRegistryCompatibility(t *testing.T) {
	eachRegistry(t, func(t *testing.T, b registryBackend, ctx context.Context, cl *sr.Client) {
		subject := kafkatest.SubjectName(t)
		if _, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: avroOrder}); err != nil {
			t.Fatal(err)
		}
		global := cl.Compatibility(ctx)[0]
		if global.Err != nil || global.Level != b.globalCompat {
			t.Errorf("global compatibility = %v, %v; want %v", global.Level, global.Err, b.globalCompat)
		}
		sub := cl.Compatibility(ctx, subject)[0]
		if b.subjectCompatFallsBack {
			if sub.Err != nil || sub.Level != b.globalCompat {
				t.Errorf("compatibility of %s (none of its own) = %v, %v; want the global %v", subject, sub.Level, sub.Err, b.globalCompat)
			}
		} else {
			var re *sr.ResponseError
			if !errors.As(sub.Err, &re) || re.ErrorCode != sr.ErrSubjectLevelCompatibilityNotConfigured.Code {
				t.Errorf("compatibility of %s (none of its own) = %v, %v; want error 40408", subject, sub.Level, sub.Err)
			}
		}
		t.Logf("global %v; subject without its own: %v (err %v)", global.Level, sub.Level, sub.Err)

		set := cl.SetCompatibility(ctx, sr.SetCompatibility{Level: sr.CompatBackward}, subject)[0]
		if set.Err != nil {
			t.Fatalf("setting %s to BACKWARD: %v", subject, set.Err)
		}
		if got := cl.Compatibility(ctx, subject)[0]; got.Err != nil || got.Level != sr.CompatBackward {
			t.Errorf("compatibility of %s after setting BACKWARD = %v, %v", subject, got.Level, got.Err)
		}
		_, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: avroOrderBreaking})
		var re *sr.ResponseError
		refused := errors.As(err, &re) && re.StatusCode == 409 && re.SchemaError() == sr.ErrIncompatibleSchema
		if refused != b.enforcesCompat {
			t.Errorf("registering a BACKWARD-incompatible schema: %v; refused with 409 = %v, want %v", err, refused, b.enforcesCompat)
		}
		t.Logf("BACKWARD-incompatible schema: %v", err)

		reset := cl.ResetCompatibility(ctx, subject)[0]
		if reset.Err != nil {
			t.Fatalf("resetting %s: %v", subject, reset.Err)
		}
		if got := cl.Compatibility(ctx, subject)[0]; b.subjectCompatFallsBack && (got.Err != nil || got.Level != b.globalCompat) {
			t.Errorf("compatibility of %s after the reset = %v, %v; want the global %v", subject, got.Level, got.Err, b.globalCompat)
		}
	})
}

// TestRegistryDelete soft- and hard-deletes a version and a subject, and
// checks what remains readable by id.
func TestRegistryDelete(t *testing.T) {
	eachRegistry(t, func(t *testing.T, b registryBackend, ctx context.Context, cl *sr.Client) {
		subject := kafkatest.SubjectName(t)
		// A schema of this subject's own, so that no other subject holds
		// its id ("properties" makes Apicurio take it for JSON Schema).
		own := sr.Schema{Schema: `{"title":"` + subject + `","type":"object","properties":{}}`, Type: sr.TypeJSON}
		ss, err := cl.CreateSchema(ctx, subject, own)
		if err != nil {
			t.Fatal(err)
		}
		// A second version, deleted on its own.
		v2, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: `{"title":"` + subject + `","type":"object","properties":{"v2":{}}}`, Type: sr.TypeJSON})
		if err != nil || v2.Version != 2 {
			t.Fatalf("registering a second version: %+v, %v", v2, err)
		}
		if err := cl.DeleteSchema(ctx, subject, 2, sr.SoftDelete); err != nil {
			t.Fatalf("soft-deleting version 2: %v", err)
		}
		if err := cl.DeleteSchema(ctx, subject, 2, sr.HardDelete); err != nil {
			t.Fatalf("hard-deleting version 2: %v", err)
		}
		if vs, err := cl.SubjectVersions(ctx, subject); err != nil || !slices.Equal(vs, []int{1}) {
			t.Errorf("versions after deleting version 2 = %v, %v; want [1]", vs, err)
		}
		listed := func(deleted bool) bool {
			t.Helper()
			c := ctx
			if deleted {
				c = sr.WithParams(ctx, sr.ShowDeleted)
			}
			subjects, err := cl.Subjects(c)
			if err != nil {
				t.Fatalf("Subjects: %v", err)
			}
			return slices.Contains(subjects, subject)
		}
		if vs, err := cl.DeleteSubject(ctx, subject, sr.SoftDelete); err != nil || !slices.Equal(vs, []int{1}) {
			t.Fatalf("soft-deleting %s = %v, %v; want [1]", subject, vs, err)
		}
		if listed(false) || !listed(true) {
			t.Errorf("after a soft delete %s is listed: %v, with deleted=true: %v; want false, true", subject, listed(false), listed(true))
		}
		// Records written with the id must still decode.
		if s, err := cl.SchemaByID(ctx, ss.ID); err != nil || s.Schema != own.Schema {
			t.Errorf("SchemaByID(%d) after a soft delete of its only subject = %q, %v; want the schema", ss.ID, s.Schema, err)
		}
		if _, err := cl.DeleteSubject(ctx, subject, sr.HardDelete); err != nil {
			t.Fatalf("hard-deleting %s: %v", subject, err)
		}
		if listed(true) {
			t.Errorf("after a hard delete %s is still listed with deleted=true", subject)
		}
		s, err := cl.SchemaByID(ctx, ss.ID)
		if got := err == nil; got != b.idOutlivesHardDelete {
			t.Errorf("SchemaByID(%d) after a hard delete of its only subject = %q, %v; still found = %v, want %v", ss.ID, s.Schema, err, got, b.idOutlivesHardDelete)
		}
		t.Logf("SchemaByID(%d) after a hard delete of its only subject: %q, %v", ss.ID, s.Schema, err)
		if !strings.HasPrefix(subject, "kql-") {
			t.Errorf("SubjectName gave %q, want the kql- prefix of the other test names", subject)
		}
	})
}

// TestRegistryGaps pins down where the registries part ways beyond reading
// schemas: what Apicurio refuses or does not implement.
func TestRegistryGaps(t *testing.T) {
	eachRegistry(t, func(t *testing.T, b registryBackend, ctx context.Context, cl *sr.Client) {
		subject := kafkatest.SubjectName(t)
		statusCode := func(err error) (int, int) {
			var re *sr.ResponseError
			if errors.As(err, &re) {
				return re.StatusCode, re.ErrorCode
			}
			return 0, 0
		}

		_, err := cl.CreateSchema(ctx, subject+"-str", sr.Schema{Schema: `{"type":"string"}`, Type: sr.TypeJSON})
		if status, code := statusCode(err); (status == 422 && code == sr.ErrInvalidSchema.Code) != b.jsonNeedsSchemaOrProperties ||
			(err == nil) == b.jsonNeedsSchemaOrProperties {
			t.Errorf(`registering the JSON Schema {"type":"string"}: %v (HTTP %d, code %d); refused with 422/42201 = %v`, err, status, code, b.jsonNeedsSchemaOrProperties)
		}
		t.Logf(`JSON Schema {"type":"string"}: %v`, err)
		// With "properties" it is accepted everywhere.
		if _, err := cl.CreateSchema(ctx, subject+"-obj", sr.Schema{Schema: `{"type":"object","properties":{"id":{"type":"string"}}}`, Type: sr.TypeJSON}); err != nil {
			t.Errorf("registering a JSON Schema with properties: %v", err)
		}

		_, err = cl.CreateSchema(ctx, subject+"-bad", sr.Schema{Schema: `{"type":"record","name":"R"}`})
		if status, code := statusCode(err); (status == 422 && code == sr.ErrInvalidSchema.Code) != b.rejectsInvalidAvro {
			t.Errorf("registering an Avro record without fields: %v (HTTP %d, code %d); refused with 422/42201 = %v", err, status, code, b.rejectsInvalidAvro)
		}
		t.Logf("Avro record without fields: %v", err)

		_, err = cl.AllSchemas(ctx)
		if status, _ := statusCode(err); (err == nil) != b.allSchemas || (!b.allSchemas && status != 404) {
			t.Errorf("AllSchemas (GET /schemas): %v (HTTP %d); works = %v", err, status, b.allSchemas)
		}
		mode := cl.Mode(ctx)[0]
		if status, _ := statusCode(mode.Err); (mode.Err == nil) != b.mode || (!b.mode && status != 404) {
			t.Errorf("Mode (GET /mode): %v, %v (HTTP %d); works = %v", mode.Mode, mode.Err, status, b.mode)
		}

		_, err = cl.DeleteSubject(ctx, subject+"-obj", sr.HardDelete)
		if status, code := statusCode(err); status != b.hardDeleteFirstStatus || (status != 0 && code != sr.ErrSubjectNotSoftDeleted.Code) {
			t.Errorf("hard-deleting a subject not soft-deleted first: %v (HTTP %d, code %d); want HTTP %d (0: allowed), code 40405", err, status, code, b.hardDeleteFirstStatus)
		}
	})
}
