// Package heaptest measures the live heap, for the tests and benchmarks
// that hold a claim about memory.
package heaptest

import "runtime"

// Live returns the heap in use after two full collections
// (runtime.MemStats.HeapAlloc), in bytes: the first collection frees what
// was garbage, the second what only finalizers of the first kept alive.
func Live() uint64 {
	runtime.GC()
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

// Of returns the live heap what build returns holds, in bytes: Live after
// build, kept alive until then, less Live before. Other goroutines'
// allocations count too, so callers measure with nothing else running and
// many objects at once; the result is negative if more was freed than
// build kept.
func Of(build func() any) int64 {
	before := Live()
	kept := build()
	after := Live()
	runtime.KeepAlive(kept)
	return int64(after) - int64(before)
}
