package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transactions (KIP-98, KIP-664). Each request has its own routing rule:
//
//   - ListTransactions: every broker, unioned. A broker lists only the
//     transactional ids it coordinates, like ListGroups.
//   - DescribeTransactions: the transactional id's coordinator
//     (FindCoordinator, key type transaction), batched per coordinator.
//   - DescribeProducers: each partition's leader, batched per leader. Only
//     the leader's producer state is the one that holds back the last
//     stable offset.
//   - WriteTxnMarkers: the partition's leader, as Kafka's
//     Admin.abortTransaction sends it (the coordinator's own path, used by
//     an operator for a transaction no coordinator will ever end).

// TxnListing is one transactional id as a coordinator lists it.
type TxnListing struct {
	ID          string
	ProducerID  int64
	State       string // Kafka's name: Empty, Ongoing, PrepareCommit, CompleteAbort, ...
	Coordinator int32  // the broker that listed it
}

// ListTransactions unions ListTransactions over every broker. producerIDs,
// when not empty, keeps only those producers (the broker filters). A broker
// that could not be asked, or answered with an error, is in missing: the
// union is then partial, and says which broker it lacks. The listing is
// sorted by transactional id; an id two brokers list (a coordinator that
// moved between the two answers) appears once per broker.
func (c *Cluster) ListTransactions(ctx context.Context, producerIDs []int64) ([]TxnListing, []*BrokerError, error) {
	const api = "ListTransactions"
	answers, failed, err := c.EveryBroker(ctx, api, func() kmsg.Request {
		req := kmsg.NewPtrListTransactionsRequest()
		req.ProducerIDFilters = producerIDs
		req.DurationFilterMillis = -1
		return req
	}, func(r kmsg.Response) bool {
		code := r.(*kmsg.ListTransactionsResponse).ErrorCode
		return code == kerr.CoordinatorLoadInProgress.Code || code == kerr.CoordinatorNotAvailable.Code
	})
	if err != nil {
		return nil, nil, err
	}
	missing := failed
	var out []TxnListing
	for _, a := range answers {
		resp := a.Resp.(*kmsg.ListTransactionsResponse)
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			missing = append(missing, &BrokerError{API: api, ID: a.Broker.ID, Addr: a.Broker.Addr(), Err: err})
			continue
		}
		for _, t := range resp.TransactionStates {
			out = append(out, TxnListing{ID: t.TransactionalID, ProducerID: t.ProducerID, State: t.TransactionState, Coordinator: a.Broker.ID})
		}
	}
	slices.SortFunc(out, func(a, b TxnListing) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return int(a.Coordinator) - int(b.Coordinator)
	})
	slices.SortFunc(missing, func(a, b *BrokerError) int { return int(a.ID) - int(b.ID) })
	return out, missing, nil
}

// TxnDescription is a transactional id as its coordinator describes it.
type TxnDescription struct {
	ID            string
	Coordinator   int32 // the broker that answered
	State         string
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	StartMs       int64            // the current transaction's start, epoch ms; -1 when none is open
	Partitions    []TopicPartition // in the transaction (or still waiting for markers), sorted
}

// DescribeTransactions asks each transactional id's coordinator, one
// request per coordinator broker. An id that failed (its coordinator moved
// for good, TRANSACTIONAL_ID_NOT_FOUND, not authorized) is in the failures
// with the broker that answered.
func (c *Cluster) DescribeTransactions(ctx context.Context, ids []string) (map[string]TxnDescription, map[string]*GroupError, error) {
	if len(ids) == 0 {
		return map[string]TxnDescription{}, nil, nil
	}
	answered := map[string]int32{}
	got, failed, err := Coordinators(ctx, c, ids, GroupRequest[TxnDescription]{
		API:  "DescribeTransactions",
		Keys: TransactionKeys,
		Build: func(batch []string) kmsg.Request {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = batch
			return req
		},
		Parse: func(raw kmsg.Response) []GroupAnswer[TxnDescription] {
			resp := raw.(*kmsg.DescribeTransactionsResponse)
			out := make([]GroupAnswer[TxnDescription], 0, len(resp.TransactionStates))
			for _, st := range resp.TransactionStates {
				d := TxnDescription{ID: st.TransactionalID, State: st.State, ProducerID: st.ProducerID,
					ProducerEpoch: st.ProducerEpoch, TimeoutMs: st.TimeoutMillis, StartMs: st.StartTimestamp}
				for _, t := range st.Topics {
					for _, p := range t.Partitions {
						d.Partitions = append(d.Partitions, TopicPartition{Topic: t.Topic, Partition: p})
					}
				}
				slices.SortFunc(d.Partitions, compareTP)
				out = append(out, GroupAnswer[TxnDescription]{Group: st.TransactionalID, Value: d, Code: st.ErrorCode})
			}
			return out
		},
		Answered: func(id string, broker int32) { answered[id] = broker },
	})
	for id, d := range got {
		d.Coordinator = answered[id]
		got[id] = d
	}
	return got, failed, err
}

// IsTxnNotFound reports whether err says the coordinator has no such
// transactional id (it never initialized, or expired:
// transactional.id.expiration.ms).
func IsTxnNotFound(err error) bool { return errors.Is(err, kerr.TransactionalIDNotFound) }

// ProducerState is one active producer of a partition, as the partition's
// leader keeps it (DescribeProducers).
type ProducerState struct {
	ProducerID       int64
	ProducerEpoch    int32
	LastSequence     int32
	LastTimestamp    int64 // the timestamp of its last write, epoch ms
	CoordinatorEpoch int32 // -1 when no coordinator ever wrote a marker for it here
	TxnStartOffset   int64 // the first offset of its open transaction; -1 when none is open
}

// DescribeProducers asks each partition's leader for its active producers,
// one request per leader broker for up to describeProducersBatch
// partitions; more are asked in rounds of that many, as
// kafka-transactions.sh find-hanging does, so one request never carries a
// whole large cluster.
func (c *Cluster) DescribeProducers(ctx context.Context, m *Metadata, parts []TopicPartition) (map[TopicPartition][]ProducerState, map[TopicPartition]*PartitionError, error) {
	got := make(map[TopicPartition][]ProducerState, len(parts))
	var failed map[TopicPartition]*PartitionError
	for batch := range slices.Chunk(parts, describeProducersBatch) {
		g, f, err := c.describeProducers(ctx, m, batch)
		for tp, v := range g {
			got[tp] = v
		}
		for tp, pe := range f {
			if failed == nil {
				failed = make(map[TopicPartition]*PartitionError)
			}
			failed[tp] = pe
		}
		if err != nil {
			return got, failed, err
		}
	}
	return got, failed, nil
}

// describeProducersBatch is find-hanging's MAX_BATCH_SIZE.
const describeProducersBatch = 500

func (c *Cluster) describeProducers(ctx context.Context, m *Metadata, parts []TopicPartition) (map[TopicPartition][]ProducerState, map[TopicPartition]*PartitionError, error) {
	return Leaders(ctx, c, m, parts, LeaderRequest[[]ProducerState]{
		API: "DescribeProducers",
		Build: func(bparts []TopicPartition) kmsg.Request {
			req := kmsg.NewPtrDescribeProducersRequest()
			for _, tps := range byTopic(bparts) {
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic = tps.topic
				rt.Partitions = tps.partitions
				req.Topics = append(req.Topics, rt)
			}
			return req
		},
		Parse: func(raw kmsg.Response) []PartAnswer[[]ProducerState] {
			resp := raw.(*kmsg.DescribeProducersResponse)
			var out []PartAnswer[[]ProducerState]
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					ps := make([]ProducerState, 0, len(p.ActiveProducers))
					for _, ap := range p.ActiveProducers {
						ps = append(ps, ProducerState{ProducerID: ap.ProducerID, ProducerEpoch: ap.ProducerEpoch,
							LastSequence: ap.LastSequence, LastTimestamp: ap.LastTimestamp,
							CoordinatorEpoch: ap.CoordinatorEpoch, TxnStartOffset: ap.CurrentTxnStartOffset})
					}
					slices.SortFunc(ps, func(a, b ProducerState) int { return cmpInt64(a.ProducerID, b.ProducerID) })
					out = append(out, PartAnswer[[]ProducerState]{TP: TopicPartition{t.Topic, p.Partition}, Value: ps, Code: p.ErrorCode})
				}
			}
			return out
		},
	})
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// AbortSpec names one partition's open transaction to abort, as Kafka's
// AbortTransactionSpec does.
type AbortSpec struct {
	TP               TopicPartition
	ProducerID       int64
	ProducerEpoch    int16
	CoordinatorEpoch int32 // the leader refuses a marker older than the last coordinator epoch it saw
}

// AbortTransaction writes an abort marker for spec's producer into spec's
// partition: WriteTxnMarkers to the partition's leader, as Kafka's
// Admin.abortTransaction does. The leader then drops the producer's open
// transaction there and the last stable offset moves past it. It needs
// CLUSTER_ACTION on the cluster (a broker-to-broker request).
func (c *Cluster) AbortTransaction(ctx context.Context, m *Metadata, spec AbortSpec) error {
	const api = "WriteTxnMarkers"
	_, failed, err := Leaders(ctx, c, m, []TopicPartition{spec.TP}, LeaderRequest[struct{}]{
		API: api,
		Build: func(bparts []TopicPartition) kmsg.Request {
			req := kmsg.NewPtrWriteTxnMarkersRequest()
			mk := kmsg.NewWriteTxnMarkersRequestMarker()
			mk.ProducerID = spec.ProducerID
			mk.ProducerEpoch = spec.ProducerEpoch
			mk.Committed = false
			mk.CoordinatorEpoch = spec.CoordinatorEpoch
			for _, tps := range byTopic(bparts) {
				mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
				mt.Topic = tps.topic
				mt.Partitions = tps.partitions
				mk.Topics = append(mk.Topics, mt)
			}
			req.Markers = append(req.Markers, mk)
			return req
		},
		Parse: func(raw kmsg.Response) []PartAnswer[struct{}] {
			resp := raw.(*kmsg.WriteTxnMarkersResponse)
			var out []PartAnswer[struct{}]
			for _, mk := range resp.Markers {
				if mk.ProducerID != spec.ProducerID {
					continue
				}
				for _, t := range mk.Topics {
					for _, p := range t.Partitions {
						out = append(out, PartAnswer[struct{}]{TP: TopicPartition{t.Topic, p.Partition}, Code: p.ErrorCode})
					}
				}
			}
			return out
		},
		Item: func(tp TopicPartition) string {
			return fmt.Sprintf("%s producer %d epoch %d (abort)", tp, spec.ProducerID, spec.ProducerEpoch)
		},
	})
	if err != nil {
		return err
	}
	if pe := failed[spec.TP]; pe != nil {
		return pe
	}
	return nil
}
