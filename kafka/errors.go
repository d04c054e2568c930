package kafka

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
)

// RetryClass says what a failed answer asks the client to do before asking
// again. "Retry" alone is not an instruction: a moved leader needs fresh
// metadata, a moved coordinator needs a fresh FindCoordinator, a transient
// failure needs neither.
type RetryClass int

const (
	Fatal            RetryClass = iota // do not retry: report
	MovedLeader                        // refresh metadata, then ask the new leader
	MovedCoordinator                   // FindCoordinator again, then ask the new coordinator
	Transient                          // back off briefly and ask the same broker again
)

// Classify returns the retry class of a Kafka error code.
func Classify(code int16) RetryClass {
	switch code {
	case kerr.NotLeaderForPartition.Code, kerr.UnknownTopicOrPartition.Code,
		kerr.LeaderNotAvailable.Code, kerr.FencedLeaderEpoch.Code,
		kerr.UnknownLeaderEpoch.Code, kerr.ReplicaNotAvailable.Code,
		kerr.KafkaStorageError.Code, kerr.NotController.Code:
		return MovedLeader
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code,
		kerr.CoordinatorLoadInProgress.Code:
		return MovedCoordinator
	case kerr.RequestTimedOut.Code, kerr.NetworkException.Code,
		kerr.ThrottlingQuotaExceeded.Code,
		// A new leader whose high watermark has not caught up yet: it
		// needs its followers' next fetch (up to replica.fetch.wait.max.ms,
		// 500 ms by default), not other metadata.
		kerr.OffsetNotAvailable.Code:
		return Transient
	}
	return Fatal
}

// BrokerError is a request that could not be sent to, or was not answered
// by, one broker.
type BrokerError struct {
	API  string
	ID   int32
	Addr string
	Err  error
}

func (e *BrokerError) Error() string {
	if e.ID < 0 { // a bootstrap seed, before its id is known: nothing advertised it
		return fmt.Sprintf("%s to bootstrap address %s failed: %v", e.API, e.Addr, e.Err)
	}
	msg := fmt.Sprintf("%s to broker %d (%s) failed: %v", e.API, e.ID, e.Addr, e.Err)
	if isDialError(e.Err) {
		msg += fmt.Sprintf("; kql could not connect to %s, the address the cluster advertises for broker %d: if that broker is up, check its advertised.listeners", e.Addr, e.ID)
	}
	return msg
}
func (e *BrokerError) Unwrap() error { return e.Err }

func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH)
}

// PartitionError is one partition's failure inside an otherwise answered
// request (kadm style: the request succeeded, this item did not).
type PartitionError struct {
	API       string
	Topic     string
	Partition int32
	Broker    int32  // -1 when no broker could be chosen (no leader)
	Addr      string // "" when Broker is -1
	Err       error  // a *kerr.Error or a request-level error
}

func (e *PartitionError) Error() string {
	where := "no broker (the partition has no leader)"
	if e.Broker >= 0 {
		where = fmt.Sprintf("broker %d (%s)", e.Broker, e.Addr)
	}
	return fmt.Sprintf("%s: partition %s/%d on %s: %s", e.API, e.Topic, e.Partition, where, describe(e.Err))
}
func (e *PartitionError) Unwrap() error { return e.Err }

// GroupError is one group's failure.
type GroupError struct {
	API    string
	Kind   string // what Group names: "" or "group", or "transactional id"
	Group  string
	Broker int32
	Addr   string
	Err    error
}

func (e *GroupError) Error() string {
	kind := e.Kind
	if kind == "" {
		kind = "group"
	}
	if e.API == "FindCoordinator" && e.Broker >= 0 {
		// The lookup itself failed: the broker that answered it is not
		// the group's coordinator.
		return fmt.Sprintf("FindCoordinator for %s %q, answered by broker %d (%s): %s", kind, e.Group, e.Broker, e.Addr, describeKey(e.Err, kind))
	}
	where := "no coordinator"
	if e.Broker >= 0 {
		where = fmt.Sprintf("coordinator broker %d (%s)", e.Broker, e.Addr)
	}
	return fmt.Sprintf("%s: %s %q on %s: %s", e.API, kind, e.Group, where, describeKey(e.Err, kind))
}
func (e *GroupError) Unwrap() error { return e.Err }

// Describe is describe for other packages: a Kafka error's name and what to do.
func Describe(err error) string { return describe(err) }

// IsAuthorization reports whether err is a Kafka authorization failure.
func IsAuthorization(err error) bool {
	for _, e := range []error{kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed,
		kerr.TransactionalIDAuthorizationFailed, kerr.DelegationTokenAuthorizationFailed} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// IsUnsupportedVersion reports whether err is a broker's
// UNSUPPORTED_VERSION: it is too old for what was asked.
func IsUnsupportedVersion(err error) bool { return errors.Is(err, kerr.UnsupportedVersion) }

// brokerMessage is a Kafka error with the explanation the broker sent
// along (the ErrorMessage of newer responses), which often names the
// reason better than the code does.
type brokerMessage struct {
	err error
	msg string
}

func (e *brokerMessage) Error() string { return e.err.Error() + ": " + e.msg }
func (e *brokerMessage) Unwrap() error { return e.err }

// withBrokerMessage adds msg to err, unless it is empty.
func withBrokerMessage(err error, msg string) error {
	if msg == "" || err == nil {
		return err
	}
	return &brokerMessage{err: err, msg: msg}
}

// describe turns a Kafka error into its name plus a sentence a person can act on.
func describe(err error) string { return describeKey(err, "group") }

// describeKey is describe for an error about a coordinator's key: kind
// ("group" or "transactional id") says whose coordinator moved, so a
// transaction's error does not send the reader looking for a group.
func describeKey(err error, kind string) string {
	var bm *brokerMessage
	if errors.As(err, &bm) {
		return describeKey(bm.err, kind) + " (the broker says: " + bm.msg + ")"
	}
	var lw *LeaderWaitError
	if errors.As(err, &lw) {
		return lw.Error() // it describes the Kafka error it wraps itself
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err.Error()
	}
	hint := ""
	switch ke.Code {
	case kerr.NotLeaderForPartition.Code, kerr.LeaderNotAvailable.Code, kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code:
		hint = "the partition's leadership is moving; kql refreshed metadata and retried, try again shortly"
	case kerr.UnknownTopicOrPartition.Code:
		hint = "the broker does not know this partition; it may have been deleted or not yet propagated"
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
		hint = "the " + kind + "'s coordinator is moving or loading; kql looked it up again and retried, try again shortly"
	case kerr.TopicAuthorizationFailed.Code:
		return ke.Message + ": not authorized: no ACL allows this on the topic (DESCRIBE to see it, READ to consume, WRITE to produce, CREATE, DELETE or ALTER to change it); ask the cluster's operator"
	case kerr.GroupAuthorizationFailed.Code:
		return ke.Message + ": not authorized: no ACL allows this on the group (DESCRIBE to see it, READ for its offsets, DELETE to delete it); ask the cluster's operator"
	case kerr.TransactionalIDAuthorizationFailed.Code:
		return ke.Message + ": not authorized: no ACL allows this on the transactional id (DESCRIBE on the transactional id to list or describe it); ask the cluster's operator"
	case kerr.ClusterAuthorizationFailed.Code:
		return ke.Message + ": not authorized: no ACL allows this on the cluster; ask the cluster's operator"
	case kerr.RequestTimedOut.Code:
		hint = "the broker did not finish in time; it may be overloaded"
	case kerr.UnstableOffsetCommit.Code:
		hint = "a transaction that commits offsets for this partition is still open; try again once it commits or aborts (at most the producer's transaction.timeout.ms)"
	case kerr.OffsetOutOfRange.Code:
		hint = "the offset is outside the partition's log (retention or compaction moved its start)"
	}
	s := ke.Message + " (" + ke.Description + ")"
	if ke.Description == "" {
		s = ke.Message
	}
	if hint != "" {
		s += ": " + hint
	}
	return s
}

// IsNoReassignmentInProgress reports a partition's NO_REASSIGNMENT_IN_PROGRESS:
// there was no move to cancel (it may have finished a moment ago).
func IsNoReassignmentInProgress(err error) bool {
	return errors.Is(err, kerr.NoReassignmentInProgress)
}

// IsElectionNotNeeded reports a partition's ELECTION_NOT_NEEDED: the
// replica an election would pick already leads, an answer, not a failure.
func IsElectionNotNeeded(err error) bool { return errors.Is(err, kerr.ElectionNotNeeded) }

// IsClusterAuthorization reports CLUSTER_AUTHORIZATION_FAILED: the principal
// lacks an ACL on the cluster resource.
func IsClusterAuthorization(err error) bool { return errors.Is(err, kerr.ClusterAuthorizationFailed) }

// IsBrokerTooOld reports that a request was not sent because the broker
// said (ApiVersions) it does not know it, e.g. ConsumerGroupDescribe
// before Kafka 4.0.
func IsBrokerTooOld(err error) bool {
	var be *BrokerError
	return errors.As(err, &be) && brokerTooOld(be.Err)
}
