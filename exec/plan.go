package exec

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
)

// The plan of a record statement (CONSUME, SELECT, aggregates, FOLLOW):
// everything the statement will do, decided once, with no I/O, from the
// parsed statement, the topic's metadata and what the registry said about
// a PARTITION FOR KEY key. Execution (consume.go) runs it and EXPLAIN
// prints it, so the two cannot disagree about partitions, bounds, the
// ListOffsets and Fetch steps, defaults or pushdown.

// consumePlan is a planned record statement.
type consumePlan struct {
	// stmt is the statement as it reads: PARTITION FOR KEY resolved into
	// the one partition it names (PARTITION n), which the next page and
	// FOLLOW's look for new partitions keep.
	stmt  *lang.Consume
	topic string
	now   time.Time // what AGO and WHERE's time literals count back from

	// The source: the partitions read, and why.
	parts        []kafka.TopicPartition
	keyPartition *int32 // PARTITION FOR KEY: the partition the key hashes to
	pd           *pushdown

	// Where each partition starts and ends. from is the start written or
	// defaulted; tail is a read back from each partition's end (FROM
	// NEWEST, FROM TAIL), else the read goes forward from the start.
	from       *lang.Start
	fromWhy    string
	tail       bool
	fromMs     *int64      // FROM TIMESTAMP / AGO: the start's time
	boundSteps []boundStep // the ListOffsets steps, in the order they run
	keyScan    bool        // a tail read with WHERE: a backward scan of keys first
	// keyScanIfMore: a tail read without WHERE scans keys too (to cut the
	// page by position) unless the partitions hold no more than LIMIT
	// records and there is no SKIP, which only the bounds tell.
	keyScanIfMore bool
	wholeRange    bool // aggregates and ORDER BY read every record of the range
	follow        bool
	keyHow        string // PARTITION FOR KEY: how the key was hashed (EXPLAIN's note)

	// Rows. limit and skip are what the scan counts (matches); outLimit
	// and outSkip what the statement returns (aggregates and ORDER BY
	// count their own rows, as SQL's LIMIT and OFFSET).
	limit, skip       int64
	outLimit, outSkip int64
	limitWhy          string

	ops []planOp // the operator chain, scan first
}

// boundKind is one ListOffsets step of the bounds.
type boundKind int

const (
	boundEnds     boundKind = iota + 1 // earliest and last stable offset, concurrently
	boundPushFrom                      // WHERE timestamp >= ...: each partition's start by time
	boundPushTo                        // WHERE timestamp < ...: each partition's end by time
	boundFromTime                      // FROM TIMESTAMP / AGO: each partition's start by time
)

// boundStep is one step of resolving the partitions' bounds: one
// ListOffsets per leader broker (two for boundEnds).
type boundStep struct {
	kind boundKind
	ms   int64 // the time asked for, for the steps by time
}

func (b boundStep) String() string {
	switch b.kind {
	case boundEnds:
		return "earliest and last stable offset"
	case boundPushFrom:
		return fmt.Sprintf("first offset at or after %s (WHERE's lower time bound)", fmtMs(b.ms))
	case boundPushTo:
		return fmt.Sprintf("first offset at or after %s (WHERE's upper time bound)", fmtMs(b.ms))
	case boundFromTime:
		return fmt.Sprintf("first offset at or after %s (FROM)", fmtMs(b.ms))
	}
	return "?"
}

func fmtMs(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// planOp is one operator of the chain and what it does.
type planOp struct {
	name   string // Scan, Decode, Filter, Project, Aggregate, TopK, Skip/Limit, Follow
	detail string
}

// planInput is what planning reads besides the statement: the topic's
// metadata, the time now (AGO), and, for PARTITION FOR KEY, the key's
// bytes as its producers wrote them (the registry or a local schema
// encoded them; nil without PARTITION FOR KEY).
type planInput struct {
	topic    *kafka.Topic
	now      time.Time
	keyBytes []byte
	keyHow   string // how the key was hashed, for EXPLAIN's note
}

var errWholeRangeFromEnd = errors.New("aggregates and ORDER BY read the whole range from a start: use FROM OLDEST, FROM OFFSET, FROM TIMESTAMP or FROM ... AGO, not FROM NEWEST or FROM TAIL")

// planConsume plans st: pure, no I/O.
func planConsume(st *lang.Consume, in planInput) (*consumePlan, error) {
	t := in.topic
	pl := &consumePlan{stmt: st, topic: st.Topic, now: in.now, follow: st.Follow}
	if st.PartitionForKey != nil {
		// The partition the default partitioner (murmur2: the Java
		// client, franz-go, kql's PRODUCE) puts this key in.
		if len(t.Partitions) == 0 {
			return nil, fmt.Errorf("topic %q has no partitions", st.Topic)
		}
		p := kafka.PartitionForKey(st.Topic, in.keyBytes, len(t.Partitions))
		pl.keyPartition = &p
		cp := *st
		cp.Partitions = []int32{p}
		pl.stmt = &cp
	}
	parts, err := selectPartitions(t, pl.stmt)
	if err != nil {
		return nil, err
	}
	pl.pd = analyzePushdown(st.Where, in.now)
	if pl.pd.partitions != nil {
		parts = slices.DeleteFunc(parts, func(tp kafka.TopicPartition) bool { return !slices.Contains(pl.pd.partitions, tp.Partition) })
	}
	pl.parts = parts
	pl.planRows(st)
	if pl.wholeRange && pl.tail {
		return nil, errWholeRangeFromEnd
	}
	pl.planBounds(in.now)
	pl.keyScan = tailScans(st)
	pl.keyScanIfMore = pl.tail && !pl.keyScan && !pl.wholeRange && (pl.skip > 0 || pl.limit != math.MaxInt64)
	pl.keyHow = in.keyHow
	pl.planOps(st)
	return pl, nil
}

// planRows decides the start and how many rows: the defaults of FROM,
// LIMIT and FOLLOW.
func (pl *consumePlan) planRows(st *lang.Consume) {
	pl.limit, pl.limitWhy = DefaultLimit, fmt.Sprintf("%d rows, the browsing default (no LIMIT written)", DefaultLimit)
	switch {
	case st.Limit != nil:
		pl.limit, pl.limitWhy = *st.Limit, fmt.Sprintf("LIMIT %d", *st.Limit)
	case st.LimitAll:
		pl.limit, pl.limitWhy = math.MaxInt64, "LIMIT ALL"
	}
	if st.Skip != nil {
		pl.skip = *st.Skip
	}
	pl.from, pl.fromWhy = st.From, "FROM "+formatStart(st.From)
	if pl.from == nil {
		pl.from, pl.fromWhy = &lang.Start{Kind: lang.FromOldest}, "FROM OLDEST, the default"
		if st.Follow {
			// Like tail -f: the last records, then what comes.
			pl.from, pl.fromWhy = &lang.Start{Kind: lang.FromNewest}, "FROM NEWEST, FOLLOW's default (like tail -f)"
		}
	}
	pl.tail = pl.from.Kind == lang.FromNewest || pl.from.Kind == lang.FromTail
	if st.Follow {
		if pl.tail {
			if st.Limit == nil {
				pl.limit, pl.limitWhy = DefaultFollowBacklog, fmt.Sprintf("%d rows of backlog, FOLLOW's default (no LIMIT written)", DefaultFollowBacklog)
			}
		} else {
			// A forward read shows everything up to now first.
			pl.limit, pl.limitWhy = math.MaxInt64, "every record up to now, then each new one (FOLLOW from a forward start)"
		}
	}
	pl.outLimit, pl.outSkip = pl.limit, pl.skip
	if st.HasAggregates() || st.OrderBy != nil {
		// They read the whole range; LIMIT applies to what they return.
		pl.wholeRange = true
		pl.limit, pl.skip = math.MaxInt64, 0
	}
}

// planBounds lists the ListOffsets steps, in the order execution runs
// them: both ends, then WHERE's time bounds, then a start by time.
func (pl *consumePlan) planBounds(now time.Time) {
	pl.boundSteps = []boundStep{{kind: boundEnds}}
	if pl.pd.fromMs != nil {
		pl.boundSteps = append(pl.boundSteps, boundStep{boundPushFrom, *pl.pd.fromMs})
	}
	if pl.pd.toMs != nil {
		pl.boundSteps = append(pl.boundSteps, boundStep{boundPushTo, *pl.pd.toMs})
	}
	switch pl.from.Kind {
	case lang.FromTimestamp, lang.FromAgo:
		ms := pl.from.Timestamp
		if pl.from.Kind == lang.FromAgo {
			ms = now.Add(-pl.from.Ago).UnixMilli()
		}
		pl.fromMs = &ms
		pl.boundSteps = append(pl.boundSteps, boundStep{boundFromTime, ms})
	}
}

// planOps builds the operator chain.
func (pl *consumePlan) planOps(st *lang.Consume) {
	add := func(name, detail string) { pl.ops = append(pl.ops, planOp{name, detail}) }
	add("Scan", pl.scanDetail())
	add("Decode", "key and value: a local schema, the registry's wire format, or the bytes as they are")
	if st.Where != nil {
		add("Filter", "WHERE "+lang.FormatExpr(st.Where)+" on every record read")
	}
	switch {
	case st.HasAggregates():
		limits := "then LIMIT limits the groups"
		if st.Skip != nil {
			limits = "then SKIP and LIMIT skip and limit the groups"
		}
		add("Aggregate", "reads the whole range, "+limits+" (at most 100000 groups)")
	case st.OrderBy != nil:
		keeps := "keeps the first LIMIT rows by ORDER BY"
		if st.Skip != nil {
			keeps = "keeps the first SKIP + LIMIT rows by ORDER BY, then leaves out the first SKIP"
		}
		add("TopK", "reads the whole range, "+keeps)
	case st.Projection != nil:
		add("Project", "builds a row of the SELECT list for each match")
	}
	lim := pl.limitWhy
	if pl.outSkip > 0 {
		lim = fmt.Sprintf("SKIP %d, then %s", pl.outSkip, lim)
	}
	if pl.wholeRange {
		lim += " of the " + map[bool]string{true: "groups", false: "sorted rows"}[st.HasAggregates()]
	} else if pl.tail {
		lim += ", the newest matches"
	}
	add("Skip/Limit", lim)
	if st.Follow {
		add("Follow", "then Fetch from where the read ended in each partition, waiting up to 500 ms per Fetch for new records, one request per leader broker; Metadata every 5 s for new partitions, read from their start")
	}
}

func (pl *consumePlan) scanDetail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s partitions %s", pl.topic, partitionList(pl.parts))
	var why []string
	if pl.keyPartition != nil {
		why = append(why, fmt.Sprintf("PARTITION FOR KEY: partition %d", *pl.keyPartition))
	} else if pl.stmt.Partitions != nil {
		why = append(why, "PARTITION")
	}
	if pl.pd.partitions != nil {
		why = append(why, "WHERE partition")
	}
	if len(why) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(why, ", "))
	}
	dir := "forward"
	if pl.tail {
		dir = "back from each partition's last stable offset"
	}
	fmt.Fprintf(&b, "; %s, %s", pl.fromWhy, dir)
	if pl.pd.minOffset != math.MinInt64 {
		fmt.Fprintf(&b, "; offsets from %d", pl.pd.minOffset)
	}
	if pl.pd.maxOffset != math.MaxInt64 {
		fmt.Fprintf(&b, "; offsets below %d", pl.pd.maxOffset)
	}
	if pl.pd.fromMs != nil {
		fmt.Fprintf(&b, "; timestamps from %s", fmtMs(*pl.pd.fromMs))
	}
	if pl.pd.toMs != nil {
		fmt.Fprintf(&b, "; timestamps below %s", fmtMs(*pl.pd.toMs))
	}
	b.WriteString("; each partition ends at its last stable offset when the read begins (read_committed)")
	return b.String()
}

// partitionList names partitions compactly: 0-5, or 0, 2, 4.
func partitionList(tps []kafka.TopicPartition) string {
	if len(tps) == 0 {
		return "none"
	}
	run := true
	for i, tp := range tps {
		if tp.Partition != tps[0].Partition+int32(i) {
			run = false
		}
	}
	if run && len(tps) > 1 {
		return fmt.Sprintf("%d-%d", tps[0].Partition, tps[len(tps)-1].Partition)
	}
	ids := make([]string, len(tps))
	for i, tp := range tps {
		ids[i] = fmt.Sprint(tp.Partition)
	}
	return strings.Join(ids, ", ")
}

// formatStart writes a FROM clause as the statement would.
func formatStart(s *lang.Start) string {
	if s == nil {
		return ""
	}
	positions := func() string {
		ps := make([]string, len(s.Positions))
		for i, po := range s.Positions {
			ps[i] = fmt.Sprintf("%d:%d", po.Partition, po.Offset)
		}
		return "(" + strings.Join(ps, ", ") + ")"
	}
	switch s.Kind {
	case lang.FromOldest:
		return "OLDEST"
	case lang.FromNewest:
		return "NEWEST"
	case lang.FromOffset:
		return fmt.Sprintf("OFFSET %d", s.Offset)
	case lang.FromTimestamp:
		return "TIMESTAMP " + fmtMs(s.Timestamp)
	case lang.FromAgo:
		return s.Ago.String() + " AGO"
	case lang.FromTail:
		return "TAIL " + positions()
	case lang.FromAnchor:
		return "ANCHOR " + positions()
	}
	return "?"
}

// explainReads lists the requests of the plan's read, step by step, as
// execution sends them: the bound steps (both ends in one step), the
// backward key scan of a tail read with WHERE, then the Fetch of the rows.
func explainReads(p *planner, m *kafka.Metadata, pl *consumePlan) {
	for _, step := range pl.boundSteps {
		if step.kind == boundEnds {
			// Both ends in one step, concurrently.
			p.leadersLabelled("ListOffsets", "earliest offset", m, pl.parts, false)
			p.leadersLabelled("ListOffsets", "last stable offset", m, pl.parts, true)
			continue
		}
		p.leadersLabelled("ListOffsets", step.String(), m, pl.parts, false)
	}
	switch {
	case pl.keyScan:
		p.leaders("Fetch", m, pl.parts) // the key scan, backwards from the end
	case pl.keyScanIfMore:
		label := fmt.Sprintf("the (timestamp, offset) of the last %s positions, only if the partitions hold more than %s records", pl.skipLimitText(), pl.limitText())
		if pl.skip > 0 {
			label = fmt.Sprintf("the (timestamp, offset) of the last %s positions (SKIP)", pl.skipLimitText())
		}
		p.leadersLabelled("Fetch", label, m, pl.parts, false)
	}
	p.leaders("Fetch", m, pl.parts)
}

// limitText is the scan's LIMIT as EXPLAIN writes it.
func (pl *consumePlan) limitText() string {
	if pl.limit == math.MaxInt64 {
		return "ALL"
	}
	return fmt.Sprint(pl.limit)
}

// skipLimitText is SKIP + LIMIT, what a tail read's key scan looks for.
func (pl *consumePlan) skipLimitText() string {
	if pl.limit == math.MaxInt64 || pl.skip == 0 {
		return pl.limitText()
	}
	return fmt.Sprint(pl.limit + pl.skip)
}
