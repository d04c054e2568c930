package lang

import (
	"strconv"
	"strings"
)

func formatOps(sb *strings.Builder, s Statement) bool {
	execute := func(on bool) {
		if on {
			sb.WriteString(" EXECUTE")
		}
	}
	switch s := s.(type) {
	case *ShowLogDirs:
		sb.WriteString("SHOW LOG DIRS")
		if s.Broker != nil {
			sb.WriteString(" FOR BROKER " + strconv.Itoa(int(*s.Broker)))
		}
		formatQuery(sb, &s.Query)
	case *ShowReassignments:
		sb.WriteString("SHOW REASSIGNMENTS")
		formatQuery(sb, &s.Query)
	case *ShowQuorum:
		sb.WriteString("SHOW QUORUM")
		formatQuery(sb, &s.Query)
	case *ShowFeatures:
		sb.WriteString("SHOW FEATURES")
		formatQuery(sb, &s.Query)
	case *AlterReplicas:
		sb.WriteString("ALTER TOPIC " + QuoteName(s.Topic) + " PARTITION " + strconv.Itoa(int(s.Partition)) + " REPLICAS (")
		for i, b := range s.Replicas {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(strconv.Itoa(int(b)))
		}
		sb.WriteByte(')')
		execute(s.Execute)
	case *CancelReassignment:
		sb.WriteString("CANCEL REASSIGNMENT ON TOPIC " + QuoteName(s.Topic) + " PARTITION " + strconv.Itoa(int(s.Partition)))
		execute(s.Execute)
	case *ElectLeaders:
		kind := "PREFERRED"
		if s.Unclean {
			kind = "UNCLEAN"
		}
		sb.WriteString("ELECT LEADERS " + kind)
		if s.Topic != nil {
			sb.WriteString(" FOR TOPIC " + QuoteName(*s.Topic))
		}
		formatPartitionList(sb, s.Partitions)
		execute(s.Execute)
	default:
		return false
	}
	return true
}
