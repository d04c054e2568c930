package kafkatest

import "github.com/twmb/franz-go/pkg/kmsg"

// ListOffsetsAnswer is an answer to req, for a kfake control hook, with
// every partition the request asks for filled in by fill (an error code, a
// log start held still): the hook says what a broker answers, not how a
// ListOffsets response is shaped.
func ListOffsetsAnswer(req *kmsg.ListOffsetsRequest, fill func(*kmsg.ListOffsetsResponseTopicPartition)) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			fill(&sp)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// ListOffsetsFailing is ListOffsetsAnswer with code for every partition.
func ListOffsetsFailing(req *kmsg.ListOffsetsRequest, code int16) *kmsg.ListOffsetsResponse {
	return ListOffsetsAnswer(req, func(p *kmsg.ListOffsetsResponseTopicPartition) { p.ErrorCode = code })
}

// OffsetFetchAnswer is an answer to a v8+ OffsetFetch req, for a kfake
// control hook: each group the request carries gets the topics topicsOf
// gives it (none: the group has no commits).
func OffsetFetchAnswer(req *kmsg.OffsetFetchRequest, topicsOf func(group string) []kmsg.OffsetFetchResponseGroupTopic) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	resp.Version = req.Version
	for _, g := range req.Groups {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group = g.Group
		if topicsOf != nil {
			rg.Topics = topicsOf(g.Group)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

// Commit is one partition of an OffsetFetch answer: its committed offset
// (-1: none) or, with Err, the error the coordinator answers for it.
type Commit struct {
	Partition int32
	Offset    int64
	Err       int16
}

// OffsetFetchTopic is one topic of an OffsetFetch answer, named as Kafka
// names it by version: by name before v10, by id from v10 (give both, or
// only the id for a topic deleted since).
func OffsetFetchTopic(name string, id [16]byte, commits ...Commit) kmsg.OffsetFetchResponseGroupTopic {
	rt := kmsg.NewOffsetFetchResponseGroupTopic()
	rt.Topic, rt.TopicID = name, id
	for _, c := range commits {
		p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		p.Partition, p.Offset, p.LeaderEpoch, p.ErrorCode = c.Partition, c.Offset, -1, c.Err
		rt.Partitions = append(rt.Partitions, p)
	}
	return rt
}

// ProduceFailing is an answer to a Produce req, for a kfake control hook,
// with code for every partition it writes.
func ProduceFailing(req *kmsg.ProduceRequest, code int16) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
