package schema

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
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

// TestAppendTimestamp holds appendTimestamp to time.Format's RFC 3339 text,
// around the epoch, leap days, the ends of years 0 and 9999 (where it hands
// over to time.Format) and at random.
func TestAppendTimestamp(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var vs []int64
	for _, at := range []time.Time{
		time.Unix(0, 0), time.Date(2000, 2, 29, 23, 59, 59, 0, time.UTC), time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
	} {
		for _, d := range []int64{-1001, -1, 0, 1, 999, 1000, 86_400_000} {
			vs = append(vs, at.UnixMilli()+d)
		}
	}
	for range 2000 {
		vs = append(vs, rng.Int64N(700_000_000_000_000)-350_000_000_000_000) // +-11,000 years of ms
		vs = append(vs, rng.Int64N(5_000_000_000_000)-1_000_000_000_000)     // 1938-2128
	}
	for _, v := range vs {
		if got, want := string(appendTimestamp(nil, v, 1e3, false)), `"`+time.UnixMilli(v).UTC().Format("2006-01-02T15:04:05.000Z07:00")+`"`; got != want {
			t.Errorf("millis %d: %s, want %s", v, got, want)
		}
		if got, want := string(appendTimestamp(nil, v, 1e6, false)), `"`+time.UnixMicro(v).UTC().Format("2006-01-02T15:04:05.000000Z07:00")+`"`; got != want {
			t.Errorf("micros %d: %s, want %s", v, got, want)
		}
	}
}

func TestAppendJSONText(t *testing.T) {
	for _, s := range []string{"", "id", "Amount_2", "_x", "a b", `q"uote`, "tab\t", "ü", "\xff"} {
		if got, want := string(appendJSONText([]byte("x"), s)), "x"+string(appendJSONBytes(nil, []byte(s))); got != want {
			t.Errorf("appendJSONText(%q) = %s, want %s", s, got, want)
		}
	}
}
