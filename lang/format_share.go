package lang

import "strings"

func formatShare(sb *strings.Builder, s Statement) bool {
	switch s := s.(type) {
	case *ShowShareGroups:
		sb.WriteString("SHOW SHARE GROUPS")
		formatLike(sb, s.Like)
		formatQuery(sb, &s.Query)
	case *DescribeShareGroup:
		sb.WriteString("DESCRIBE SHARE GROUP " + QuoteName(s.Group))
		formatQuery(sb, &s.Query)
	case *ResetShareGroup:
		// The clauses are RESET GROUP's, SHIFT BY aside.
		var g strings.Builder
		formatAdmin(&g, &ResetGroup{Group: s.Group, Topic: s.Topic, Partitions: s.Partitions, To: s.To, Execute: s.Execute})
		sb.WriteString("RESET SHARE " + strings.TrimPrefix(g.String(), "RESET "))
	case *DeleteShareGroup:
		sb.WriteString("DELETE SHARE GROUP " + QuoteName(s.Group))
		switch len(s.Topics) {
		case 0:
		case 1:
			sb.WriteString(" TOPIC " + QuoteName(s.Topics[0]))
		default:
			sb.WriteString(" TOPIC (")
			for i, t := range s.Topics {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(QuoteName(t))
			}
			sb.WriteByte(')')
		}
	default:
		return false
	}
	return true
}
