package exec

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

func TestProduceNullsAndEmpties(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	null := &lang.Literal{Null: true}
	empty := &lang.Literal{Bytes: []byte{}}
	mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Key: null, Value: null})
	mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Key: empty, Value: empty,
		Headers: []lang.Header{{Key: "a", Value: lang.Literal{Null: true}}, {Key: "a", Value: lang.Literal{Bytes: []byte{}}}, {Key: "b", Value: lang.Literal{Bytes: []byte("x")}}}})
	rows := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Partitions: []int32{1}})
	require.Len(t, rows, 2)
	require.Nil(t, rows[0][3], "null key")
	require.Nil(t, rows[0][4], "null value (a tombstone)")
	require.Equal(t, []byte{}, rows[1][3], "empty key is not NULL")
	require.Equal(t, []byte{}, rows[1][4], "empty value is not NULL")
	require.Equal(t, []result.Header{{Key: "a", Value: nil}, {Key: "a", Value: []byte{}}, {Key: "b", Value: []byte("x")}}, rows[1][5])

	// An empty (non-null) key is hashed like any key, as Java does.
	for _, k := range []string{"", "a", "customer-42", "\xff\xfe\x00"} {
		res, _ := mustRun(t, f.sess, &lang.Produce{Topic: "t", Key: &lang.Literal{Bytes: []byte(k)}, Value: empty})
		require.Equal(t, int64(javaMurmur2([]byte(k))&0x7fffffff%3), res[0][1], "key %q", k)
	}
}

// javaMurmur2 is org.apache.kafka.common.utils.Utils.murmur2, transcribed.
func javaMurmur2(data []byte) uint32 {
	const seed, m, r = uint32(0x9747b28c), uint32(0x5bd1e995), 24
	n := len(data)
	h := seed ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

func TestProduceToAPartitionWhoseLeaderMoved(t *testing.T) {
	f := newFake(t)
	f.spread(t, "t", 3)
	rows, _ := mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Value: &lang.Literal{Bytes: []byte("before")}})
	require.Equal(t, int64(0), rows[0][2])
	require.NoError(t, f.MoveTopicPartition("t", 1, 0))
	rows, _ = mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Value: &lang.Literal{Bytes: []byte("after")}})
	require.Equal(t, int64(1), rows[0][1])
	require.Equal(t, int64(1), rows[0][2])
	got := consumeAll(t, f.sess, &lang.Consume{Topic: "t", Partitions: []int32{1}})
	require.Len(t, got, 2, "written once each")
}

// Partitions added by another tool (kafka-topics --alter) during the
// session, or a topic dropped and created again with more partitions: kql's
// own metadata knows the new partition, so PRODUCE must write to it instead
// of failing on the producer's stale view.
func TestProduceToAPartitionAddedDuringTheSession(t *testing.T) {
	f := newFake(t)
	mustRun(t, f.sess, &lang.CreateTopic{Topic: "t", Partitions: i32(2), Replication: i16(3)})
	mustRun(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(1), Value: &lang.Literal{Bytes: []byte("old")}})
	_, err := f.adm.UpdatePartitions(ctxT(t), 4, "t")
	require.NoError(t, err)
	rows, _, err := run(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(3), Value: &lang.Literal{Bytes: []byte("new")}})
	require.NoError(t, err, "PRODUCE into a partition added by another tool")
	require.Equal(t, int64(3), rows[0][1])

	mustRun(t, f.sess, &lang.DropTopic{Topic: "t"})
	mustRun(t, f.sess, &lang.CreateTopic{Topic: "t", Partitions: i32(6), Replication: i16(3)})
	rows, _, err = run(t, f.sess, &lang.Produce{Topic: "t", Partition: i32(5), Value: &lang.Literal{Bytes: []byte("new")}})
	require.NoError(t, err, "PRODUCE after DROP and CREATE with more partitions")
	require.Equal(t, int64(5), rows[0][1])
	require.Equal(t, int64(0), rows[0][2])
}
