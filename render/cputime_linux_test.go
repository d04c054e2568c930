package render

import (
	"runtime"
	"syscall"
	"testing"
)

// reportCPU locks the benchmark to its thread and returns the function that,
// called after the loop, reports the thread's CPU time per op as cpu-ns/op:
// on a loaded machine wall time per op counts the time the benchmark waited
// for a CPU, and CPU time does not.
func reportCPU(b *testing.B) func() {
	runtime.LockOSThread()
	t0 := threadCPU()
	return func() {
		b.ReportMetric(float64(threadCPU()-t0)/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

func threadCPU() int64 {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
