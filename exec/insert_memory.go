package exec

import (
	"context"

	"github.com/kql-dev/kql/kafka"
)

// An INSERT holds two buffers in series: the source read's prefetch (the
// reader's budget) and the producer's records, buffered or in flight until
// their leader acknowledges them. Its peak memory is their sum, so each is
// sized to keep the other busy rather than to run alone.
//
// The producer's share is bounded in records: a copied record of 100 B
// costs about 500 B while the producer holds it (its kgo.Record, its place
// in a batch, and the source record, record slab and fetch response its
// bytes point into), and franz-go holds up to 50,000 records by default;
// its bound in bytes (32 MiB) is never reached by small records. How many
// it holds grows with the time an acknowledgement takes: on a real
// 3-broker Kafka (acks=all) the producer held 25,000 to 50,000 records,
// live heap 34 to 44 MiB and peak RSS 84 to 111 MiB, against 59 MiB on
// kfake, whose answers are immediate. With at most insertBufferedRecords
// the live heap was 22 to 25 MiB, and with the smaller read budget below
// 15 to 18 MiB (peak RSS 50 to 52 MiB on the same cluster).

// insertBufferedRecords bounds the records an INSERT's producer holds;
// tests lower it.
var insertBufferedRecords = 8192

// insertReadBudget is an INSERT's source read budget: half a plain read's,
// the producer's records being the other half.
const insertReadBudget = kafka.DefaultReadBudget / 2

type readBudgetKey struct{}

// withReadBudget bounds the read budget of the record read run under ctx
// to n bytes.
func withReadBudget(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, readBudgetKey{}, n)
}

// readBudget is the budget of a record read run under ctx: the session's
// (0: kafka.DefaultReadBudget), lowered to the bound ctx carries, if any.
func readBudget(ctx context.Context, session int64) int64 {
	n, ok := ctx.Value(readBudgetKey{}).(int64)
	if !ok || n <= 0 {
		return session
	}
	if session <= 0 {
		session = kafka.DefaultReadBudget
	}
	return min(session, n)
}
