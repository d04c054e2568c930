package jsontext

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kql-dev/kql/internal/oldjson"
)

// tricky are what the random strings are mostly made of: every byte a
// JSON string escapes or checks, the bytes the masks may name by mistake
// after one ('#' after '"', ']' after '\\', a space after a control
// character), runes of every length, U+2028 and U+2029 and their
// neighbours, and broken sequences.
var tricky = [][]byte{
	{'"'}, {'\\'}, {'\n'}, {'\r'}, {'\t'}, {0}, {0x01}, {0x08}, {0x0c}, {0x1f}, {0x7f}, {' '}, {'#'}, {']'}, {'/'}, {'<'},
	{0x80}, {0xbf}, {0xc0}, {0xc1}, {0xc3}, {0xe2}, {0xed}, {0xf0}, {0xf4}, {0xf5}, {0xff},
	[]byte("é"), []byte("日"), []byte("😀"), []byte("\u2028"), []byte("\u2029"), []byte("\u2027"), []byte("\u202a"),
	{0xe2, 0x80}, {0xe2, 0x80, 0xa8}, {0xed, 0xa0, 0x80}, {0xf4, 0x90, 0x80, 0x80}, {0xef, 0xbf, 0xbd},
}

func randomString(r *rand.Rand) []byte {
	n := r.IntN(24)
	if r.IntN(8) == 0 {
		n = r.IntN(600)
	}
	var b []byte
	for len(b) < n {
		if r.IntN(3) == 0 {
			b = append(b, tricky[r.IntN(len(tricky))]...)
			continue
		}
		for range r.IntN(17) {
			b = append(b, byte(' '+r.IntN(95)))
		}
	}
	return b
}

// The word-at-a-time writer writes what the old one wrote, for random
// strings biased toward the bytes that need a look, after prefixes with
// and without spare room.
func TestJSONStringEncodingMatchesTheOldOne(t *testing.T) {
	r := rand.New(rand.NewPCG(22, uint64(time.Now().UnixNano())))
	for range 200000 {
		s := randomString(r)
		var prefix []byte
		switch r.IntN(3) {
		case 1:
			prefix = []byte("ab")
		case 2:
			prefix = make([]byte, r.IntN(5), 5+r.IntN(200))
		}
		want, wantOK := oldjson.AppendString(bytes.Clone(prefix), s, false)
		if got := AppendString(bytes.Clone(prefix), s); !wantOK || !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q, %q) = %q, want %q", prefix, s, got, want)
		}
		want, wantOK = oldjson.AppendString(bytes.Clone(prefix), s, true)
		got, ok := AppendValidString(bytes.Clone(prefix), s)
		if ok != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("AppendValidString(%q, %q) = %q, %v, want %q, %v", prefix, s, got, ok, want, wantOK)
		}
	}
}
