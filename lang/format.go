package lang

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Format prints s as canonical KafkaQL: upper-case keywords, names through
// QuoteName, literals through Quote, clauses in a fixed order, no ';'.
// For every statement Parse returns, Parse(Format(s)) equals s; the shell
// relies on this for the next-page statement, EXPLAIN and history.
func Format(s Statement) string {
	var sb strings.Builder
	format(&sb, s)
	return sb.String()
}

func format(sb *strings.Builder, s Statement) {
	switch s := s.(type) {
	case *ShowTopics:
		sb.WriteString("SHOW TOPICS")
		formatLike(sb, s.Like)
		formatQuery(sb, &s.Query)
	case *ShowGroups:
		sb.WriteString("SHOW GROUPS")
		formatLike(sb, s.Like)
		formatQuery(sb, &s.Query)
	case *ShowPartitions:
		sb.WriteString("SHOW PARTITIONS")
		if s.Topic != nil {
			sb.WriteString(" OF " + QuoteName(*s.Topic))
		}
		formatLike(sb, s.Like)
		formatQuery(sb, &s.Query)
	case *ShowBrokers:
		sb.WriteString("SHOW BROKERS")
		formatQuery(sb, &s.Query)
	case *ShowCluster:
		sb.WriteString("SHOW CLUSTER")
		formatQuery(sb, &s.Query)
	case *DescribeTopic:
		sb.WriteString("DESCRIBE TOPIC " + QuoteName(s.Topic))
		formatQuery(sb, &s.Query)
	case *DescribeGroup:
		sb.WriteString("DESCRIBE GROUP " + QuoteName(s.Group))
		formatQuery(sb, &s.Query)
	case *Consume:
		formatConsume(sb, s)
	case *Produce:
		formatProduce(sb, s)
	case *Insert:
		formatInsert(sb, s)
	case *CreateTopic:
		formatCreate(sb, s)
	case *DropTopic:
		sb.WriteString("DROP TOPIC ")
		if s.IfExists {
			sb.WriteString("IF EXISTS ")
		}
		sb.WriteString(QuoteName(s.Topic))
	case *Explain:
		sb.WriteString("EXPLAIN ")
		format(sb, s.Stmt)
	case nil:
	default:
		if !formatAdmin(sb, s) && !formatSchema(sb, s) && !formatACL(sb, s) && !formatUsers(sb, s) && !formatShare(sb, s) && !formatTxn(sb, s) && !formatOps(sb, s) {
			fmt.Fprintf(sb, "/* not a KafkaQL statement: %T */", s)
		}
	}
}

func formatLike(sb *strings.Builder, like *string) {
	if like != nil {
		sb.WriteString(" LIKE " + Quote([]byte(*like)))
	}
}

func formatConsume(sb *strings.Builder, c *Consume) {
	if c.Projection != nil {
		sb.WriteString("SELECT ")
		for i, it := range c.Projection {
			if i > 0 {
				sb.WriteString(", ")
			}
			formatExpr(sb, it.X, 0)
			if it.As != "" {
				sb.WriteString(" AS " + QuoteName(it.As))
			}
		}
		sb.WriteString(" FROM " + QuoteName(c.Topic))
	} else {
		sb.WriteString("CONSUME " + QuoteName(c.Topic))
	}
	if c.From != nil {
		sb.WriteString(" FROM ")
		formatStart(sb, c.From)
	}
	if c.Partitions != nil {
		sb.WriteString(" PARTITION ")
		if len(c.Partitions) == 1 {
			sb.WriteString(strconv.FormatInt(int64(c.Partitions[0]), 10))
		} else {
			sb.WriteByte('(')
			for i, p := range c.Partitions {
				if i > 0 {
					sb.WriteString(", ")
				}
				sb.WriteString(strconv.FormatInt(int64(p), 10))
			}
			sb.WriteByte(')')
		}
	}
	if c.PartitionForKey != nil {
		sb.WriteString(" PARTITION FOR KEY " + Quote(c.PartitionForKey))
	}
	if c.Where != nil {
		sb.WriteString(" WHERE ")
		formatExpr(sb, c.Where, 0)
	}
	if c.GroupBy != nil {
		sb.WriteString(" GROUP BY ")
		for i, g := range c.GroupBy {
			if i > 0 {
				sb.WriteString(", ")
			}
			formatExpr(sb, g, 0)
		}
	}
	formatOrderBy(sb, c.OrderBy)
	if c.Limit != nil {
		sb.WriteString(" LIMIT " + strconv.FormatInt(*c.Limit, 10))
	}
	if c.LimitAll {
		sb.WriteString(" LIMIT ALL")
	}
	if c.Skip != nil {
		sb.WriteString(" SKIP " + strconv.FormatInt(*c.Skip, 10))
	}
	if c.Follow {
		sb.WriteString(" FOLLOW")
	}
	formatLocalSchemas(sb, c.KeyAs, c.ValueAs)
}

func formatLocalSchemas(sb *strings.Builder, key, value *LocalSchema) {
	if key != nil {
		sb.WriteString(" KEY " + key.String())
	}
	if value != nil {
		sb.WriteString(" VALUE " + value.String())
	}
}

func formatStart(sb *strings.Builder, s *Start) {
	switch s.Kind {
	case FromOldest:
		sb.WriteString("OLDEST")
	case FromNewest:
		sb.WriteString("NEWEST")
	case FromOffset:
		sb.WriteString("OFFSET " + strconv.FormatInt(s.Offset, 10))
	case FromTimestamp:
		sb.WriteString("TIMESTAMP " + strconv.FormatInt(s.Timestamp, 10))
	case FromAgo:
		sb.WriteString(formatDuration(s.Ago) + " AGO")
	case FromTail, FromAnchor:
		if s.Kind == FromTail {
			sb.WriteString("TAIL (")
		} else {
			sb.WriteString("ANCHOR (")
		}
		for i, p := range s.Positions {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(sb, "%d:%d", p.Partition, p.Offset)
		}
		sb.WriteByte(')')
	default:
		fmt.Fprintf(sb, "/* unknown start kind %d */", s.Kind)
	}
}

// formatDuration writes d the way KafkaQL reads it: Go's form without the
// zero tails (15m, not 15m0s) and "us" for microseconds, which the lexer
// reads in ASCII.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return strings.Replace(s, "µs", "us", 1)
}

func formatLiteral(sb *strings.Builder, l *Literal) {
	if l.Null {
		sb.WriteString("NULL")
		return
	}
	sb.WriteString(Quote(l.Bytes))
}

func formatProduce(sb *strings.Builder, p *Produce) {
	sb.WriteString("PRODUCE INTO " + QuoteName(p.Topic))
	if p.Key != nil {
		sb.WriteString(" KEY ")
		formatLiteral(sb, p.Key)
	}
	if p.Value != nil {
		sb.WriteString(" VALUE ")
		formatLiteral(sb, p.Value)
	}
	if p.KeySchema != nil {
		sb.WriteString(" KEY " + schemaRefText(p.KeySchema))
	}
	if p.ValueSchema != nil {
		sb.WriteString(" VALUE " + schemaRefText(p.ValueSchema))
	}
	formatLocalSchemas(sb, p.KeyAs, p.ValueAs)
	if p.Partition != nil {
		sb.WriteString(" PARTITION " + strconv.FormatInt(int64(*p.Partition), 10))
	}
	for i := range p.Headers {
		h := &p.Headers[i]
		sb.WriteString(" HEADER " + QuoteName(h.Key) + " ")
		formatLiteral(sb, &h.Value)
	}
	if f := p.From; f != nil {
		if f.Stdin {
			sb.WriteString(" FROM STDIN")
		} else {
			sb.WriteString(" FROM FILE " + Quote([]byte(f.File)))
		}
		sb.WriteString(" FORMAT " + f.Format)
		if f.KeyDelimiter != nil {
			sb.WriteString(" KEY DELIMITER " + Quote([]byte(*f.KeyDelimiter)))
		}
		if f.KeepPartition {
			sb.WriteString(" KEEP PARTITION")
		}
		if f.StampNow {
			sb.WriteString(" TIMESTAMP NOW")
		}
	}
}

func formatCreate(sb *strings.Builder, c *CreateTopic) {
	sb.WriteString("CREATE TOPIC " + QuoteName(c.Topic))
	if c.Partitions != nil {
		sb.WriteString(" PARTITIONS " + strconv.FormatInt(int64(*c.Partitions), 10))
	}
	if c.Replication != nil {
		sb.WriteString(" REPLICATION " + strconv.FormatInt(int64(*c.Replication), 10))
	}
	if len(c.Configs) > 0 {
		sb.WriteString(" WITH (")
		for i, cfg := range c.Configs {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(QuoteName(cfg.Name) + " = " + Quote([]byte(cfg.Value)))
		}
		sb.WriteByte(')')
	}
}

func formatInsert(sb *strings.Builder, in *Insert) {
	sb.WriteString("INSERT INTO ")
	if in.TopicExpr != nil {
		sb.WriteString("TOPIC " + FormatExpr(in.TopicExpr))
	} else {
		sb.WriteString(QuoteName(in.Topic))
	}
	if in.KeepPartition {
		sb.WriteString(" KEEP PARTITION")
	}
	if in.KeepTimestamp {
		sb.WriteString(" KEEP TIMESTAMP")
	}
	if in.StampNow {
		sb.WriteString(" TIMESTAMP NOW")
	}
	sel := Format(in.Select)
	if rest, ok := strings.CutPrefix(sel, "CONSUME "); ok {
		sel = "SELECT * FROM " + rest // INSERT takes a SELECT; a plain read formats as CONSUME
	}
	sb.WriteString(" " + sel)
	if in.Execute {
		sb.WriteString(" EXECUTE")
	}
}
