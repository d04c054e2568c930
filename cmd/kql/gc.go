package main

import "runtime/debug"

// gcPercent is kql's GOGC when the environment sets none. A read streams
// its records through a heap whose live part the read budget bounds (about
// 6-9 MiB for kafka.DefaultReadBudget), and what it allocates is franz-go's
// decoded batches and fetch responses, about 290 MB for 1M records of
// 100 B: at Go's default of 100 that was 45 collections, and a sixth of
// CONSUME's instructions were the collector's. Measured with cachegrind
// (200k records, jsonl): 1.19-1.24 G instructions at 100, 1.07-1.12 G at
// 150, 1.02-1.04 G at 200; peak RSS of a 1M-record read 45-48 MiB at 100,
// 48-51 MiB at 150, 54-59 MiB at 200, where the 10M-record read reached
// 62 MiB, 1.10x the 1M one: at the flatness target's edge and close to
// the 64 MiB one. 150 keeps both with room to spare. The live part is
// bounded by bytes, not records, so the peak stays flat in the count.
const gcPercent = 150

// tuneGC applies gcPercent unless the user set GOGC, which wins.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
