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
		want, got = append(want, s), append(got, m.str(c))
		require.Equal(t, len(s), c.width)
	}
	require.Equal(t, want, got)
	require.Equal(t, "", m.str(m.make(nil)))
}

// After rewind the blocks are filled again from the first: a page's worth
// of cells costs no allocation once the first page has sized them, and
// every text made after the rewind is as it was made.
func TestRewoundBlocksAreReusedForTheNextPage(t *testing.T) {
	m := &cellMaker{}
	page := func(p int) []string {
		var got []string
		for i := range 5000 { // about 110 KiB: two blocks
			c := m.make([]byte(fmt.Sprintf("page-%d-cell-%d-%s", p, i, strings.Repeat("y", i%11))))
			got = append(got, m.str(c))
		}
		return got
	}
	page(0)
	blocks := len(m.blocks)
	require.Equal(t, 2, blocks)
	for p := 1; p < 4; p++ {
		m.rewind()
		got := page(p)
		for i, s := range got {
			require.Equal(t, fmt.Sprintf("page-%d-cell-%d-%s", p, i, strings.Repeat("y", i%11)), s)
		}
	}
	require.Equal(t, blocks, len(m.blocks), "a rewound page reuses the blocks")
	text := []byte("a cell of a later page")
	allocs := testing.AllocsPerRun(100, func() {
		m.rewind()
		for range 3000 {
			m.make(text)
		}
	})
	require.Equal(t, 0.0, allocs)
}
