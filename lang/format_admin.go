package lang

import (
	"strconv"
	"strings"
)

func formatAdmin(sb *strings.Builder, s Statement) bool {
	switch s := s.(type) {
	case *ShowConfigs:
		sb.WriteString("SHOW CONFIGS FOR ")
		formatResource(sb, s.Resource)
		if s.All {
			sb.WriteString(" ALL")
		}
		formatQuery(sb, &s.Query)
	case *AlterConfigs:
		sb.WriteString("ALTER ")
		formatResource(sb, s.Resource)
		if s.Set != nil {
			sb.WriteString(" SET (")
			for i, cfg := range s.Set {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(QuoteName(cfg.Name) + " = " + Quote([]byte(cfg.Value)))
			}
			sb.WriteByte(')')
		}
		if s.Unset != nil {
			sb.WriteString(" UNSET (")
			for i, n := range s.Unset {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(QuoteName(n))
			}
			sb.WriteByte(')')
		}
	case *AlterPartitions:
		sb.WriteString("ALTER TOPIC " + QuoteName(s.Topic) + " PARTITIONS " + strconv.FormatInt(int64(s.Count), 10))
	case *ResetGroup:
		sb.WriteString("RESET GROUP " + QuoteName(s.Group))
		if s.Topic != nil {
			sb.WriteString(" TOPIC " + QuoteName(*s.Topic))
		}
		formatPartitionList(sb, s.Partitions)
		sb.WriteString(" TO ")
		switch s.To.Kind {
		case ResetEarliest:
			sb.WriteString("EARLIEST")
		case ResetLatest:
			sb.WriteString("LATEST")
		case ResetOffset:
			sb.WriteString("OFFSET " + strconv.FormatInt(s.To.Offset, 10))
		case ResetTimestamp:
			sb.WriteString("TIMESTAMP " + strconv.FormatInt(s.To.Timestamp, 10))
		case ResetAgo:
			sb.WriteString(formatDuration(s.To.Ago) + " AGO")
		case ResetShift:
			sb.WriteString("SHIFT BY " + strconv.FormatInt(s.To.Shift, 10))
		}
		if s.Execute {
			sb.WriteString(" EXECUTE")
		}
	case *DeleteGroup:
		sb.WriteString("DELETE GROUP " + QuoteName(s.Group))
	case *DeleteRecords:
		sb.WriteString("DELETE RECORDS FROM " + QuoteName(s.Topic) + " BEFORE ")
		if s.BeforeOffset != nil {
			sb.WriteString("OFFSET " + strconv.FormatInt(*s.BeforeOffset, 10))
			formatPartitionList(sb, s.Partitions)
		} else {
			sb.WriteByte('(')
			for i, p := range s.Before {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(strconv.FormatInt(int64(p.Partition), 10) + ":" + strconv.FormatInt(p.Offset, 10))
			}
			sb.WriteByte(')')
		}
		if s.Execute {
			sb.WriteString(" EXECUTE")
		}
	default:
		return false
	}
	return true
}

func formatResource(sb *strings.Builder, r ConfigResource) {
	switch r.Kind {
	case ResourceTopic:
		sb.WriteString("TOPIC " + QuoteName(r.Topic))
	case ResourceBroker:
		sb.WriteString("BROKER " + strconv.FormatInt(int64(r.Broker), 10))
	default:
		sb.WriteString("CLUSTER")
	}
}

func formatPartitionList(sb *strings.Builder, parts []int32) {
	if parts == nil {
		return
	}
	sb.WriteString(" PARTITION ")
	if len(parts) == 1 {
		sb.WriteString(strconv.FormatInt(int64(parts[0]), 10))
		return
	}
	sb.WriteByte('(')
	for i, p := range parts {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(strconv.FormatInt(int64(p), 10))
	}
	sb.WriteByte(')')
}
