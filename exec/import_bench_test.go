package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kql-dev/kql/lang"
)

// BenchmarkImportJSONL200k imports 200k lines like make bench's export (100 B
// JSON values) into 32 partitions on a 3-broker kfake: the profile of the
// import's own CPU (go test ./exec -run '^$' -bench ImportJSONL -cpuprofile).
func BenchmarkImportJSONL200k(b *testing.B) {
	f := newFakeTB(b)
	path := filepath.Join(b.TempDir(), "export.jsonl")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	const n = 200_000
	for i := range n {
		v := fmt.Sprintf(`{\"id\":%d,\"p\":%d,\"name\":\"user-%d-defghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrst\"}`, i, i%32, i)
		fmt.Fprintf(out, `{"partition":%d,"offset":%d,"timestamp":%q,"key":"k%d","value":"%s","headers":[]}`+"\n",
			i%32, i/32, base.Add(time.Duration(i)*time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z"), i, v)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		topic := fmt.Sprint("import-", i)
		if _, err := f.adm.CreateTopic(context.Background(), 32, 3, nil, topic); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := f.sess.Execute(context.Background(), &lang.Produce{Topic: topic, From: &lang.ImportSource{File: path, Format: "jsonl"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}
