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
