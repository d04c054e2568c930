package exec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kql-dev/kql/kafka"
)

// groupCommit is one group's committed offset on one partition.
type groupCommit struct {
	group string
	tp    kafka.TopicPartition
}

// lagTimes is lag in time: for each (group, partition) whose committed
// offset is behind the end, now minus the timestamp of the record at the
// committed offset, the first one the group has not consumed; 0 where the
// group is caught up. A commit whose record is gone (deleted, compacted)
// has no entry, and why is in gone.
type lagTimes struct {
	ms      map[groupCommit]int64
	gone    map[groupCommit]kafka.RecordAt
	missing []error              // partitions whose leader could not be read
	failed  map[groupCommit]bool // the commits those partitions hold
	denied  map[string]bool      // topics whose records the principal may not read
	unread  map[groupCommit]bool // lagging commits whose record was not read (denied)
}

// readLagTimes reads the records at the committed offsets: one Fetch per
// leader broker for every lagging partition at once (RecordsAt). Groups
// that committed different offsets on the same partition need one Fetch
// per distinct offset (a Fetch names a partition once): the offsets are
// layered, the k-th distinct offset of every partition in the k-th layer,
// and the layers are read concurrently.
func (s *Session) readLagTimes(ctx context.Context, m *kafka.Metadata, committed map[string]map[kafka.TopicPartition]int64, ends map[kafka.TopicPartition]kafka.OffsetAnswer) (*lagTimes, error) {
	out := &lagTimes{ms: map[groupCommit]int64{}, gone: map[groupCommit]kafka.RecordAt{}, failed: map[groupCommit]bool{}, denied: map[string]bool{}, unread: map[groupCommit]bool{}}
	byOffset := map[kafka.TopicPartition]map[int64][]string{} // partition -> lagging offset -> groups
	for g, offs := range committed {
		for tp, off := range offs {
			end, ok := ends[tp]
			if !ok {
				continue
			}
			if off >= end.Offset {
				out.ms[groupCommit{g, tp}] = 0
				continue
			}
			if byOffset[tp] == nil {
				byOffset[tp] = map[int64][]string{}
			}
			byOffset[tp][off] = append(byOffset[tp][off], g)
		}
	}
	var layers []map[kafka.TopicPartition]int64
	for tp, offs := range byOffset {
		sorted := make([]int64, 0, len(offs))
		for off := range offs {
			sorted = append(sorted, off)
		}
		slices.Sort(sorted)
		for i, off := range sorted {
			if i == len(layers) {
				layers = append(layers, map[kafka.TopicPartition]int64{})
			}
			layers[i][tp] = off
		}
	}
	now := s.Now()
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		errs = make([]error, len(layers))
	)
	// A bounded number of layers at once: many groups on one partition at
	// different offsets must not open a Fetch each at the same moment.
	sem := make(chan struct{}, lagLayersAtOnce)
	for i, layer := range layers {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			got, failed, err := s.cl.RecordsAt(ctx, m, layer)
			mu.Lock()
			defer mu.Unlock()
			errs[i] = err
			for tp, ra := range got {
				for _, g := range byOffset[tp][layer[tp]] {
					gc := groupCommit{g, tp}
					if !ra.Found {
						out.gone[gc] = ra
						continue
					}
					out.ms[gc] = max(now.Sub(ra.Timestamp).Milliseconds(), 0)
				}
			}
			for tp, pe := range failed {
				if kafka.IsAuthorization(pe.Err) {
					// Reading a record needs READ on the topic, which
					// SHOW GROUPS' other columns do not: a NULL with a
					// notice, not a failure.
					out.denied[tp.Topic] = true
					for _, g := range byOffset[tp][layer[tp]] {
						out.unread[groupCommit{g, tp}] = true
					}
					delete(failed, tp)
					continue
				}
				for _, g := range byOffset[tp][layer[tp]] {
					out.failed[groupCommit{g, tp}] = true
				}
			}
			out.missing = append(out.missing, partitionErrors(failed)...)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lagLayersAtOnce bounds the layers of readLagTimes read concurrently.
const lagLayersAtOnce = 4

// goneNotes says, per partition, why lag_ms is NULL although the group is
// behind: the record at its committed offset is not in the log.
func (lt *lagTimes) goneNotes(column string, showGroup bool) []string {
	keys := make([]groupCommit, 0, len(lt.gone))
	for gc := range lt.gone {
		keys = append(keys, gc)
	}
	slices.SortFunc(keys, func(a, b groupCommit) int {
		if c := strings.Compare(a.group, b.group); c != 0 {
			return c
		}
		if c := strings.Compare(a.tp.Topic, b.tp.Topic); c != 0 {
			return c
		}
		return int(a.tp.Partition - b.tp.Partition)
	})
	var notes []string
	for _, gc := range keys {
		ra := lt.gone[gc]
		var why string
		switch ra.Gone {
		case kafka.GoneDeleted:
			why = "was deleted (below the log start: retention or DeleteRecords); the group's consumers will reset by their auto.offset.reset"
		case kafka.GoneCompacted:
			why = "was removed by compaction"
		case kafka.GoneMarker:
			why = "is a transaction marker and no record follows it yet"
		case kafka.GoneTooLarge:
			why = fmt.Sprintf("was not returned by its leader (no whole batch, not even with a %d MiB share)", kafka.RecordAtMaxShare>>20)
		default:
			why = "is not in the log"
		}
		who := ""
		if showGroup {
			who = fmt.Sprintf("group %q, ", gc.group)
		}
		notes = append(notes, fmt.Sprintf("%s is NULL for %s%s: the record at committed offset %d %s", column, who, gc.tp, ra.Offset, why))
	}
	if len(lt.denied) > 0 {
		topics := make([]string, 0, len(lt.denied))
		for t := range lt.denied {
			topics = append(topics, t)
		}
		slices.Sort(topics)
		notes = append(notes, fmt.Sprintf("%s is NULL where reading the record at the committed offset was not authorized (it needs READ on the topic): %s", column, strings.Join(topics, ", ")))
	}
	return notes
}
