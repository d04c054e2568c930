package exec

import (
	"context"
	"errors"
	"fmt"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
	"github.com/kql-dev/kql/schema"
)

// The schema registry statements: SHOW SUBJECTS, DESCRIBE SUBJECT, SHOW
// SCHEMAS FOR TOPIC, and the SCHEMA clauses of PRODUCE. They talk HTTP to
// the registry (pkg/sr), not to Kafka; EXPLAIN and \trace name the registry
// requests as they name broker requests.

var (
	showSubjectsCols = []result.Column{col("subject", result.String), col("type", result.String),
		col("latest_version", result.Int), col("latest_id", result.Int), col("compatibility", result.String)}
	describeSubjectCols = []result.Column{col("version", result.Int), col("id", result.Int), col("type", result.String),
		col("schema", result.String), col("references", result.String)}
	showSchemasCols = []result.Column{col("side", result.String), col("subject", result.String),
		col("latest_version", result.Int), col("latest_id", result.Int), col("type", result.String)}
)

// errNoRegistry is what a registry statement says without a registry.
func errNoRegistry(what string) error {
	return fmt.Errorf("%s needs a schema registry: start kql with --schema-registry URL (or schema.registry.url in the --command-config file)", what)
}

func (s *Session) showSubjects(ctx context.Context, st *lang.ShowSubjects) (result.Result, error) {
	if s.Registry == nil {
		return nil, errNoRegistry("SHOW SUBJECTS")
	}
	match, err := likeMatcher(st.Like)
	if err != nil {
		return nil, err
	}
	subjects, errs, warnings, err := s.Registry.Subjects(ctx)
	if err != nil {
		return nil, err
	}
	var rows []result.Row
	var failed []error
	for _, sub := range subjects {
		if !match(sub.Name) {
			continue
		}
		if e := errs[sub.Name]; e != nil {
			// Shown, with what is known; its details are NULL, never 0.
			rows = append(rows, result.Row{sub.Name, nil, nil, nil, nullIfEmpty(sub.Compatibility)})
			failed = append(failed, e)
			continue
		}
		rows = append(rows, result.Row{sub.Name, sub.Type, int64(sub.LatestVersion), int64(sub.LatestID), nullIfEmpty(sub.Compatibility)})
	}
	res := result.NewSlice(showSubjectsCols, rows)
	res.Warns = append(warnings, errorLines(failed)...)
	return res, nil
}

func (s *Session) describeSubject(ctx context.Context, st *lang.DescribeSubject) (result.Result, error) {
	if s.Registry == nil {
		return nil, errNoRegistry("DESCRIBE SUBJECT")
	}
	versions, err := s.Registry.Describe(ctx, st.Subject, st.Version)
	if err != nil {
		return nil, err
	}
	rows := make([]result.Row, 0, len(versions))
	for _, v := range versions {
		rows = append(rows, result.Row{int64(v.Version), int64(v.ID), v.Type, v.Schema, schema.FormatReferences(v.References)})
	}
	return result.NewSlice(describeSubjectCols, rows), nil
}

// showSchemas names the subjects the TopicNameStrategy maps topic to; a
// side without a subject is a row of NULLs after its name, so "no key
// schema" is visible rather than a missing row.
func (s *Session) showSchemas(ctx context.Context, st *lang.ShowSchemas) (result.Result, error) {
	if s.Registry == nil {
		return nil, errNoRegistry("SHOW SCHEMAS")
	}
	key, value := schema.TopicSubjects(st.Topic)
	var rows []result.Row
	for _, side := range []struct{ name, subject string }{{"key", key}, {"value", value}} {
		vs, err := s.Registry.Describe(ctx, side.subject, -1)
		if err != nil {
			if isSubjectNotFound(err) {
				rows = append(rows, result.Row{side.name, side.subject, nil, nil, nil})
				continue
			}
			return nil, err
		}
		v := vs[len(vs)-1]
		rows = append(rows, result.Row{side.name, side.subject, int64(v.Version), int64(v.ID), v.Type})
	}
	return result.NewSlice(showSchemasCols, rows), nil
}

func isSubjectNotFound(err error) bool {
	var nf *schema.SubjectNotFoundError
	return errors.As(err, &nf)
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func errorLines(errs []error) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}

// encodeLiteral writes a PRODUCE literal (JSON text) with its SCHEMA
// clause's schema. A NULL stays NULL: a tombstone has no schema.
func (s *Session) encodeLiteral(ctx context.Context, side string, lit *lang.Literal, ref *lang.SchemaRef) ([]byte, *schema.Encoded, error) {
	if ref == nil {
		return literalBytes(lit), nil, nil
	}
	if s.Registry == nil {
		return nil, nil, errNoRegistry(fmt.Sprintf("PRODUCE ... %s SCHEMA", upper(side)))
	}
	if lit == nil || lit.Null {
		return nil, nil, nil
	}
	enc, err := s.Registry.Encode(ctx, schemaRef(ref), lit.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("the %s: %w; nothing was written", side, err)
	}
	return enc.Bytes, &enc, nil
}

func schemaRef(r *lang.SchemaRef) schema.Ref {
	return schema.Ref{Subject: r.Subject, Version: r.Version, ID: r.ID, Message: r.Message}
}

func upper(side string) string {
	if side == "key" {
		return "KEY"
	}
	return "VALUE"
}

// registry adds one step of registry requests (HTTP, not Kafka: no broker).
func (p *planner) registry(reg *schema.Registry, requests ...[2]string) {
	p.step++
	for _, r := range requests {
		p.rows = append(p.rows, result.Row{p.step, "Registry " + r[0], nil, reg.URLs(), r[1]})
	}
}

// registryLookup plans the lookup of a PRODUCE's SCHEMA clause.
func (p *planner) registryLookup(side string, ref *lang.SchemaRef, reg *schema.Registry) {
	if ref == nil || reg == nil {
		return
	}
	var reqs [][2]string
	if !ref.HasID {
		v := "latest"
		if ref.Version > 0 {
			v = fmt.Sprint(ref.Version)
		}
		reqs = append(reqs, [2]string{fmt.Sprintf("GET /subjects/%s/versions/%s", ref.Subject, v), side + " schema"})
	}
	id := "{id}"
	if ref.HasID {
		id = fmt.Sprint(ref.ID)
	}
	reqs = append(reqs, [2]string{"GET /schemas/ids/" + id, side + " schema and its references (once per session)"})
	p.registry(reg, reqs...)
}

// registryRequests are the requests of a registry statement.
func registryRequests(st lang.Statement) [][2]string {
	switch x := st.(type) {
	case *lang.ShowSubjects:
		return [][2]string{{"GET /subjects", "subject names"},
			{"GET /subjects/{subject}/versions/latest", "each subject's latest schema"},
			{"GET /config, GET /config/{subject}", "compatibility levels"}}
	case *lang.DescribeSubject:
		if x.Version > 0 {
			return [][2]string{{fmt.Sprintf("GET /subjects/%s/versions/%d", x.Subject, x.Version), x.Subject}}
		}
		return [][2]string{{fmt.Sprintf("GET /subjects/%s/versions", x.Subject), x.Subject},
			{fmt.Sprintf("GET /subjects/%s/versions/{version}", x.Subject), "each version"}}
	case *lang.ShowSchemas:
		k, v := schema.TopicSubjects(x.Topic)
		return [][2]string{{fmt.Sprintf("GET /subjects/%s/versions/latest", k), "key subject"},
			{fmt.Sprintf("GET /subjects/%s/versions/latest", v), "value subject"}}
	}
	return nil
}

// partitionKey is the key PARTITION FOR KEY hashes: with a registry whose
// TopicNameStrategy subject TOPIC-key exists, the key as its producers
// wrote it (encoded with that subject's latest schema: the murmur2 of the
// text alone names another partition); else the bytes as written. how says
// which, for EXPLAIN ("" for the bytes as written); warn is set when the
// registry could not be asked and the bytes as written were hashed.
func (s *Session) partitionKey(ctx context.Context, topic string, key []byte) (b []byte, how, warn string, err error) {
	if s.Registry == nil {
		return key, "", "", nil
	}
	if _, ok := schema.HeaderID(key); ok {
		// Bytes with a wire-format header already (x'...' copied from a
		// record) are the key as written: encoding them again failed
		// ("not JSON") or, for a string schema, hashed them wrapped in a
		// second header, another partition.
		return key, "", "", nil
	}
	subject, _ := schema.TopicSubjects(topic)
	enc, err := s.Registry.Encode(ctx, schema.Ref{Subject: subject}, key)
	if err != nil {
		switch {
		case isSubjectNotFound(err):
			return key, "", "", nil // keys without a schema
		case schema.IsRegistryDown(err):
			// As a CONSUME does without the registry: go on, and say what
			// may be wrong, rather than fail a read the registry is not
			// needed for when the topic's keys have no schema.
			warn = fmt.Sprintf("PARTITION FOR KEY hashed the key as written, not encoded with subject %s: %v; if the topic's producers encode keys with a schema, the key is in another partition (give it as x'...' with its wire-format header to hash exactly those bytes)", subject, err)
			return key, "the key as written (the registry could not be asked)", warn, nil
		}
		return nil, "", "", fmt.Errorf("PARTITION FOR KEY: the key is hashed as its producers wrote it, encoded with subject %s: %w", subject, err)
	}
	return enc.Bytes, fmt.Sprintf("the key encoded with subject %s (schema id %d), as its producers wrote it", subject, enc.ID), "", nil
}
