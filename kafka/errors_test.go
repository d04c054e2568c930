package kafka

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
)

func TestClassify(t *testing.T) {
	for code, want := range map[int16]RetryClass{
		kerr.NotLeaderForPartition.Code:     MovedLeader,
		kerr.UnknownTopicOrPartition.Code:   MovedLeader,
		kerr.LeaderNotAvailable.Code:        MovedLeader,
		kerr.FencedLeaderEpoch.Code:         MovedLeader,
		kerr.UnknownLeaderEpoch.Code:        MovedLeader,
		kerr.NotCoordinator.Code:            MovedCoordinator,
		kerr.CoordinatorNotAvailable.Code:   MovedCoordinator,
		kerr.CoordinatorLoadInProgress.Code: MovedCoordinator,
		kerr.RequestTimedOut.Code:           Transient,
		kerr.TopicAuthorizationFailed.Code:  Fatal,
		kerr.CorruptMessage.Code:            Fatal,
		kerr.OffsetOutOfRange.Code:          Fatal,
	} {
		require.Equal(t, want, Classify(code), kerr.ErrorForCode(code).Error())
	}
}

func TestErrorsNameBrokerAndAdvise(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	be := &BrokerError{API: "Fetch", ID: 2, Addr: "kafka-2.internal:9092", Err: dial}
	require.Contains(t, be.Error(), "broker 2 (kafka-2.internal:9092)")
	require.Contains(t, be.Error(), "advertised.listeners")

	pe := &PartitionError{API: "ListOffsets", Topic: "orders", Partition: 3, Broker: 1, Addr: "127.0.0.1:9093", Err: kerr.NotLeaderForPartition}
	msg := pe.Error()
	require.True(t, strings.HasPrefix(msg, "ListOffsets: partition orders/3 on broker 1 (127.0.0.1:9093): NOT_LEADER_FOR_PARTITION"), msg)
	require.Contains(t, msg, "refreshed metadata and retried")

	ge := &GroupError{API: "OffsetFetch", Group: "billing", Broker: 0, Addr: "h:1", Err: kerr.NotCoordinator}
	require.Contains(t, ge.Error(), `group "billing" on coordinator broker 0 (h:1): NOT_COORDINATOR`)
	require.True(t, errors.Is(ge, kerr.NotCoordinator))
}

// A commit OffsetFetch could not give because a transaction is pending
// says what to do: wait for the transaction, then ask again.
func TestUnstableOffsetCommitSaysToTryAgain(t *testing.T) {
	pe := &PartitionError{API: "OffsetFetch", Topic: "orders", Partition: 1, Broker: 2, Addr: "h:3", Err: kerr.UnstableOffsetCommit}
	require.Contains(t, pe.Error(), "OffsetFetch: partition orders/1 on broker 2 (h:3): UNSTABLE_OFFSET_COMMIT")
	require.Contains(t, pe.Error(), "try again once it commits or aborts")
}

// TestTxnCoordinatorErrorsNameTheTransactionalID: a transactional id's
// coordinator error says it is the transactional id's coordinator (not a
// group's), and an authorization failure says which ACL to ask for.
func TestTxnCoordinatorErrorsNameTheTransactionalID(t *testing.T) {
	ge := &GroupError{API: "DescribeTransactions", Kind: "transactional id", Group: "pay-1", Broker: 2, Addr: "h:3", Err: kerr.NotCoordinator}
	msg := ge.Error()
	require.Contains(t, msg, `transactional id "pay-1" on coordinator broker 2 (h:3): NOT_COORDINATOR`)
	require.Contains(t, msg, "the transactional id's coordinator is moving or loading")
	require.NotContains(t, msg, "group")

	ge = &GroupError{API: "DescribeTransactions", Kind: "transactional id", Group: "pay-1", Broker: 2, Addr: "h:3", Err: kerr.TransactionalIDAuthorizationFailed}
	require.Contains(t, ge.Error(), "DESCRIBE on the transactional id")
}
