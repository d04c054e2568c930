package lang

import (
	"strconv"
	"strings"
)

func formatUsers(sb *strings.Builder, s Statement) bool {
	switch s := s.(type) {
	case *ShowUsers:
		sb.WriteString("SHOW USERS")
		formatQuery(sb, &s.Query)
	case *CreateUser:
		sb.WriteString("CREATE USER " + QuoteName(s.User))
		formatUserOpts(sb, s.Mechanism, s.Iterations)
	case *AlterUser:
		sb.WriteString("ALTER USER " + QuoteName(s.User) + " PASSWORD")
		formatUserOpts(sb, s.Mechanism, s.Iterations)
	case *DropUser:
		sb.WriteString("DROP USER " + QuoteName(s.User))
		formatUserOpts(sb, s.Mechanism, 0)
	case *ShowQuotas:
		sb.WriteString("SHOW QUOTAS")
		if s.For != nil {
			sb.WriteString(" FOR ")
			formatQuotaEntity(sb, *s.For)
		}
		formatQuery(sb, &s.Query)
	case *AlterQuota:
		sb.WriteString("ALTER QUOTA FOR ")
		formatQuotaEntity(sb, s.Entity)
		if s.Set != nil {
			sb.WriteString(" SET (")
			for i, v := range s.Set {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(v.Key + " = " + strconv.FormatFloat(v.Value, 'f', -1, 64))
			}
			sb.WriteByte(')')
		}
		if s.Unset != nil {
			sb.WriteString(" UNSET (" + strings.Join(s.Unset, ", ") + ")")
		}
	default:
		return false
	}
	return true
}

func formatUserOpts(sb *strings.Builder, m ScramMechanism, iters int32) {
	if m != 0 {
		sb.WriteString(" MECHANISM " + m.String())
	}
	if iters != 0 {
		sb.WriteString(" ITERATIONS " + strconv.FormatInt(int64(iters), 10))
	}
}

func formatQuotaEntity(sb *strings.Builder, e QuotaEntity) {
	for i, p := range e.Parts {
		if i > 0 {
			sb.WriteByte(' ')
		}
		if p.Default {
			sb.WriteString("DEFAULT " + p.Kind.keyword())
			continue
		}
		sb.WriteString(p.Kind.keyword() + " " + QuoteName(p.Name))
	}
}
