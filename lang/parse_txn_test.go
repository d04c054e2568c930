package lang

import (
	"testing"
	"time"
)

var txnParseCases = []parseCase{
	{"SHOW TRANSACTIONS", &ShowTransactions{}},
	{"show transactions limit 5", &ShowTransactions{Query: Query{Limit: i64(5)}}},
	{"DESCRIBE TRANSACTION 'app-1'", &DescribeTransaction{ID: "app-1"}},
	{"DESC TRANSACTION payments", &DescribeTransaction{ID: "payments"}},
	{"DESCRIBE TRANSACTION transactions", &DescribeTransaction{ID: "transactions"}},
	{"SHOW HANGING TRANSACTIONS", &ShowHangingTransactions{}},
	{"SHOW HANGING TRANSACTIONS ON TOPIC orders", &ShowHangingTransactions{Topic: str("orders")}},
	{"SHOW HANGING TRANSACTIONS ON TOPIC orders OLDER THAN 1h30m LIMIT 3", &ShowHangingTransactions{Topic: str("orders"),
		OlderThan: dur(90 * time.Minute), Query: Query{Limit: i64(3)}}},
	{"SHOW HANGING TRANSACTIONS OLDER THAN 30s", &ShowHangingTransactions{OlderThan: dur(30 * time.Second)}},
	{"ABORT TRANSACTION ON TOPIC orders PARTITION 3 PRODUCER 4001 EPOCH 0", &AbortTransaction{Topic: "orders", Partition: 3, ProducerID: 4001}},
	{"abort transaction on topic orders epoch 7 producer 9223372036854775807 partition 0 execute", &AbortTransaction{
		Topic: "orders", ProducerID: 9223372036854775807, ProducerEpoch: 7, Execute: true}},
	{"ABORT TRANSACTION ON TOPIC epoch PARTITION 1 PRODUCER 2 EPOCH 32767", &AbortTransaction{Topic: "epoch", Partition: 1, ProducerID: 2, ProducerEpoch: 32767}},
	{"EXPLAIN SHOW HANGING TRANSACTIONS ON TOPIC t", &Explain{Stmt: &ShowHangingTransactions{Topic: str("t")}}},
}

func TestParseTransactions(t *testing.T) { checkParses(t, txnParseCases, true) }

func dur(d time.Duration) *time.Duration { return &d }
