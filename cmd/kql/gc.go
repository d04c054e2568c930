package main

import "runtime/debug"

// gcPercent is kql's GOGC when the environment sets none. A read streams
// its records through a heap whose live part the read budget bounds (about
// 6-9 MiB for kafka.DefaultReadBudget), and what it allocates is franz-go's
// decoded batches and fetch responses, about 290 MB for 1M records of
// 100 B: at Go's default of 100 that was 45 collections, and a sixth of
// CONSUME's instructions were the collector's (cachegrind, 200k records:
// 1.19-1.24 G instructions at 100, 1.02 G at 200). At 200 the heap may
// grow to three times its live part instead of two: peak RSS of that read
// went from 45 to 54-57 MiB, under the 64 MiB target and still flat in the
// record count, since the live part is bounded by bytes, not records.
const gcPercent = 200

// tuneGC applies gcPercent unless the user set GOGC, which wins.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
