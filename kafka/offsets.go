package kafka

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Special ListOffsets timestamps.
const (
	Earliest int64 = -2
	Latest   int64 = -1
	// MaxTimestamp (KIP-734, ListOffsets v7+, Kafka 3.0+) answers the
	// offset and timestamp of the record with the greatest timestamp.
	MaxTimestamp int64 = -3
)

// OffsetAnswer is one partition's ListOffsets answer. Offset is -1 when a
// by-time lookup found no record at or after the timestamp.
type OffsetAnswer struct {
	Offset    int64
	Timestamp int64
}

// ListOffsets asks each partition's leader for the offset at ts (Earliest,
// Latest, or epoch milliseconds), one request per leader. With
// readCommitted, Latest is the last stable offset (the end a read_committed
// consumer reaches), not the high watermark.
func (c *Cluster) ListOffsets(ctx context.Context, m *Metadata, parts []TopicPartition, ts int64, readCommitted bool) (map[TopicPartition]OffsetAnswer, map[TopicPartition]*PartitionError, error) {
	var item func(TopicPartition) string
	switch {
	case ts == MaxTimestamp:
		item = func(tp TopicPartition) string { return tp.String() + "@max_timestamp" }
	case ts >= 0:
		// A by-time lookup names its time in \trace, so the lookups of
		// one statement can be told apart.
		at := time.UnixMilli(ts).UTC().Format(time.RFC3339Nano)
		item = func(tp TopicPartition) string { return tp.String() + "@" + at }
	}
	return Leaders(ctx, c, m, parts, LeaderRequest[OffsetAnswer]{
		API:  "ListOffsets",
		Item: item,
		Build: func(bparts []TopicPartition) kmsg.Request {
			req := kmsg.NewPtrListOffsetsRequest()
			req.ReplicaID = -1
			if readCommitted {
				req.IsolationLevel = 1
			}
			for _, tps := range byTopic(bparts) {
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = tps.topic
				for _, p := range tps.partitions {
					rp := kmsg.NewListOffsetsRequestTopicPartition()
					rp.Partition = p
					rp.CurrentLeaderEpoch = -1
					rp.Timestamp = ts
					rp.MaxNumOffsets = 1
					rt.Partitions = append(rt.Partitions, rp)
				}
				req.Topics = append(req.Topics, rt)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []PartAnswer[OffsetAnswer] {
			resp := raw.(*kmsg.ListOffsetsResponse)
			var out []PartAnswer[OffsetAnswer]
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					off := p.Offset
					if resp.Version == 0 {
						off = -1
						if len(p.OldStyleOffsets) > 0 {
							off = p.OldStyleOffsets[0]
						}
					}
					code := p.ErrorCode
					if ts == MaxTimestamp && resp.Version < 7 {
						// A broker before Kafka 3.0 (ListOffsets < v7) reads
						// -3 as a time, and answers the first record.
						code = kerr.UnsupportedVersion.Code
					}
					out = append(out, PartAnswer[OffsetAnswer]{
						TP: TopicPartition{t.Topic, p.Partition}, Code: code,
						Value: OffsetAnswer{Offset: off, Timestamp: p.Timestamp},
					})
				}
			}
			return out
		},
	})
}
