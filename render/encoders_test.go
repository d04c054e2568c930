package render

import (
	"testing"

	"github.com/kql-dev/kql/result"
)

// The bench's reference contender writes with RecordEncoderFor: it must be
// kql's own output, line for line, or the comparison means nothing.
func TestRecordEncoderForWritesKQLsLines(t *testing.T) {
	rec := &result.Record{Partition: 1, Offset: 7, Timestamp: 1765072816865, Key: []byte("k1"),
		Value: []byte(`{"id":1}`), Headers: []result.Header{{Key: "h", Value: nil}}}
	for format, want := range map[string]string{
		"jsonl": `{"partition":1,"offset":7,"timestamp":"2025-12-07T02:00:16.865Z","key":"k1","value":"{\"id\":1}","headers":[{"key":"h","value":null}]}` + "\n",
		"csv":   `1,7,2025-12-07T02:00:16.865Z,k1,"{""id"":1}",h` + "\n",
	} {
		newEnc, err := RecordEncoderFor(format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if got := string(newEnc()(nil, rec)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", format, got, want)
		}
	}
	if _, err := RecordEncoderFor("table"); err == nil {
		t.Error("RecordEncoderFor(table): no error; a table is not written record by record")
	}
}
