package exec

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

var showConfigsCols = []result.Column{
	col("name", result.String), col("value", result.String), col("source", result.String),
	col("sensitive", result.Bool), col("read_only", result.Bool),
}

var alterCols = []result.Column{
	col("resource", result.String), col("name", result.String),
	col("old_value", result.String), col("new_value", result.String),
}

func configResource(r lang.ConfigResource) kafka.ConfigResource {
	switch r.Kind {
	case lang.ResourceTopic:
		return kafka.ConfigResource{Kind: kafka.TopicResource, Topic: r.Topic}
	case lang.ResourceBroker:
		return kafka.ConfigResource{Kind: kafka.BrokerResource, Broker: r.Broker}
	}
	return kafka.ConfigResource{Kind: kafka.ClusterResource}
}

// resourceLabel is the resource column of ALTER: topic orders, broker 1, cluster.
func resourceLabel(r lang.ConfigResource) string {
	switch r.Kind {
	case lang.ResourceTopic:
		return "topic " + r.Topic
	case lang.ResourceBroker:
		return "broker " + strconv.Itoa(int(r.Broker))
	}
	return "cluster"
}

// ownSource is the source of a value set on the resource itself: what
// SHOW CONFIGS lists without ALL, and what UNSET removes.
func ownSource(k lang.ResourceKind) kafka.ConfigSource {
	switch k {
	case lang.ResourceTopic:
		return kafka.SourceDynamicTopicConfig
	case lang.ResourceBroker:
		return kafka.SourceDynamicBrokerConfig
	}
	return kafka.SourceDynamicDefaultBrokerConfig
}

// notDefault decides what SHOW CONFIGS lists without ALL, as
// kafka-configs.sh --describe does: a topic's own overrides; for a broker,
// everything not at Kafka's built-in default (server.properties and dynamic
// values); for the cluster, the dynamic cluster-wide defaults.
func notDefault(k lang.ResourceKind, src kafka.ConfigSource) bool {
	switch k {
	case lang.ResourceTopic:
		return src == kafka.SourceDynamicTopicConfig
	case lang.ResourceBroker:
		return src != kafka.SourceDefaultConfig && src != kafka.SourceUnknown
	}
	return src == kafka.SourceDynamicDefaultBrokerConfig
}

func (s *Session) showConfigs(ctx context.Context, st *lang.ShowConfigs) (result.Result, error) {
	entries, err := s.cl.DescribeConfigs(ctx, configResource(st.Resource))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b kafka.ConfigEntry) int {
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	})
	rows := make([]result.Row, 0, len(entries))
	for _, e := range entries {
		if !st.All && !notDefault(st.Resource.Kind, e.Source) {
			continue
		}
		var v any
		if e.Value != nil && !e.Sensitive {
			v = *e.Value
		}
		rows = append(rows, result.Row{e.Name, v, e.Source.String(), e.Sensitive, e.ReadOnly})
	}
	return result.NewSlice(showConfigsCols, rows), nil
}

// sensitiveName guards values the broker cannot describe (an unknown name,
// a cluster default not set yet): a name that looks like a secret is never
// echoed either. Kafka types some configs PASSWORD whose names say nothing
// of a password: the PEM certificates of ssl.keystore.certificate.chain and
// ssl.truststore.certificates (KIP-651), and private-key passphrases.
// Compiled on first use, not at every start.
var sensitiveName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)password|passphrase|secret|jaas|credential|certificate|private|\.key$|token`)
})

// SecretConfig reports whether a config's value is never echoed, whatever
// the broker says of it: by its name alone, before any broker was asked.
func SecretConfig(name string) bool { return sensitiveName().MatchString(name) }

// Redacted returns stmt for showing to a person (the text that names a
// failed statement): an ALTER ... SET whose configs are secrets gets a
// copy with those values hidden; every other statement is returned as is.
func Redacted(stmt lang.Statement) lang.Statement {
	st, ok := stmt.(*lang.AlterConfigs)
	if !ok {
		return stmt
	}
	var cp *lang.AlterConfigs
	for i, c := range st.Set {
		if !SecretConfig(c.Name) {
			continue
		}
		if cp == nil {
			c := *st
			c.Set = slices.Clone(st.Set)
			cp = &c
		}
		cp.Set[i].Value = hidden
	}
	if cp == nil {
		return stmt
	}
	return cp
}

// hidden is what ALTER shows instead of a sensitive value.
const hidden = "(sensitive, not shown)"

// configSettle bounds the wait until an altered config reads back.
const configSettle = 10 * time.Second

func (s *Session) alterConfigs(ctx context.Context, st *lang.AlterConfigs) (result.Result, error) {
	r := configResource(st.Resource)
	before, err := s.cl.DescribeConfigs(ctx, r)
	if err != nil {
		return nil, err
	}
	var ops []kafka.AlterOp
	for _, c := range st.Set {
		v := c.Value
		ops = append(ops, kafka.AlterOp{Name: c.Name, Value: &v})
	}
	for _, n := range st.Unset {
		ops = append(ops, kafka.AlterOp{Name: n})
	}
	if err := s.cl.AlterConfigs(ctx, r, ops); err != nil {
		// The broker's message usually names the config it refused; when
		// it does not (kfake, an old broker), name what was asked.
		named := false
		for _, op := range ops {
			named = named || strings.Contains(err.Error(), op.Name)
		}
		if !named {
			return nil, fmt.Errorf("%s: nothing was changed: %w (the change was %s)", alterWhat(st), err, describeOps(ops))
		}
		return nil, fmt.Errorf("%s: nothing was changed: %w", alterWhat(st), err)
	}
	// The broker that took the change may answer before every broker's
	// view has it: read back until the change shows, within a bound.
	old := index(before)
	after, settled := s.readBack(ctx, st, r, old)
	now := index(after)
	rows := make([]result.Row, 0, len(ops))
	for _, op := range ops {
		o, n := old[op.Name], now[op.Name]
		secret := sensitiveName().MatchString(op.Name) || o.Sensitive || n.Sensitive
		rows = append(rows, result.Row{resourceLabel(st.Resource), op.Name, shown(o, secret), shown(n, secret)})
	}
	res := result.NewSlice(alterCols, rows)
	if !settled {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: the change was accepted, but after %s %s did not yet read back as changed; new_value is what it read", configSettle, r))
	}
	return res, nil
}

func describeOps(ops []kafka.AlterOp) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		switch {
		case op.Value == nil:
			parts[i] = "UNSET " + op.Name
		case sensitiveName().MatchString(op.Name):
			parts[i] = op.Name + " = " + hidden
		default:
			parts[i] = op.Name + " = " + lang.Quote([]byte(*op.Value))
		}
	}
	return strings.Join(parts, ", ")
}

func alterWhat(st *lang.AlterConfigs) string {
	switch st.Resource.Kind {
	case lang.ResourceTopic:
		return fmt.Sprintf("ALTER TOPIC %q", st.Resource.Topic)
	case lang.ResourceBroker:
		return fmt.Sprintf("ALTER BROKER %d", st.Resource.Broker)
	}
	return "ALTER CLUSTER"
}

// readBack reads r's configs until the change shows. A SET shows when the
// value reads back as asked, in the broker's spelling (it trims a number
// and drops the blanks around a list's commas), or when the config is now
// the resource's own with a value other than before; an UNSET when the
// config is no longer the resource's own and its value has moved.
func (s *Session) readBack(ctx context.Context, st *lang.AlterConfigs, r kafka.ConfigResource, before map[string]kafka.ConfigEntry) ([]kafka.ConfigEntry, bool) {
	own := ownSource(st.Resource.Kind)
	return readUntil(ctx, configSettle, func() ([]kafka.ConfigEntry, bool, error) {
		entries, err := s.cl.DescribeConfigs(ctx, r)
		if err != nil {
			return nil, false, err
		}
		now := index(entries)
		done := true
		for _, c := range st.Set {
			e, ok := now[c.Name]
			if ok && e.Sensitive {
				continue // there is no value to compare with
			}
			if !ok || e.Value == nil {
				done = false
				continue
			}
			was := before[c.Name]
			// A broker can report the new source before the new value
			// (the dynamic config is stored before it is applied), so
			// the value itself must have moved.
			changed := e.Source == own && (was.Value == nil || *was.Value != *e.Value)
			if !changed && canonicalValue(*e.Value) != canonicalValue(c.Value) {
				done = false
			}
		}
		for _, n := range st.Unset {
			e, ok := now[n]
			if ok && e.Source == own {
				done = false
				continue
			}
			// As for SET, the source can change before the value:
			// an override gone shows when its value has gone too
			// (an override equal to the default reads back only at
			// the deadline, with the notice below).
			if was, wasOwn := before[n]; ok && wasOwn && was.Source == own && !e.Sensitive &&
				was.Value != nil && e.Value != nil && *was.Value == *e.Value {
				done = false
			}
		}
		return entries, done, nil
	})
}

// readUntil reads until read says the change shows, or bound passes, or
// ctx ends: a broker may answer before it has applied a change it
// forwarded. It returns the last answer read and whether it showed.
func readUntil[T any](ctx context.Context, bound time.Duration, read func() (T, bool, error)) (T, bool) {
	deadline := time.Now().Add(bound)
	var last T
	for {
		now, done, err := read()
		if err == nil {
			last = now
			if done {
				return now, true
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return last, false
		}
		select {
		case <-ctx.Done():
			return last, false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// canonicalValue spells a config value as brokers store it: trimmed, and a
// list without blanks around its commas.
func canonicalValue(v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return strings.Join(parts, ",")
}

func index(entries []kafka.ConfigEntry) map[string]kafka.ConfigEntry {
	m := make(map[string]kafka.ConfigEntry, len(entries))
	for _, e := range entries {
		m[e.Name] = e
	}
	return m
}

// shown is a config's value for the ALTER result: NULL when the resource
// has no value for it (a cluster default not set), a marker when secret.
func shown(e kafka.ConfigEntry, secret bool) any {
	if e.Name == "" {
		if secret {
			return hidden
		}
		return nil
	}
	if secret {
		return hidden
	}
	if e.Value == nil {
		return nil
	}
	return *e.Value
}

func (s *Session) alterPartitions(ctx context.Context, st *lang.AlterPartitions) (result.Result, error) {
	m, err := s.cl.Metadata(ctx, []string{st.Topic})
	if err != nil {
		return nil, err
	}
	cur := int32(len(m.Topics[st.Topic].Partitions))
	switch {
	case st.Count < cur:
		return nil, fmt.Errorf("ALTER TOPIC %q PARTITIONS %d: the topic has %d partitions, and Kafka can only add partitions, never remove them", st.Topic, st.Count, cur)
	case st.Count == cur:
		return nil, fmt.Errorf("ALTER TOPIC %q PARTITIONS %d: the topic already has %d partitions", st.Topic, st.Count, cur)
	}
	if _, err := s.cl.CreatePartitions(ctx, st.Topic, st.Count); err != nil {
		return nil, fmt.Errorf("ALTER TOPIC %q PARTITIONS %d: %w", st.Topic, st.Count, err)
	}
	s.forgetNames()
	res := result.NewSlice(alterCols, []result.Row{{"topic " + st.Topic, "partitions", strconv.Itoa(int(cur)), strconv.Itoa(int(st.Count))}})
	res.Notes = append(res.Notes, fmt.Sprintf("notice: keys now map to other partitions: a key's partition is its hash modulo %d, no longer modulo %d, so new records of an existing key may land in another partition than its earlier ones (per-key order holds only within a partition)", st.Count, cur))
	if !s.cl.WaitPartitions(ctx, st.Topic, int(st.Count), topicSettle) {
		res.Notes = append(res.Notes, fmt.Sprintf("notice: not every broker showed %d partitions of %q after %s; a statement right now may still see %d", st.Count, st.Topic, topicSettle, cur))
	}
	return res, nil
}
