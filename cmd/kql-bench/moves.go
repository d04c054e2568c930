package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Issue 17's moves: putting records back. Three writers of the bench's n
// records into an empty topic of the same partition count, each held to a
// target:
//
//   - kql import: PRODUCE INTO t FROM FILE 'f.jsonl', f being kql's own
//     jsonl export of the bench topic (written once, untimed);
//   - kcat -P: the same keys and values, one "key<TAB>value" line each,
//     from a file (-l), which is the reference the import must match;
//   - kql INSERT INTO t SELECT * FROM bench EXECUTE, which must match the
//     import;
//
// and the import again from the export of the -flat topic, whose peak RSS
// must stay within 1.10x of the 1x import's (and each under 64 MiB).
//
// Equal work with kcat: both send every key and value to the partition the
// key hashes to with murmur2 (kql's default PARTITION BY KEY; kcat is given
// librdkafka's murmur2 partitioner, which is the Java client's), with
// acks=all through the idempotent producer, snappy-compressed (franz-go's
// default; kcat -z snappy), lingering 5 ms. kcat does not parse JSON or
// carry the exported timestamps (its lines have none), so kql does a little
// more. Every run writes into a freshly created topic (delete and create,
// untimed), and is checked by the destination's end offsets summing to n.

// moveContenders returns the move contenders and notes on what was skipped.
func moveContenders(ctx context.Context, e *benchEnv) ([]*contender, []string, error) {
	c := e.cfg
	n := c.n
	var notes []string
	if !c.wants("kql import jsonl") && !c.wants("kcat -P") && !c.wants("kql INSERT SELECT") {
		return nil, nil, nil
	}
	probe := fmt.Sprintf("PRODUCE INTO %s FROM FILE 'x.jsonl'", c.topic)
	if !kqlAccepts(ctx, e.kql, probe) {
		return nil, []string{"kql has no PRODUCE ... FROM FILE: the move contenders are skipped"}, nil
	}
	export := filepath.Join(e.tmp, "export.jsonl")
	if err := exportJSONL(ctx, e, c.topic, n, export, c.timeout); err != nil {
		return nil, nil, err
	}
	dest := func(suffix string) string { return c.topic + "_" + suffix }
	kqlArgv := func(stmt string) []string { return []string{e.kql, "-b", e.bootstrap, "-e", stmt} }

	imp := &contender{name: "kql import jsonl", records: n,
		argv:    kqlArgv(fmt.Sprintf("PRODUCE INTO %s FROM FILE '%s'", dest("import"), export)),
		prepare: freshTopic(e, dest("import")), check: checkTopicCount(e, dest("import"), n),
		goal: goal{rssMaxMiB: 64}}
	cs := []*contender{imp}
	if e.kcat != "" {
		lines := filepath.Join(e.tmp, "kcat.tsv")
		if err := writeKcatLines(lines, n); err != nil {
			return nil, nil, err
		}
		cs = append(cs, &contender{name: "kcat -P", records: n,
			argv: []string{e.kcat, "-P", "-q", "-b", e.bootstrap, "-t", dest("kcat"), "-K", "\t", "-z", "snappy",
				"-X", "partitioner=murmur2_random", "-X", "enable.idempotence=true", "-X", "acks=all",
				"-X", "linger.ms=5", "-l", lines},
			prepare: freshTopic(e, dest("kcat")), check: checkTopicCount(e, dest("kcat"), n)})
		imp.goal.wallRef, imp.goal.wallMax = "kcat -P", 1.0
	} else {
		notes = append(notes, "kcat is not on PATH: the import's kcat -P reference is skipped")
	}
	ins := fmt.Sprintf("INSERT INTO %s SELECT * FROM %s EXECUTE", dest("insert"), c.topic)
	if kqlAccepts(ctx, e.kql, ins) {
		cs = append(cs, &contender{name: "kql INSERT SELECT", records: n, argv: kqlArgv(ins),
			prepare: freshTopic(e, dest("insert")), check: checkTopicCount(e, dest("insert"), n),
			goal: goal{wallRef: imp.name, wallMax: 1.0, rssMaxMiB: 64}})
	} else {
		notes = append(notes, fmt.Sprintf("kql rejects %q: the INSERT contender is skipped", ins))
	}
	if c.flat && c.wants("kql import jsonl flat") {
		flatExport := filepath.Join(e.tmp, "export-flat.jsonl")
		flatTimeout := c.timeout * time.Duration((c.flatN+n-1)/n)
		if err := exportJSONL(ctx, e, e.flatTopic, c.flatN, flatExport, flatTimeout); err != nil {
			return nil, nil, err
		}
		cs = append(cs, &contender{name: "kql import jsonl flat", records: c.flatN, timeout: flatTimeout,
			argv:    kqlArgv(fmt.Sprintf("PRODUCE INTO %s FROM FILE '%s'", dest("import_flat"), flatExport)),
			prepare: freshTopic(e, dest("import_flat")), check: checkTopicCount(e, dest("import_flat"), c.flatN),
			goal: goal{rssMaxMiB: 64, flatRef: imp.name, flatMax: 1.10}})
	}
	return cs, notes, nil
}

// exportJSONL writes kql's jsonl export of topic (n records) to path,
// untimed: the import's input is what kql itself writes.
func exportJSONL(ctx context.Context, e *benchEnv, topic string, n int64, path string, timeout time.Duration) error {
	argv := []string{e.kql, "-b", e.bootstrap, "-e", fmt.Sprintf("SELECT * FROM %s LIMIT ALL", topic), "--format", "jsonl"}
	if _, err := runChild(ctx, e, argv, timeout, path); err != nil {
		return fmt.Errorf("exporting %s for the import: %w", topic, err)
	}
	return checkJSONL(n, true)(path)
}

// writeKcatLines writes the bench topic's n records as kcat -P -K '\t'
// reads them: the seeded key, a tab, the seeded value (neither holds a tab
// or a newline).
func writeKcatLines(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	for i := range n {
		b = appendKey(b[:0], i)
		b = append(b, '\t')
		b = appendValue(b, i)
		b = append(b, '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// withAdmin runs f with an admin client on the bench's cluster.
func withAdmin(ctx context.Context, e *benchEnv, f func(*kadm.Client) error) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(splitAddrs(e.bootstrap)...))
	if err != nil {
		return err
	}
	defer cl.Close()
	return f(kadm.NewClient(cl))
}

// freshTopic deletes topic (if there) and creates it empty with the bench's
// partition count, so that every run writes the same records into the same
// empty topic and the cluster holds one copy, not one per run.
func freshTopic(e *benchEnv, topic string) func(context.Context) error {
	return func(ctx context.Context) error {
		return withAdmin(ctx, e, func(adm *kadm.Client) error {
			if _, _, exists, err := topicCount(ctx, adm, topic); err != nil {
				return err
			} else if exists {
				if _, err := adm.DeleteTopic(ctx, topic); err != nil {
					return fmt.Errorf("deleting %s before a run: %w", topic, err)
				}
			}
			for attempt := 0; ; attempt++ {
				r, err := adm.CreateTopic(ctx, int32(e.cfg.partitions), 1, nil, topic)
				if err == nil {
					err = r.Err
				}
				if err == nil {
					return waitTopicOnEveryBroker(ctx, e, topic)
				}
				if !errors.Is(err, kerr.TopicAlreadyExists) || attempt >= 60 {
					return fmt.Errorf("creating %s before a run: %w", topic, err)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(500 * time.Millisecond):
				}
			}
		})
	}
}

// checkTopicCount: a writer's run is right when topic holds exactly n
// records. They are counted by reading the topic (read_committed) up to n
// and for 2 s more: a transactional writer's end offsets also count one commit marker
// per partition and transaction, so their sum is not the record count.
func checkTopicCount(e *benchEnv, topic string, n int64) func(string) error {
	return func(string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		return withAdmin(ctx, e, func(adm *kadm.Client) error {
			cl, err := kgo.NewClient(kgo.SeedBrokers(splitAddrs(e.bootstrap)...),
				kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				return err
			}
			defer cl.Close()
			var got int64
			count := func(ctx context.Context) error {
				fs := cl.PollFetches(ctx)
				if err := fs.Err0(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
					return fmt.Errorf("counting %s: %d records so far: %w", topic, got, err)
				}
				got += int64(fs.NumRecords())
				return nil
			}
			for got < n {
				if err := count(ctx); err != nil {
					return err
				}
			}
			// Then a moment more, for records beyond n (a duplicate).
			more, cancelMore := context.WithTimeout(ctx, 2*time.Second)
			defer cancelMore()
			for more.Err() == nil {
				if err := count(more); err != nil {
					return err
				}
			}
			if got != n {
				return fmt.Errorf("topic %s holds %d records after the run, want %d", topic, got, n)
			}
			return nil
		})
	}
}

// waitTopicOnEveryBroker returns once every broker's own metadata lists
// topic with a leader for each partition: on a real cluster a topic just
// created reaches the brokers one after the other, and the run would
// otherwise ask one that does not know it yet ("no topic named").
func waitTopicOnEveryBroker(ctx context.Context, e *benchEnv, topic string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(splitAddrs(e.bootstrap)...))
	if err != nil {
		return err
	}
	defer cl.Close()
	ready := func() (bool, error) {
		brokers, err := kadm.NewClient(cl).ListBrokers(ctx)
		if err != nil {
			return false, err
		}
		for _, b := range brokers {
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, cl.Broker(int(b.NodeID)))
			if err != nil {
				return false, err
			}
			if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != e.cfg.partitions {
				return false, nil
			}
			for _, p := range resp.Topics[0].Partitions {
				if p.Leader < 0 || p.ErrorCode != 0 {
					return false, nil
				}
			}
		}
		return true, nil
	}
	for {
		ok, err := ready()
		if err != nil {
			return fmt.Errorf("waiting for %s on every broker: %w", topic, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s on every broker: %w", topic, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
