package generic

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// TimeEveryEvent makes informers made from now on time every watch event
// for the delivery latency, however fast they come, until the returned
// function restores the sampling. Tests that use it must not run in
// parallel with others that measure latency.
func TimeEveryEvent() (restore func()) {
	saved := timedEvery
	timedEvery = 0
	return func() { timedEvery = saved }
}

// SetShutdownReportAfter sets how long r's Shutdown waits before it
// reports a callback it waits on (ErrShutdownWaitsOnCallback).
func SetShutdownReportAfter(r *Registry, after time.Duration) {
	r.shutdownReportAfter = after
}

// StoredTypes returns the Go types of the values h's informer's client-go
// store holds, each once, sorted: what a compact store keeps, which the
// informer's reads never show.
func StoredTypes[T Object](h Handle[T]) []string {
	seen := map[string]bool{}
	for _, obj := range h.(*handle[T]).current().shared.GetIndexer().List() {
		seen[fmt.Sprintf("%T", obj)] = true
	}
	return slices.Sorted(maps.Keys(seen))
}
