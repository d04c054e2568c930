package lang

import (
	"strconv"
	"strings"
)

func formatTxn(sb *strings.Builder, s Statement) bool {
	switch s := s.(type) {
	case *ShowTransactions:
		sb.WriteString("SHOW TRANSACTIONS")
		formatQuery(sb, &s.Query)
	case *DescribeTransaction:
		sb.WriteString("DESCRIBE TRANSACTION " + QuoteName(s.ID))
		formatQuery(sb, &s.Query)
	case *ShowHangingTransactions:
		sb.WriteString("SHOW HANGING TRANSACTIONS")
		if s.Topic != nil {
			sb.WriteString(" ON TOPIC " + QuoteName(*s.Topic))
		}
		if s.OlderThan != nil {
			sb.WriteString(" OLDER THAN " + formatDuration(*s.OlderThan))
		}
		formatQuery(sb, &s.Query)
	case *AbortTransaction:
		sb.WriteString("ABORT TRANSACTION ON TOPIC " + QuoteName(s.Topic) +
			" PARTITION " + strconv.FormatInt(int64(s.Partition), 10) +
			" PRODUCER " + strconv.FormatInt(s.ProducerID, 10) +
			" EPOCH " + strconv.FormatInt(int64(s.ProducerEpoch), 10))
		if s.Execute {
			sb.WriteString(" EXECUTE")
		}
	default:
		return false
	}
	return true
}
