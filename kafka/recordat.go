package kafka

import (
	"context"
	"fmt"
	"math"
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
	// GoneTooLarge: the batch holding the offset did not fit the bytes
	// RecordsAt reads per partition, in any of its rounds.
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

// Bytes RecordsAt asks per partition: the first round reads at most
// recordAtFirstBytes from each offset, enough for the batch holding it in
// almost every log; what did not fit is asked again with
// recordAtRetryBytes (Kafka's default max.message.bytes, 1 MiB plus the
// batch overhead, the largest batch a topic with default settings holds).
const (
	recordAtFirstBytes = 64 << 10
	recordAtRetryBytes = 1048588
	recordAtRounds     = 6
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
// replaces an incomplete batch by an empty answer). So MaxBytes is the sum
// of the shares, and a partition whose batch did not fit is asked again,
// with a larger share, in a second round (still one Fetch per leader
// broker). The broker also caps a response at its fetch.max.bytes (55 MiB
// by default): beyond that the later partitions come back empty and go to
// the next round too; each round serves at least the first partition of
// each broker's request, so the rounds end.
func (c *Cluster) RecordsAt(ctx context.Context, m *Metadata, offsets map[TopicPartition]int64) (map[TopicPartition]RecordAt, map[TopicPartition]*PartitionError, error) {
	ids := make(map[[16]byte]string)
	for name, t := range m.Topics {
		ids[t.ID] = name
	}
	pending := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		pending = append(pending, tp)
	}
	slices.SortFunc(pending, compareTP)
	got := make(map[TopicPartition]RecordAt, len(offsets))
	var failed map[TopicPartition]*PartitionError
	share := int32(recordAtFirstBytes)
	for round := 0; round < recordAtRounds && len(pending) > 0; round++ {
		if round > 0 {
			share = recordAtRetryBytes
		}
		answers, fails, err := Leaders(ctx, c, m, pending, LeaderRequest[recordAtAnswer]{
			API:   "Fetch",
			Item:  func(tp TopicPartition) string { return fmt.Sprintf("%s@%d", tp, offsets[tp]) },
			Build: func(bparts []TopicPartition) kmsg.Request { return recordAtRequest(m, bparts, offsets, share) },
			Parse: func(raw kmsg.Response) []PartAnswer[recordAtAnswer] {
				return parseRecordAt(raw.(*kmsg.FetchResponse), ids, offsets)
			},
		})
		if err != nil {
			return got, failed, err
		}
		var again []TopicPartition
		for _, tp := range pending {
			if pe := fails[tp]; pe != nil {
				if pe.Err == ErrNotMentioned { // left out of a full response: ask again
					again = append(again, tp)
					continue
				}
				if failed == nil {
					failed = make(map[TopicPartition]*PartitionError)
				}
				failed[tp] = pe
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
			case a.incomplete:
				again = append(again, tp)
			default:
				got[tp] = a.RecordAt
			}
		}
		pending = again
	}
	for _, tp := range pending {
		got[tp] = RecordAt{Offset: offsets[tp], Gone: GoneTooLarge}
	}
	return got, failed, nil
}

// recordAtAnswer is one partition's answer before RecordsAt sorts it.
type recordAtAnswer struct {
	RecordAt
	incomplete bool  // no whole batch came: ask again with a larger share
	err        error // the batch could not be decoded
}

func recordAtRequest(m *Metadata, bparts []TopicPartition, offsets map[TopicPartition]int64, share int32) kmsg.Request {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 0 // the records are there (offset < end): never wait for more
	req.MinBytes = 0
	req.MaxBytes = int32(min(int64(share)*int64(len(bparts)), math.MaxInt32))
	req.SessionID = 0
	req.SessionEpoch = -1 // no fetch session
	for _, tps := range byTopic(bparts) {
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = tps.topic
		if mt, ok := m.Topics[tps.topic]; ok {
			rt.TopicID = mt.ID
		}
		for _, p := range tps.partitions {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition = p
			rp.FetchOffset = offsets[TopicPartition{tps.topic, p}]
			rp.CurrentLeaderEpoch = -1
			rp.LastFetchedEpoch = -1
			rp.LogStartOffset = -1
			rp.PartitionMaxBytes = share
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
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
			out = append(out, PartAnswer[recordAtAnswer]{TP: tp, Value: recordAt(topic, rp, at)})
		}
	}
	return out
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
