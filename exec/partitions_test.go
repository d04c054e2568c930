package exec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kql-dev/kql/kafka"
	"github.com/kql-dev/kql/kafka/kafkatest"
)

// The log's start can pass the latest offset answered a moment before
// (DeleteRecords or retention between SHOW PARTITIONS' two concurrent
// ListOffsets): the earliest offset comes back greater than the latest.
// The row then says what was true when the earliest was read, a log that
// is empty from there (its end is at least its start), never a negative
// message count. kfake's hook answers the earliest request with offset 15
// while the partition's high watermark is 10, which is that race held
// still.
func TestShowPartitionsLogStartPastTheLatestIsEmptyNotNegative(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	f.produce(t, "t", 1, 10)
	earliestAt(f, 15)
	rows, _ := mustRun(t, f.sess, parse(t, "SHOW PARTITIONS OF t"))
	require.Len(t, rows, 1)
	require.Equal(t, []any{int64(15), int64(15), int64(0)}, []any{rows[0][7], rows[0][8], rows[0][9]}, "earliest_offset, latest_offset, messages")
}

// DESCRIBE TOPIC reads the high watermark after the earliest offset, but
// a leader that moved in between (or kfake's hook, answering the earliest
// with 15 against a high watermark of 10) can answer one below the other:
// the row is an empty log at the start, as SHOW PARTITIONS shows it, not
// messages -5.
func TestDescribeTopicLogStartPastTheLatestIsEmptyNotNegative(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 1)
	f.produce(t, "t", 1, 10)
	earliestAt(f, 15)
	rows, _ := mustRun(t, f.sess, parse(t, "DESCRIBE TOPIC t"))
	require.Len(t, rows, 1)
	require.Equal(t, []any{int64(15), int64(15), int64(0)}, []any{rows[0][4], rows[0][5], rows[0][6]}, "earliest_offset, latest_offset, messages")
}

// earliestAt makes every broker answer each earliest-offset ListOffsets
// with off, whatever the log holds: the log's start moved past the other
// answers, held still.
func earliestAt(f *fake, off int64) {
	f.ControlKey(int16(kmsg.ListOffsets), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		f.KeepControl()
		req := kr.(*kmsg.ListOffsetsRequest)
		if req.Topics[0].Partitions[0].Timestamp != kafka.Earliest {
			return nil, nil, false
		}
		return kafkatest.ListOffsetsAnswer(req, func(p *kmsg.ListOffsetsResponseTopicPartition) {
			p.Offset, p.Timestamp = off, -1
		}), nil, true
	})
}
