package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FetchAnswer is what one Fetch returned for one partition: the records
// (decompressed; control records and, with read_committed, aborted records
// removed) and Next, the position to fetch from next. Next counts positions,
// not records: it moves past transaction markers, aborted batches and
// compaction gaps, so a reader that stops when Next reaches the end never
// waits for records that will not come.
type FetchAnswer struct {
	Records []*kgo.Record
	// Keys are the records' (timestamp in ms, offset), Keys[i] of
	// Records[i]: taken on the goroutine that decoded the records, while
	// they are in its cache, so that the ordered merge compares keys in
	// one array instead of reading three cache lines of every record.
	// Only an ordered Reader's Fetches fill them (nil otherwise).
	Keys []RecordKey
	Next int64
	LSO  int64
	HWM  int64
	Err  error // a decoding failure (bad CRC, unknown codec): the records before it are kept
	// Omitted says the leader left the partition out of its response: the
	// response was full (Fetch's MaxBytes) before its turn. Nothing was
	// read and nothing is wrong; ask again.
	Omitted bool
	// Limited says the response had less room left at the partition's
	// turn than the partition asked for: Kafka sends the partition,
	// empty or cut short, when the response is full before its turn.
	// An empty answer then says nothing of the partition's batches.
	Limited bool
	// WireBytes is the size of the record batches as they came, before
	// decompression.
	WireBytes int
	// Enc and Ends are the records encoded by an encoding reader's lane
	// (encode.go), Records then cut at the range's end and dropped.
	Enc  []byte
	Ends []int32
	// decoded is what the records cost decoded, before they were
	// encoded and dropped: what a Fetch in flight holds.
	decoded int64
}

var decompressor = kgo.DefaultDecompressor()

// Fetch reads once from each partition's leader at the given positions, one
// request per leader broker. maxBytes bounds each partition's answer.
func (c *Cluster) Fetch(ctx context.Context, m *Metadata, positions map[TopicPartition]int64, maxBytes int32, readCommitted bool) (map[TopicPartition]FetchAnswer, map[TopicPartition]*PartitionError, error) {
	parts := make([]TopicPartition, 0, len(positions))
	for tp := range positions {
		parts = append(parts, tp)
	}
	slices.SortFunc(parts, compareTP)
	return c.FetchOrdered(ctx, m, parts, positions, maxBytes, readCommitted)
}

// FetchOrdered is Fetch with the partitions asked for in the order of
// parts: a broker fills its answer in request order and leaves out what
// does not fit (Omitted).
func (c *Cluster) FetchOrdered(ctx context.Context, m *Metadata, parts []TopicPartition, positions map[TopicPartition]int64, maxBytes int32, readCommitted bool) (map[TopicPartition]FetchAnswer, map[TopicPartition]*PartitionError, error) {
	return c.fetchOrdered(ctx, m, parts, positions, func(TopicPartition) int32 { return maxBytes }, readCommitted, nil, nil, false)
}

// fetchOrdered is FetchOrdered with each partition's PartitionMaxBytes
// from ask, the answers' key arrays from a
// reader's pool (keys; nil: none), and the records decoded into slabs from
// recs (nil: new ones), which the caller takes back (recPool.reclaim).
// once asks each leader once (LeaderRequest.Once): a Reader's lane waits
// for moved leaders itself.
func (c *Cluster) fetchOrdered(ctx context.Context, m *Metadata, parts []TopicPartition, positions map[TopicPartition]int64, ask func(TopicPartition) int32, readCommitted bool, keys *keyPool, recs *recPool, once bool) (map[TopicPartition]FetchAnswer, map[TopicPartition]*PartitionError, error) {
	ids := make(map[[16]byte]string)
	for name, t := range m.Topics {
		ids[t.ID] = name
	}
	var pools []kgo.Pool
	if recs != nil {
		pools = []kgo.Pool{recs}
	}
	var iso kgo.IsolationLevel = kgo.ReadUncommitted()
	if readCommitted {
		iso = kgo.ReadCommitted()
	}
	got, failed, err := Leaders(ctx, c, m, parts, LeaderRequest[FetchAnswer]{
		API:  "Fetch",
		Once: once,
		Item: func(tp TopicPartition) string { return fmt.Sprintf("%s@%d", tp, positions[tp]) },
		Build: func(bparts []TopicPartition) kmsg.Request {
			req := kmsg.NewPtrFetchRequest()
			req.ReplicaID = -1
			req.MaxWaitMillis = 500
			req.MinBytes = 1
			req.MaxBytes = fetchMaxBytes(bparts, ask)
			req.SessionID = 0
			req.SessionEpoch = -1 // no fetch session: every request is complete in itself
			if readCommitted {
				req.IsolationLevel = 1
			}
			req.Topics = fetchTopics(m, bparts, positions, ask)
			return req
		},
		Parse: func(raw kmsg.Response) []PartAnswer[FetchAnswer] {
			resp := raw.(*kmsg.FetchResponse)
			var out []PartAnswer[FetchAnswer]
			// The broker fills the response in request order, each
			// partition getting the least of its ask and the room left:
			// the room at each partition's turn says whether it was cut
			// short (Limited).
			var inResp []TopicPartition
			var sizes []int
			for _, t := range resp.Topics {
				for i := range t.Partitions {
					inResp = append(inResp, TopicPartition{nameOf(t.Topic, t.TopicID, ids), t.Partitions[i].Partition})
					sizes = append(sizes, len(t.Partitions[i].RecordBatches))
				}
			}
			limited := limitedInResponse(inResp, sizes, ask)
			n := 0
			for _, t := range resp.Topics {
				topic := nameOf(t.Topic, t.TopicID, ids)
				for i := range t.Partitions {
					rp := &t.Partitions[i]
					tp := TopicPartition{topic, rp.Partition}
					limited := limited[n]
					n++
					if rp.ErrorCode != 0 {
						out = append(out, PartAnswer[FetchAnswer]{TP: tp, Code: rp.ErrorCode})
						continue
					}
					fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
						Offset: positions[tp], IsolationLevel: iso, Topic: topic, Partition: rp.Partition, Pools: pools,
					}, rp, decompressor, nil)
					if next < positions[tp] {
						next = positions[tp]
					}
					out = append(out, PartAnswer[FetchAnswer]{TP: tp, Value: FetchAnswer{
						Records: fp.Records, Keys: keys.keysOf(fp.Records), Next: next, Err: fp.Err, LSO: rp.LastStableOffset, HWM: rp.HighWatermark,
						WireBytes: len(rp.RecordBatches), Limited: limited,
					}})
				}
			}
			return out
		},
	})
	for tp, pe := range failed {
		if errors.Is(pe.Err, ErrNotMentioned) {
			got[tp] = FetchAnswer{Next: positions[tp], Omitted: true}
			delete(failed, tp)
		}
	}
	if len(failed) == 0 {
		failed = nil
	}
	return got, failed, err
}

// fetchMaxBytes is the MaxBytes of a Fetch of parts with these asks. The
// asks, not the response, bound what comes: the response's bound is the
// sum of the asks and room for the first partition's batch, which comes
// whole even when larger than its ask (KIP-74) and counts against the
// bound, so that a bound of only the asks' sum would leave out the
// partitions after it; at most maxFetchResponse.
func fetchMaxBytes(parts []TopicPartition, ask func(TopicPartition) int32) int32 {
	sum := int64(maxAsk)
	for _, tp := range parts {
		sum += int64(ask(tp))
	}
	return int32(min(sum, maxFetchResponse))
}

// limitedInResponse says, for each partition of a Fetch response (in its
// order, with the bytes each brought), whether the response had less room
// left at its turn than it asked for. A broker fills a response in request
// order, each partition getting the least of its ask and the room left, and
// sends the partitions it had no room for, empty.
func limitedInResponse(parts []TopicPartition, sizes []int, ask func(TopicPartition) int32) []bool {
	room := int64(fetchMaxBytes(parts, ask))
	out := make([]bool, len(parts))
	for i, tp := range parts {
		out[i] = room < int64(ask(tp))
		room -= int64(sizes[i])
	}
	return out
}

// maxFetchResponse bounds a Fetch response, well under what kgo reads of
// one (100 MiB, kgo.BrokerMaxReadBytes) and a broker's fetch.max.bytes
// (55 MiB by default).
const maxFetchResponse = 32 << 20

// nameOf is a response topic's name: named, or by its id (Fetch v13+).
func nameOf(name string, id [16]byte, ids map[[16]byte]string) string {
	if name == "" {
		return ids[id]
	}
	return name
}

// fetchTopics is a Fetch's topics without a fetch session: each of bparts
// from its offset, with its byte share, named by topic id and name (the
// broker reads the one its Fetch version has).
func fetchTopics(m *Metadata, bparts []TopicPartition, offsets map[TopicPartition]int64, share func(TopicPartition) int32) []kmsg.FetchRequestTopic {
	var topics []kmsg.FetchRequestTopic
	for _, tps := range byTopic(bparts) {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = tps.topic
		if mt, ok := m.Topics[tps.topic]; ok {
			rt.TopicID = mt.ID
		}
		for _, p := range tps.partitions {
			tp := TopicPartition{tps.topic, p}
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition = p
			rp.FetchOffset = offsets[tp]
			rp.CurrentLeaderEpoch = -1
			rp.LastFetchedEpoch = -1
			rp.LogStartOffset = -1
			rp.PartitionMaxBytes = share(tp)
			rt.Partitions = append(rt.Partitions, rp)
		}
		topics = append(topics, rt)
	}
	return topics
}
