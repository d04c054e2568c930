package render

import (
	"fmt"
	"strings"
	"testing"
)

// Cell texts share blocks (intern): every text stays as it was made while
// later cells fill and overflow the block, with m.display reused in
// between, and a text too large for a block is its own string.
func TestCellTextsSurviveLaterCells(t *testing.T) {
	m := &cellMaker{}
	var want, got []string
	for i := 0; len(want) < 20000; i++ {
		s := fmt.Sprintf("cell-%d-%s", i, strings.Repeat("x", i%37))
		if i == 5000 {
			s = strings.Repeat("big", arenaChunk/2)
		}
		c := m.make([]byte(s))
		want, got = append(want, s), append(got, c.text)
		require.Equal(t, len(s), c.width)
	}
	require.Equal(t, want, got)
	require.Equal(t, "", m.make(nil).text)
}
