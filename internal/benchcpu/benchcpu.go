// Package benchcpu reports a benchmark's CPU time per op beside its wall
// time: on a loaded machine (two cores shared with other work) wall time
// per op counts the time the benchmark waited for a CPU, and CPU time
// does not. Only benchmarks import it.
package benchcpu

import (
	"runtime"
	"testing"
)

// Report locks the benchmark to its thread and returns the function that,
// called after the loop, reports the thread's CPU time per op as
// cpu-ns/op (nothing where the thread's CPU time is not known).
func Report(b *testing.B) func() {
	runtime.LockOSThread()
	t0, ok := threadCPU()
	return func() {
		if t1, ok1 := threadCPU(); ok && ok1 {
			b.ReportMetric(float64(t1-t0)/float64(b.N), "cpu-ns/op")
		}
		runtime.UnlockOSThread()
	}
}
