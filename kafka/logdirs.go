package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LogDir is one log directory as its broker describes it.
type LogDir struct {
	Dir         string
	TotalBytes  int64 // -1: the broker did not say (DescribeLogDirs before v4)
	UsableBytes int64 // -1: the broker did not say
	Err         error // the directory's own error (KAFKA_STORAGE_ERROR: offline), nil if none
	// Sizes is the size in bytes of each partition replica the directory
	// holds (only those asked for); future replicas (being moved here from
	// another directory of the same broker) are left out.
	Sizes map[TopicPartition]int64
}

// BrokerLogDirs is one broker's DescribeLogDirs answer.
type BrokerLogDirs struct {
	Broker int32
	Addr   string
	Dirs   []LogDir // sorted by Dir
}

// Size is the size of the broker's replica of tp, and whether the broker
// reported one.
func (b *BrokerLogDirs) Size(tp TopicPartition) (int64, bool) {
	for _, d := range b.Dirs {
		if n, ok := d.Sizes[tp]; ok {
			return n, true
		}
	}
	return 0, false
}

// everyBrokerAttempt bounds the wait for one broker of a request that goes
// to several at once, so that one hung broker costs a bounded wait and a row
// with its error rather than the whole statement.
const everyBrokerAttempt = 10 * time.Second

// DescribeLogDirs asks each broker in brokers (nil: every broker the
// cluster lists) for its own log directories: a broker describes only its
// own disks, so the answer is the union. parts says which partition
// replicas each broker sizes: nil every replica it holds (what
// kafka-log-dirs.sh asks), otherwise parts[broker]. A broker that cannot be asked, or whose answer is
// an error, is returned in failed; the caller says the result is partial
// and names it; a broker id the cluster does not list fails so, with an
// *UnknownBrokerError. m says which brokers there are (nil: read it).
func (c *Cluster) DescribeLogDirs(ctx context.Context, m *Metadata, brokers []int32, parts map[int32][]TopicPartition) ([]BrokerLogDirs, []*BrokerError, error) {
	const api = "DescribeLogDirs"
	if m == nil {
		var err error
		if m, err = c.Metadata(ctx, []string{}); err != nil {
			return nil, nil, err
		}
	}
	if brokers == nil {
		for _, b := range m.Brokers {
			brokers = append(brokers, b.ID)
		}
	}
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		got    []BrokerLogDirs
		failed []*BrokerError
	)
	for _, id := range brokers {
		if !m.hasBroker(id) {
			ids := make([]string, len(m.Brokers))
			for i, b := range m.Brokers {
				ids[i] = strconv.Itoa(int(b.ID))
			}
			failed = append(failed, &BrokerError{API: api, ID: id, Addr: "not listed", Err: &UnknownBrokerError{ID: id, Known: ids}})
			continue
		}
		wg.Go(func() {
			req := kmsg.NewPtrDescribeLogDirsRequest() // Topics null: every replica the broker holds
			items := []string{"every log dir"}
			if parts != nil {
				ps := parts[id]
				items = tpStrings(ps)
				req.Topics = []kmsg.DescribeLogDirsRequestTopic{}
				for _, tp := range byTopic(ps) {
					rt := kmsg.NewDescribeLogDirsRequestTopic()
					rt.Topic, rt.Partitions = tp.topic, tp.partitions
					req.Topics = append(req.Topics, rt)
				}
			}
			actx, cancel := context.WithTimeout(ctx, everyBrokerAttempt)
			raw, err := c.send(actx, api, id, items, req)
			cancel()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				var be *BrokerError
				if !errors.As(err, &be) {
					be = &BrokerError{API: api, ID: id, Addr: m.Addr(id), Err: err}
				}
				failed = append(failed, be)
				return
			}
			resp := raw.(*kmsg.DescribeLogDirsResponse)
			if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
				failed = append(failed, &BrokerError{API: api, ID: id, Addr: m.Addr(id), Err: err})
				return
			}
			if len(resp.Dirs) == 0 {
				failed = append(failed, &BrokerError{API: api, ID: id, Addr: m.Addr(id), Err: errNoLogDirs})
				return
			}
			bl := BrokerLogDirs{Broker: id, Addr: m.Addr(id)}
			for _, d := range resp.Dirs {
				ld := LogDir{Dir: d.Dir, TotalBytes: d.TotalBytes, UsableBytes: d.UsableBytes, Err: kerr.ErrorForCode(d.ErrorCode)}
				if resp.Version < 4 {
					ld.TotalBytes, ld.UsableBytes = -1, -1
				}
				for _, t := range d.Topics {
					for _, p := range t.Partitions {
						if p.IsFuture {
							continue
						}
						if ld.Sizes == nil {
							ld.Sizes = map[TopicPartition]int64{}
						}
						ld.Sizes[TopicPartition{Topic: t.Topic, Partition: p.Partition}] = p.Size
					}
				}
				bl.Dirs = append(bl.Dirs, ld)
			}
			slices.SortFunc(bl.Dirs, func(a, b LogDir) int { return strings.Compare(a.Dir, b.Dir) })
			got = append(got, bl)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(got, func(a, b BrokerLogDirs) int { return int(a.Broker) - int(b.Broker) })
	slices.SortFunc(failed, func(a, b *BrokerError) int { return int(a.ID) - int(b.ID) })
	return got, failed, nil
}

var errNoLogDirs = errors.New("the broker answered DescribeLogDirs with no log directory")

// FencedBrokers lists the brokers the controller has registered but fenced
// (stopped, crashed, or not heartbeating): Metadata leaves them out, so a
// statement that asks every broker would not know they are missing.
// DescribeCluster v2 (KIP-1073, Kafka 4.0) names them; an older cluster
// cannot, and known is then false.
func (c *Cluster) FencedBrokers(ctx context.Context) (fenced []Broker, known bool, err error) {
	req := kmsg.NewPtrDescribeClusterRequest()
	req.IncludeFencedBrokers = true
	raw, by, err := c.AnyBroker(ctx, "DescribeCluster", []string{"fenced brokers"}, req)
	if err != nil {
		return nil, false, err
	}
	resp := raw.(*kmsg.DescribeClusterResponse)
	if resp.ErrorCode != 0 {
		return nil, false, &AdminError{API: "DescribeCluster", Broker: by, Addr: c.addr(by), Err: kerr.ErrorForCode(resp.ErrorCode), Message: deref(resp.ErrorMessage)}
	}
	if resp.Version < 2 {
		return nil, false, nil
	}
	for _, b := range resp.Brokers {
		if b.IsFenced {
			fenced = append(fenced, Broker{ID: b.NodeID, Host: b.Host, Port: b.Port, Rack: b.Rack})
		}
	}
	slices.SortFunc(fenced, func(a, b Broker) int { return int(a.ID) - int(b.ID) })
	return fenced, true, nil
}

// FencedError is a broker the controller has fenced: it is registered, but
// down or not heartbeating, and cannot answer for itself.
type FencedError struct{ Broker Broker }

func (e *FencedError) Error() string {
	return fmt.Sprintf("broker %d (%s) is registered but fenced by the controller (stopped, crashed or not heartbeating): it cannot describe its own log dirs", e.Broker.ID, e.Broker.Addr())
}
