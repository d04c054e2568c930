package kafka

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Why a RecordAt holds no record at the offset asked.
const (
	// GoneDeleted: the offset is below the log start (retention or
	// DeleteRecords removed it); the leader answered OFFSET_OUT_OF_RANGE.
	GoneDeleted = "deleted"
	// GoneCompacted: compaction removed the record at the offset (the
	// log skips from before it to after it).
	GoneCompacted = "compacted"
	// GoneMarker: the offset holds a transaction marker and no data
	// record follows it in what was read.
	GoneMarker = "marker"
	// GoneTooLarge: the leader returned no whole batch at the offset, not
	// even with the largest share (RecordAtMaxShare) nor first in its
	// response.
	GoneTooLarge = "too large"
)

// RecordAt is the record a log holds at one offset: its offset and
// timestamp (Found), or why there is none (Gone). When the offset holds a
// transaction marker, the record is the first data record after it, the
// first one a consumer at that offset reads.
type RecordAt struct {
	Found     bool
	Offset    int64
	Timestamp time.Time
	Gone      string
	// LogAppendTime says the topic stamps records with the broker's
	// append time, not the producer's (message.timestamp.type).
	LogAppendTime bool
}

// RecordAtMaxShare is the most RecordsAt asks of one partition.
const RecordAtMaxShare = 16 << 20

// Bytes RecordsAt asks per partition: the first round reads at most
// recordAtFirstBytes from each offset, enough for the batch holding it in
// almost every log; a partition whose batch did not fit its share is
// asked again with a share recordAtGrowth times larger (1 MiB: Kafka's
// default max.message.bytes, then 16 MiB), up to recordAtMaxShare. A
// response asks for at most recordAtResponseBytes, below a broker's
// default fetch.max.bytes (55 MiB), so the memory one Fetch holds does
// not grow with the number of partitions.
const (
	recordAtFirstBytes    = 64 << 10
	recordAtGrowth        = 16
	recordAtMaxShare      = RecordAtMaxShare
	recordAtResponseBytes = 32 << 20
)

// RecordsAt reads the record at each given offset from the partition's
// leader: one Fetch per leader broker carrying all of its partitions, each
// reading only from the batch that holds the offset. The record in the
// middle of a compressed batch is decoded from the whole batch.
//
// Fetch's byte limits (KIP-74): PartitionMaxBytes bounds each partition's
// share, MaxBytes the response; a broker returns at least one whole batch
// only for the first partition that has data, and for every later one
// nothing when its first batch is larger than its share (the broker
// replaces an incomplete batch by an empty answer), or when the response
// is full (MaxBytes, or the broker's own fetch.max.bytes). The two are
// told apart by the room the response had left at the partition: with
// room for its share, its batch is larger than the share, and the share
// grows; with less, it was starved by the response limit and is asked
// again with the same share. Each round is one Fetch
// per leader broker for what is still pending, and each serves at least
// the first pending partition of each broker (or grows a share), so the
// rounds end, with no partition starved: thousands of lagging partitions
// on one broker take len/(recordAtResponseBytes/share) rounds.
func (c *Cluster) RecordsAt(ctx context.Context, m *Metadata, offsets map[TopicPartition]int64) (map[TopicPartition]RecordAt, map[TopicPartition]*PartitionError, error) {
	ids := make(map[[16]byte]string)
	for name, t := range m.Topics {
		ids[t.ID] = name
	}
	pending := make([]TopicPartition, 0, len(offsets))
	shares := make(map[TopicPartition]int32, len(offsets))
	for tp := range offsets {
		pending = append(pending, tp)
		shares[tp] = recordAtFirstBytes
	}
	slices.SortFunc(pending, compareTP)
	got := make(map[TopicPartition]RecordAt, len(offsets))
	var failed map[TopicPartition]*PartitionError
	for len(pending) > 0 {
		answers, fails, err := Leaders(ctx, c, m, pending, LeaderRequest[recordAtAnswer]{
			API:   "Fetch",
			Item:  func(tp TopicPartition) string { return fmt.Sprintf("%s@%d", tp, offsets[tp]) },
			Build: func(bparts []TopicPartition) kmsg.Request { return recordAtRequest(m, bparts, offsets, shares) },
			Parse: func(raw kmsg.Response) []PartAnswer[recordAtAnswer] {
				return parseRecordAt(raw.(*kmsg.FetchResponse), ids, offsets)
			},
		})
		if err != nil {
			return got, failed, err
		}
		starved := starvedOf(m, pending, shares, answers)
		var again []TopicPartition
		progress := false
		// askAgain keeps tp pending; its share grows when the broker had
		// room for it and still sent no whole batch.
		askAgain := func(tp TopicPartition) {
			again = append(again, tp)
			if !starved[tp] && shares[tp] < recordAtMaxShare {
				shares[tp] = min(shares[tp]*recordAtGrowth, recordAtMaxShare)
				progress = true
			}
		}
		for _, tp := range pending {
			if pe := fails[tp]; pe != nil {
				if pe.Err == ErrNotMentioned { // left out of a full response
					askAgain(tp)
					continue
				}
				if failed == nil {
					failed = make(map[TopicPartition]*PartitionError)
				}
				failed[tp] = pe
				progress = true
				continue
			}
			a := answers[tp]
			switch {
			case a.err != nil:
				if failed == nil {
					failed = make(map[TopicPartition]*PartitionError)
				}
				broker := leaderOf(m, tp)
				failed[tp] = &PartitionError{API: "Fetch", Topic: tp.Topic, Partition: tp.Partition, Broker: broker, Addr: m.Addr(broker), Err: a.err}
				progress = true
			case a.incomplete:
				askAgain(tp)
			default:
				got[tp] = a.RecordAt
				progress = true
			}
		}
		pending = again
		if !progress {
			// No broker served even its first pending partition, and no
			// share can grow: asking again would answer the same.
			break
		}
	}
	for _, tp := range pending {
		got[tp] = RecordAt{Offset: offsets[tp], Gone: GoneTooLarge}
	}
	return got, failed, nil
}

// recordAtAnswer is one partition's answer before RecordsAt sorts it.
type recordAtAnswer struct {
	RecordAt
	incomplete bool  // no whole batch came: ask again
	bytes      int64 // what the broker returned for the partition
	err        error // the batch could not be decoded
}

func recordAtRequest(m *Metadata, bparts []TopicPartition, offsets map[TopicPartition]int64, shares map[TopicPartition]int32) kmsg.Request {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0 // the records are there (offset < end): never wait for more
	req.MinBytes = 0
	var sum int64
	for _, tp := range bparts {
		sum += int64(shares[tp])
	}
	req.MaxBytes = int32(min(sum, recordAtResponseBytes))
	req.SessionID = 0
	req.SessionEpoch = -1 // no fetch session
	req.Topics = fetchTopics(m, bparts, offsets, func(tp TopicPartition) int32 { return shares[tp] })
	return req
}

func parseRecordAt(resp *kmsg.FetchResponse, ids map[[16]byte]string, offsets map[TopicPartition]int64) []PartAnswer[recordAtAnswer] {
	var out []PartAnswer[recordAtAnswer]
	for _, t := range resp.Topics {
		topic := t.Topic
		if topic == "" {
			topic = ids[t.TopicID]
		}
		for i := range t.Partitions {
			rp := &t.Partitions[i]
			tp := TopicPartition{topic, rp.Partition}
			at := offsets[tp]
			if rp.ErrorCode == kerr.OffsetOutOfRange.Code {
				// Below the log start: the record was deleted. (An
				// offset at or past the end is never asked.)
				out = append(out, PartAnswer[recordAtAnswer]{TP: tp, Value: recordAtAnswer{RecordAt: RecordAt{Offset: at, Gone: GoneDeleted}}})
				continue
			}
			if rp.ErrorCode != 0 {
				out = append(out, PartAnswer[recordAtAnswer]{TP: tp, Code: rp.ErrorCode})
				continue
			}
			a := recordAt(topic, rp, at)
			a.bytes = int64(len(rp.RecordBatches))
			out = append(out, PartAnswer[recordAtAnswer]{TP: tp, Value: a})
		}
	}
	return out
}

// starvedOf says which of pending found the response full: a broker fills
// a Fetch response in request order, each partition's share bounded by
// the room the response has left, which is what was asked (the sum of the
// shares, capped) less what the partitions before it took. A partition
// with less room than its share left was starved; one with room for its
// whole share and still no whole batch (left out or empty) has a batch
// larger than its share. (A broker whose fetch.max.bytes is below what was
// asked starves partitions this takes for too large: their shares grow,
// which costs bytes, not answers.)
func starvedOf(m *Metadata, pending []TopicPartition, shares map[TopicPartition]int32, answers map[TopicPartition]recordAtAnswer) map[TopicPartition]bool {
	starved := map[TopicPartition]bool{}
	plan, _ := PlanLeaders("Fetch", m, pending)
	for _, bparts := range plan {
		var room int64
		for _, tp := range bparts {
			room += int64(shares[tp])
		}
		room = min(room, recordAtResponseBytes)
		for _, tps := range byTopic(bparts) { // the order recordAtRequest asks in
			for _, p := range tps.partitions {
				tp := TopicPartition{tps.topic, p}
				starved[tp] = room < int64(shares[tp])
				room -= answers[tp].bytes
			}
		}
	}
	return starved
}

// recordAt finds the record at offset at in one partition's batches.
func recordAt(topic string, rp *kmsg.FetchResponseTopicPartition, at int64) recordAtAnswer {
	batches := wholeBatches(rp.RecordBatches)
	if len(batches) == 0 {
		return recordAtAnswer{incomplete: true}
	}
	// kgo decompresses and checks each batch and drops the records before
	// the fetch offset, which a batch begun before it holds.
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{
		Offset: at, IsolationLevel: kgo.ReadUncommitted(), Topic: topic, Partition: rp.Partition,
	}, rp, decompressor, nil)
	if len(fp.Records) == 0 && fp.Err != nil {
		return recordAtAnswer{err: fp.Err}
	}
	var holder *kmsg.RecordBatch
	for i := range batches {
		b := &batches[i]
		if b.FirstOffset <= at && at <= b.FirstOffset+int64(b.LastOffsetDelta) {
			holder = b
			break
		}
	}
	marker := holder != nil && holder.Attributes&0x20 != 0
	if len(fp.Records) > 0 {
		r := fp.Records[0]
		found := RecordAt{Found: true, Offset: r.Offset, Timestamp: r.Timestamp, LogAppendTime: r.Attrs.TimestampType() == 1}
		if r.Offset == at || marker {
			return recordAtAnswer{RecordAt: found}
		}
		return recordAtAnswer{RecordAt: RecordAt{Offset: at, Gone: GoneCompacted}}
	}
	if marker {
		return recordAtAnswer{RecordAt: RecordAt{Offset: at, Gone: GoneMarker}}
	}
	return recordAtAnswer{RecordAt: RecordAt{Offset: at, Gone: GoneCompacted}}
}

// wholeBatches are the complete batch headers in raw: a response may end
// in a batch cut short by the byte limit, which is not one.
func wholeBatches(raw []byte) []kmsg.RecordBatch {
	var out []kmsg.RecordBatch
	for len(raw) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			break
		}
		out = append(out, b)
		raw = raw[12+int(b.Length):]
	}
	return out
}
