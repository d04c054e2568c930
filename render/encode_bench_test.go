package render

import (
	"strconv"
	"testing"

	"github.com/kql-dev/kql/internal/benchcpu"
	"github.com/kql-dev/kql/result"
)

// kqlBenchRecords are kql-bench's seeded records as a lane encodes them:
// a key k<i>, a 100 B JSON value (cmd/kql-bench's appendValue), no headers,
// one partition's records after another (a fetched batch is one
// partition's), 32 partitions written round-robin 1 ms apart, so a
// partition's timestamps are 32 ms apart.
func kqlBenchRecords(perPart int) []result.Record {
	const parts = 32
	recs := make([]result.Record, 0, parts*perPart)
	for p := range parts {
		for o := range perPart {
			i := int64(o*parts + p)
			v := []byte(`{"id":`)
			v = strconv.AppendInt(v, i, 10)
			v = append(v, `,"p":`...)
			v = strconv.AppendInt(v, i%10, 10)
			v = append(v, `,"name":"user-`...)
			v = strconv.AppendInt(v, i, 10)
			v = append(v, '-')
			for len(v) < 98 {
				v = append(v, byte('a'+len(v)%26))
			}
			v = append(v, `"}`...)
			recs = append(recs, result.Record{Partition: int32(p), Offset: int64(o), Timestamp: 1796608816865 + i,
				Key: strconv.AppendInt([]byte("k"), i, 10), Value: v})
		}
	}
	return recs
}

// benchEncoder times one record per op through a lane's encoder, appending
// to a buffer emptied at 64 KiB as a lane's chunk is.
func benchEncoder(b *testing.B, newEnc func() result.RecordEncoder, recs []result.Record) {
	enc := newEnc()
	buf := make([]byte, 0, 72<<10)
	var out int64
	i := 0
	b.ReportAllocs()
	defer benchcpu.Report(b)()
	for b.Loop() {
		if len(buf) > 64<<10 {
			out += int64(len(buf))
			buf = buf[:0]
		}
		buf = enc(buf, &recs[i])
		if i++; i == len(recs) {
			i = 0
		}
	}
	out += int64(len(buf))
	b.ReportMetric(float64(out)/float64(b.N), "B/rec")
}

func BenchmarkEncodeJSONLBench(b *testing.B) { benchEncoder(b, newJSONLEncoder, kqlBenchRecords(256)) }
func BenchmarkEncodeCSVBench(b *testing.B)   { benchEncoder(b, newCSVEncoder, kqlBenchRecords(256)) }
func BenchmarkEncodeTSVBench(b *testing.B)   { benchEncoder(b, newTSVEncoder, kqlBenchRecords(256)) }

// benchRecordWithHeaders is benchRow's record: a longer key and value and
// two headers.
func benchRecordsWithHeaders() []result.Record {
	recs := kqlBenchRecords(32)
	for i := range recs {
		recs[i].Headers = []result.Header{{Key: "source", Value: []byte("web")}, {Key: "trace", Value: []byte("a1b2c3d4")}}
	}
	return recs
}

func BenchmarkEncodeJSONLHeaders(b *testing.B) {
	benchEncoder(b, newJSONLEncoder, benchRecordsWithHeaders())
}
func BenchmarkEncodeCSVHeaders(b *testing.B) {
	benchEncoder(b, newCSVEncoder, benchRecordsWithHeaders())
}
