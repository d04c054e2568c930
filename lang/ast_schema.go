package lang

// The Schema Registry statements and PRODUCE's SCHEMA clauses (issue 10).
// Like the administration statements they live in their own files and
// meet the rest of the language only at the statement lists.
//
// Subjects are names in the registry, not in Kafka: they are read like
// topic names (bare, as payments-value or com.acme.Payment, or quoted) and
// printed quoted, 'payments-value'. Versions and schema ids are the
// registry's own numbers, 1 to 2147483647.

// ShowSubjects is SHOW SUBJECTS [LIKE 'glob'] Query: the registry's
// subjects, one row each (MetaColumns: subject, type, latest_version,
// latest_id, compatibility).
type ShowSubjects struct {
	Like *string // a glob over subject names, as SHOW TOPICS
	Query
}

// DescribeSubject is DESCRIBE SUBJECT name [VERSION n] Query (alias DESC):
// one row per version of the subject, oldest first, or only version n
// (MetaColumns: version, id, type, schema, references).
type DescribeSubject struct {
	Subject string
	Version int // 0: not written (every version); else 1 to 2147483647
	Query
}

// ShowSchemas is SHOW SCHEMAS FOR TOPIC name Query: the subjects the
// TopicNameStrategy maps the topic to, name-key and name-value
// (MetaColumns: side, subject, latest_version, latest_id, type).
type ShowSchemas struct {
	Topic string
	Query
}

// SchemaRef is the SCHEMA clause of PRODUCE's key or value: which
// registered schema encodes the literal (written as JSON text) into the
// Confluent wire format. The forms:
//
//	SCHEMA 'subject'             the subject's latest version
//	SCHEMA 'subject' VERSION n   that version of the subject
//	SCHEMA 'subject' ID n        schema id n, which should be registered under the subject
//	SCHEMA ID n                  schema id n, whatever its subjects
//
// and, for a Protobuf schema, MESSAGE name after any of them: the message
// (full name, or a name unique in the schema; nested ones too) the JSON
// text is written as.
//
// The parser guarantees: Subject != "" unless HasID; Version is 0 when
// HasID; HasID == (ID != 0).
type SchemaRef struct {
	Subject string // "": not written (only with ID)
	Version int    // 0: not written (the latest version, or the version of ID); else 1 to 2147483647
	ID      int    // the registry's schema id, 1 to 2147483647 when HasID; else 0
	HasID   bool   // ID n was written
	Message string // MESSAGE name; "": not written (the one top-level message the text fits)
}

func (*ShowSubjects) statement()    {}
func (*DescribeSubject) statement() {}
func (*ShowSchemas) statement()     {}
