package exec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kql-dev/kql/lang"
	"github.com/kql-dev/kql/result"
)

// benchTopic fills a 6-partition topic on a 3-broker kfake with n records.
func benchTopic(b *testing.B, n int) *Session {
	b.Helper()
	f := newFakeTB(b)
	cl, err := kgo.NewClient(kgo.SeedBrokers(f.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := f.adm.CreateTopic(ctx, 6, 3, nil, "bench"); err != nil {
		b.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	recs := make([]*kgo.Record, 0, 10000)
	for i := 0; i < n; i++ {
		recs = append(recs, &kgo.Record{Topic: "bench", Partition: int32(i % 6), Key: []byte(fmt.Sprint("key-", i)),
			Value: []byte(fmt.Sprintf(`{"order":%d,"amount":%d.50,"currency":"EUR"}`, i, i%1000)), Timestamp: base.Add(time.Duration(i) * time.Millisecond)})
		if len(recs) == cap(recs) || i == n-1 {
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
			recs = recs[:0]
		}
	}
	return f.sess
}

func benchConsume(b *testing.B, from lang.StartKind, n int64) {
	s := benchTopic(b, int(n))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := s.Execute(context.Background(), &lang.Consume{Topic: "bench", From: &lang.Start{Kind: from}, Limit: &n})
		if err != nil {
			b.Fatal(err)
		}
		var got int64
		rs := res.(result.RecordStream)
		for {
			if _, ok := rs.NextRecord(); !ok {
				break
			}
			got++
		}
		if err := res.Err(); err != nil || got != n {
			b.Fatalf("got %d rows, err %v", got, err)
		}
	}
	b.ReportMetric(float64(n*int64(b.N))/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkConsumeOldest100k reads 100k records over 6 partitions and 3
// brokers through the k-way merge.
func BenchmarkConsumeOldest100k(b *testing.B) { benchConsume(b, lang.FromOldest, 100_000) }

// BenchmarkConsumeNewest100k reads the newest 100k: key scan, then the page.
func BenchmarkConsumeNewest100k(b *testing.B) { benchConsume(b, lang.FromNewest, 100_000) }
