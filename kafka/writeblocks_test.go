package kafka

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The writer's memory does not grow with its transaction: the record
// blocks the producer has answered are carved from again before the
// commit, so one transaction of 200,000 records allocates no more blocks
// than the producer's buffer can hold at once (where keeping them to the
// commit took one per 512 records: 391), and Answered tells the caller,
// before the commit, that the bytes of those records are free.
func TestWriterReusesAnsweredBlocksWithinATransaction(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	w, err := f.cl.NewWriter(ctx, WriterConfig{TransactionalID: NewTransactionalID("test"), MaxTxnRecords: 1 << 30, MaxTxnBytes: 1 << 40})
	require.NoError(t, err)
	defer w.Close()
	const n = 200000
	for i := 0; i < n; i++ {
		committed, err := w.Write(ctx, &OutRecord{Topic: "t", Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))})
		require.NoError(t, err)
		require.False(t, committed, "record %d: one transaction for all", i)
	}
	bound := writerBufferedRecords/blockRecords + maxFreeBlocks + 2
	require.LessOrEqual(t, w.made, bound, "record blocks allocated for %d records in one transaction", n)
	// The producer answers without a commit; the last block, still being
	// carved from, is not counted until it is full.
	for w.Answered() < n-blockRecords {
		require.NoError(t, ctx.Err(), "answered %d of %d before the commit", w.Answered(), n)
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, w.Commit(ctx))
	require.Equal(t, 1, w.Transactions())
	var total int64
	for _, pw := range w.Written() {
		require.NoError(t, pw.Err)
		total += pw.Records
	}
	require.Equal(t, int64(n), total)
}

// A transaction open for MaxTxnAge is committed at the next look at its
// age (every txnAgeEvery records), however few records or bytes it holds:
// a slow cluster does not run it into its transaction timeout.
func TestWriterCommitsATransactionThatIsOpenTooLong(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w, err := f.cl.NewWriter(ctx, WriterConfig{TransactionalID: NewTransactionalID("test"), MaxTxnRecords: 1 << 30, MaxTxnAge: time.Nanosecond})
	require.NoError(t, err)
	defer w.Close()
	for i := 1; i <= 2*txnAgeEvery; i++ {
		committed, err := w.Write(ctx, &OutRecord{Topic: "t", Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))})
		require.NoError(t, err)
		require.Equal(t, i%txnAgeEvery == 0, committed, "record %d", i)
	}
	require.Equal(t, 2, w.Transactions())
}

// With MaxInFlight, what the caller must keep for the writer (the records
// since the first one the producer has not answered) never exceeds it,
// however far the producer's own buffer would let Write run ahead.
func TestWriterKeepsItsWindowOfRecordsInFlight(t *testing.T) {
	f := newTracedFake(t)
	f.topic(t, "t", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const window = 4 * blockRecords
	w, err := f.cl.NewWriter(ctx, WriterConfig{TransactionalID: NewTransactionalID("test"), MaxTxnRecords: 1 << 30, MaxInFlight: window})
	require.NoError(t, err)
	defer w.Close()
	for i := 1; i <= 50000; i++ {
		_, err := w.Write(ctx, &OutRecord{Topic: "t", Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))})
		require.NoError(t, err)
		require.LessOrEqual(t, int64(i)-w.promised.Load(), int64(window), "record %d", i)
		require.LessOrEqual(t, int64(i)-w.Answered(), int64(inFlightSpan*window), "record %d", i)
	}
	require.NoError(t, w.Commit(ctx))
}
