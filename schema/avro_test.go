package schema

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestAppendDecimal holds appendDecimal (an int64 fast path up to 8 bytes,
// math/big beyond) to math/big's exact decimal text, at the edges of both.
func TestAppendDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var cases [][]byte
	for n := 0; n <= 12; n++ {
		for _, fill := range []byte{0x00, 0xff, 0x7f, 0x80} {
			b := make([]byte, n)
			for i := range b {
				b[i] = fill
			}
			cases = append(cases, b)
			if n > 0 {
				c := append([]byte(nil), b...)
				c[0] ^= 0x80 // the other sign
				cases = append(cases, c)
			}
		}
		for range 50 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			cases = append(cases, b)
		}
	}
	for _, b := range cases {
		for _, scale := range []int{-2, 0, 1, 2, 9, 18, 25} {
			got := string(appendDecimal([]byte("x"), b, scale))[1:]
			if want := refDecimal(b, scale); got != want {
				t.Errorf("appendDecimal(%x, %d) = %s, want %s", b, scale, got, want)
			}
		}
	}
}

func refDecimal(b []byte, scale int) string {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	if scale <= 0 {
		return n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)).String()
	}
	return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale)
}
