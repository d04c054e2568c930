package lang

import (
	"strconv"
	"strings"
)

func formatSchema(sb *strings.Builder, s Statement) bool {
	switch s := s.(type) {
	case *ShowSubjects:
		sb.WriteString("SHOW SUBJECTS")
		formatLike(sb, s.Like)
		formatQuery(sb, &s.Query)
	case *DescribeSubject:
		sb.WriteString("DESCRIBE SUBJECT " + Quote([]byte(s.Subject)))
		if s.Version != 0 {
			sb.WriteString(" VERSION " + strconv.Itoa(s.Version))
		}
		formatQuery(sb, &s.Query)
	case *ShowSchemas:
		sb.WriteString("SHOW SCHEMAS FOR TOPIC " + QuoteName(s.Topic))
		formatQuery(sb, &s.Query)
	default:
		return false
	}
	return true
}

// schemaRefText writes a SCHEMA clause without its KEY or VALUE: SCHEMA
// 'subject' [VERSION n | ID n], or SCHEMA ID n, then any MESSAGE name.
// Subjects are always quoted.
func schemaRefText(r *SchemaRef) string {
	var sb strings.Builder
	sb.WriteString("SCHEMA")
	if r.Subject != "" {
		sb.WriteString(" " + Quote([]byte(r.Subject)))
	}
	if r.Version != 0 {
		sb.WriteString(" VERSION " + strconv.Itoa(r.Version))
	}
	if r.HasID {
		sb.WriteString(" ID " + strconv.Itoa(r.ID))
	}
	if r.Message != "" {
		sb.WriteString(" MESSAGE " + QuoteName(r.Message))
	}
	return sb.String()
}
