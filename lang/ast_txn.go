package lang

import "time"

// The transaction statements (KIP-98 transactions, KIP-664 tooling): list,
// describe, find hanging ones and abort one. Like the other administration
// statements they meet the rest of the language only at the statement lists.

// ShowTransactions is SHOW TRANSACTIONS Query: every transactional id the
// coordinators know.
type ShowTransactions struct{ Query }

// DescribeTransaction is DESCRIBE TRANSACTION 'id' Query (alias DESC).
type DescribeTransaction struct {
	ID string
	Query
}

// ShowHangingTransactions is SHOW HANGING TRANSACTIONS [ON TOPIC t]
// [OLDER THAN d] Query: open transactions on partitions that no
// coordinator will ever end.
type ShowHangingTransactions struct {
	Topic     *string        // nil: every topic
	OlderThan *time.Duration // nil: not written (the executor uses Kafka's 15 minutes); > 0 when set
	Query
}

// AbortTransaction is ABORT TRANSACTION ON TOPIC t PARTITION p PRODUCER id
// EPOCH e [EXECUTE]: write an abort marker for one producer's open
// transaction on one partition. Without EXECUTE a dry run.
type AbortTransaction struct {
	Topic         string
	Partition     int32
	ProducerID    int64
	ProducerEpoch int16
	Execute       bool
}

func (*ShowTransactions) statement()        {}
func (*DescribeTransaction) statement()     {}
func (*ShowHangingTransactions) statement() {}
func (*AbortTransaction) statement()        {}
