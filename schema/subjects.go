package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/sr"
)

// Ref names the schema a PRODUCE writes with: a subject's latest version
// (Version 0), one version, or a schema id (ID > 0, Subject optional);
// Message, for a Protobuf schema, the message written.
type Ref struct {
	Subject string
	Version int
	ID      int
	Message string
}

func (r Ref) String() string {
	switch {
	case r.ID > 0 && r.Subject != "":
		return fmt.Sprintf("subject %s id %d", r.Subject, r.ID)
	case r.ID > 0:
		return fmt.Sprintf("schema id %d", r.ID)
	case r.Version > 0:
		return fmt.Sprintf("subject %s version %d", r.Subject, r.Version)
	}
	return fmt.Sprintf("subject %s (latest version)", r.Subject)
}

// Encoded is a value written in the wire format, and what wrote it.
type Encoded struct {
	Bytes   []byte
	ID      int
	Version int // 0 when written by id
	Type    string
}

// Encode writes JSON text under ref's schema in the Confluent wire format.
// A text that does not fit is an error naming the field; nothing is
// returned to write.
func (r *Registry) Encode(ctx context.Context, ref Ref, text []byte) (Encoded, error) {
	var out Encoded
	id := ref.ID
	if id <= 0 {
		version := ref.Version
		if version == 0 {
			version = -1
		}
		ss, err := r.cl.SchemaByVersion(ctx, ref.Subject, version)
		if err != nil {
			return out, r.subjectError(ref, err)
		}
		id, out.Version = ss.ID, ss.Version
	} else if ref.Subject != "" {
		// 'subject' ID n: n must be one of the subject's schemas, or the
		// record would claim a subject it does not belong to.
		// SchemaVersionsByID rather than SubjectsByID: Apicurio has only
		// the former.
		svs, err := r.cl.SchemaVersionsByID(ctx, id)
		if err != nil {
			if IsNotFound(err) {
				return out, fmt.Errorf("schema id %d: the registry %s does not know it", id, r.urls)
			}
			return out, r.wrap(ref.String(), err)
		}
		var subjects []string
		for _, sv := range svs {
			if sv.Subject == ref.Subject {
				out.Version = sv.Version
			}
			subjects = append(subjects, sv.Subject)
		}
		if out.Version == 0 {
			return out, fmt.Errorf("schema id %d is not a schema of subject %q (it is registered under %s): DESCRIBE SUBJECT '%s' lists the subject's ids",
				id, ref.Subject, strings.Join(subjects, ", "), ref.Subject)
		}
	}
	c, err := r.codecFor(ctx, id)
	if err != nil {
		if idNotFound(err) {
			return out, fmt.Errorf("schema id %d: the registry %s does not know it", id, r.urls)
		}
		if IsUnreachable(err) {
			return out, err
		}
		return out, fmt.Errorf("schema id %d: %w", id, err)
	}
	var body []byte
	if ref.Message != "" {
		pc, ok := c.(*protoCodec)
		if !ok {
			return out, fmt.Errorf("%s is %s, and MESSAGE names a Protobuf message: leave MESSAGE out", ref, typeName(c.kind()))
		}
		body, err = pc.encodeAs(nil, text, ref.Message)
	} else {
		body, err = c.encode(nil, text)
	}
	if err != nil && ref.Message == "" && !json.Valid(text) && !meantAsJSON(text) {
		// A string schema (the usual key schema) also takes bare text that
		// is not JSON, as reading shows it: KEY 'cust-7' as well as
		// KEY '"cust-7"'. (Text that is JSON is only ever read as JSON.)
		// Not text that opens an object, an array or a string: that is
		// JSON with a typo, and a schema with a string branch (a JSON
		// Schema with no "type", an Avro union with "string") took it as
		// a string and wrote it, where the typo must be an error.
		quoted, _ := json.Marshal(string(text))
		if b, qerr := c.encode(nil, quoted); qerr == nil {
			body, err = b, nil
		}
	}
	if err != nil {
		if ref.ID > 0 {
			return out, fmt.Errorf("%s (%s): %w", ref, typeName(c.kind()), err)
		}
		return out, fmt.Errorf("%s (%s, id %d): %w", ref, typeName(c.kind()), id, err)
	}
	b := make([]byte, 5, 5+len(body))
	b[1], b[2], b[3], b[4] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
	out.Bytes, out.ID, out.Type = append(b, body...), id, typeName(c.kind())
	return out, nil
}

// meantAsJSON reports whether text opens a JSON object, array or string.
func meantAsJSON(text []byte) bool {
	t := bytes.TrimLeft(text, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[' || t[0] == '"')
}

// subjectError explains a failed subject lookup in the user's terms.
func (r *Registry) subjectError(ref Ref, err error) error {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		switch re.ErrorCode {
		case sr.ErrSubjectNotFound.Code:
			return &SubjectNotFoundError{Subject: ref.Subject, URLs: r.urls}
		case sr.ErrVersionNotFound.Code:
			return fmt.Errorf("subject %q has no version %d: DESCRIBE SUBJECT '%s' lists its versions", ref.Subject, ref.Version, ref.Subject)
		}
		if re.StatusCode == 404 {
			return fmt.Errorf("%s: not found in the registry %s (%v): SHOW SUBJECTS lists the subjects", ref, r.urls, err)
		}
	}
	return r.wrap(ref.String(), err)
}

// SubjectNotFoundError is a subject the registry does not have.
type SubjectNotFoundError struct {
	Subject, URLs string
}

func (e *SubjectNotFoundError) Error() string {
	return fmt.Sprintf("subject %q is not in the registry %s: SHOW SUBJECTS lists them", e.Subject, e.URLs)
}

// Subject is one row of SHOW SUBJECTS.
type Subject struct {
	Name          string
	Type          string
	LatestVersion int
	LatestID      int
	Compatibility string // the subject's own level, else the global one
}

// Subjects lists the registry's subjects with their latest schemas. A
// subject whose details could not be read is returned with its error in
// errs (by subject), not dropped and not zeroed. warnings says what the
// whole list lacks (the global compatibility level, when role-based access
// forbids reading it: subjects without a level of their own then have none).
func (r *Registry) Subjects(ctx context.Context) (subjects []Subject, errs map[string]error, warnings []string, err error) {
	names, err := r.cl.Subjects(ctx)
	if err != nil {
		return nil, nil, nil, r.wrap("listing subjects", err)
	}
	global, err := r.globalCompatibility(ctx)
	var re *sr.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusForbidden {
		// The subjects were listed with these credentials: only the
		// global config is forbidden.
		warnings = append(warnings, err.Error()+": the compatibility of subjects without a level of their own is NULL")
		err = nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	sort.Strings(names)
	out := make([]Subject, len(names))
	errs = map[string]error{}
	var mu sync.Mutex
	fail := func(name string, err error) {
		mu.Lock()
		if errs[name] == nil {
			errs[name] = err
		}
		mu.Unlock()
	}
	// Each subject's compatibility is asked here, under the same bound of
	// 8 requests at a time: pkg/sr's Compatibility(ctx, names...) asks for
	// all of them at once, a connection each, which with thousands of
	// subjects ran out of file descriptors.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, name := range names {
		out[i].Name = name
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ss, err := r.cl.SchemaByVersion(ctx, name, -1)
			if err != nil {
				fail(name, r.wrap("subject "+name, err))
			} else {
				out[i].Type, out[i].LatestVersion, out[i].LatestID = typeName(ss.Type), ss.Version, ss.ID
			}
			level, err := r.subjectCompatibility(ctx, name, global)
			if err != nil {
				fail(name, err)
			}
			out[i].Compatibility = level
		}()
	}
	wg.Wait()
	return out, errs, warnings, nil
}

// globalCompatibility is the registry's global compatibility level, or ""
// when it cannot be read for a reason that leaves the subjects readable.
func (r *Registry) globalCompatibility(ctx context.Context) (string, error) {
	c := r.cl.Compatibility(ctx)[0]
	if c.Err != nil {
		if statementWide(c.Err) {
			return "", r.wrap("global compatibility", c.Err)
		}
		return "", nil
	}
	return c.Level.String(), nil
}

// subjectCompatibility is the level the registry applies to subject: its
// own, else (the registry says it has none: 404) the global one. Any other
// failure is an error and no level: it used to show the global level, as
// if it were the subject's own.
func (r *Registry) subjectCompatibility(ctx context.Context, subject, global string) (string, error) {
	c := r.cl.Compatibility(ctx, subject)[0]
	switch {
	case c.Err == nil && c.Level.String() != "":
		return c.Level.String(), nil
	case c.Err == nil || IsNotFound(c.Err):
		return global, nil
	}
	return "", r.wrap("subject "+subject+" compatibility", c.Err)
}

// Version is one row of DESCRIBE SUBJECT.
type Version struct {
	Version    int
	ID         int
	Type       string
	Schema     string
	References []sr.SchemaReference
}

// Describe returns a subject's versions: all (version 0), the latest (-1),
// or the one asked for.
func (r *Registry) Describe(ctx context.Context, subject string, version int) ([]Version, error) {
	var versions []int
	if version != 0 {
		versions = []int{version}
	} else {
		vs, err := r.cl.SubjectVersions(ctx, subject)
		if err != nil {
			return nil, r.subjectError(Ref{Subject: subject}, err)
		}
		versions = vs
		sort.Ints(versions)
	}
	out := make([]Version, 0, len(versions))
	for _, v := range versions {
		ss, err := r.cl.SchemaByVersion(ctx, subject, v)
		if err != nil {
			return nil, r.subjectError(Ref{Subject: subject, Version: v}, err)
		}
		out = append(out, Version{Version: ss.Version, ID: ss.ID, Type: typeName(ss.Type), Schema: ss.Schema.Schema, References: ss.References})
	}
	return out, nil
}

// FormatReferences writes references as name=subject:version, one list.
func FormatReferences(refs []sr.SchemaReference) string {
	parts := make([]string, len(refs))
	for i, ref := range refs {
		parts[i] = fmt.Sprintf("%s=%s:%d", ref.Name, ref.Subject, ref.Version)
	}
	return strings.Join(parts, ", ")
}

// TopicSubjects are the subjects the default TopicNameStrategy maps a topic
// to: TOPIC-key and TOPIC-value.
func TopicSubjects(topic string) (key, value string) {
	return topic + "-key", topic + "-value"
}
