package ingest

import "testing"

// One line of the bench's export (make bench's 100 B JSON values).
func BenchmarkFastJSONL(b *testing.B) {
	line := []byte(`{"partition":0,"offset":0,"timestamp":"2026-12-01T14:50:22.154Z","key":"k0","value":"{\"id\":0,\"p\":0,\"name\":\"user-0-defghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrst\"}","headers":[]}`)
	var s slab
	var rec Record
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		s.reset()
		if !fastJSONL(line, &s, &rec) {
			b.Fatal("not read")
		}
	}
}
