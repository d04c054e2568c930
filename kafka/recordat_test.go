package kafka

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRecordsAtResponseIsBounded: a Fetch for thousands of lagging
// partitions on one broker asks for at most recordAtResponseBytes, however
// many partitions and however large their shares: the memory one response
// holds does not grow with the partitions (a broker caps it at its
// fetch.max.bytes, 55 MiB by default, but that can be raised, and kgo
// refuses a response over its BrokerMaxReadBytes).
func TestRecordsAtResponseIsBounded(t *testing.T) {
	m := &Metadata{Topics: map[string]*Topic{}}
	offsets := map[TopicPartition]int64{}
	shares := map[TopicPartition]int32{}
	var parts []TopicPartition
	for p := int32(0); p < 5000; p++ {
		tp := TopicPartition{"t", p}
		parts = append(parts, tp)
		offsets[tp] = 0
		shares[tp] = recordAtMaxShare
	}
	req := recordAtRequest(m, parts, offsets, shares).(*kmsg.FetchRequest)
	require.Equal(t, int32(recordAtResponseBytes), req.MaxBytes)
	require.Len(t, req.Topics[0].Partitions, 5000, "still one Fetch for all of them")

	shares = map[TopicPartition]int32{parts[0]: recordAtFirstBytes, parts[1]: recordAtFirstBytes}
	req = recordAtRequest(m, parts[:2], offsets, shares).(*kmsg.FetchRequest)
	require.Equal(t, int32(2*recordAtFirstBytes), req.MaxBytes, "a few partitions ask for the sum of their shares")
}
