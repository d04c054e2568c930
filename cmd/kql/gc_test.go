package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// kql collects less often than Go's default unless the user's GOGC says
// otherwise, which wins.
func TestTuneGCLeavesTheUsersGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	tuneGC(func(string) string { return "" })
	require.Equal(t, gcPercent, debug.SetGCPercent(100))

	tuneGC(func(k string) string {
		if k == "GOGC" {
			return "50"
		}
		return ""
	})
	require.Equal(t, 100, debug.SetGCPercent(100), "GOGC set: kql leaves the runtime's setting alone")
}
