package jsontext

import "testing"

// needsLook must flag exactly the words holding a byte AppendString
// cannot copy as it is; the byte-by-byte table is the reference.
func TestNeedsLookAgreesWithTheTable(t *testing.T) {
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 8; pos++ {
			w := []byte("abcdefgh")
			w[pos] = byte(b)
			var x uint64
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			want := !jsonPlain[b]
			if got := needsLook(x); got != want {
				t.Fatalf("byte %#x at %d: needsLook %v, want %v", b, pos, got, want)
			}
		}
	}
}
