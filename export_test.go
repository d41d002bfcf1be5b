package generic

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
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

// SetNotServedProbes makes the informers r makes from now on probe a
// resource that is not served every every, instead of with the backoff
// from 1 s to 30 s, so that a test can tell a probe that a change of the
// resources served caused (WithServedWatch) from one the backoff made.
func SetNotServedProbes(r *Registry, every time.Duration) {
	r.served.probes = wait.Backoff{Duration: every, Factor: 1, Steps: math.MaxInt32, Cap: every}
}
