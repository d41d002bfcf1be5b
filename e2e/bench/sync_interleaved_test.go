package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// BenchmarkSyncInterleaved times issue 12's sync targets, and the typed
// informer's against client-go's: the initial sync of generic-typed,
// generic-unstructured and client-go-typed (the control: two typed
// informers), in turn within every iteration (rotate), and
// reports each contender's time per sync as a metric of its own
// ("generic-typed-ns/op", ...). One iteration is one sync of each.
//
// BenchmarkSync runs its contenders one after another, in a shuffled
// order: on this project's 2-core VM, two runs of it put the typed informer
// at 0.90x and at 1.23x client-go's (the same informer machinery), a swing
// larger than the 10% the CRD target judges. Interleaved, the contenders
// sync under the same conditions, and the ratio of their times within a
// run holds where the times do not.
func BenchmarkSyncInterleaved(b *testing.B) {
	syncInterleaved(b, []syncContender{
		{"generic-typed", genericTypedSyncer(false)},
		{"generic-unstructured", genericUnstructuredSyncer(false)},
		{"client-go-typed", clientGoTypedSyncer},
	})
}

// BenchmarkSyncInterleavedDropIn times the drop-in's sync target (within
// 10% of client-go's dynamic informer) as BenchmarkSyncInterleaved times
// issue 12's: the drop-in and client-go's dynamic informer in turn within
// every iteration. Apart,
// because the two take several times the typed informers' time: in
// BenchmarkSyncInterleaved's rotation they would make every iteration
// several times longer. Sequential (BenchmarkSync), the same code measured
// 0.97x in one report's run and 1.15x in the next.
func BenchmarkSyncInterleavedDropIn(b *testing.B) {
	syncInterleaved(b, []syncContender{
		{"generic-unstructured-dropin", genericDropInSyncer},
		{"client-go-dynamic", clientGoDynamicSyncer},
	})
}

// syncInterleaved runs contenders' syncs in turn within every iteration
// (rotate), for each case of eachSyncCase, against one seeded server.
func syncInterleaved(b *testing.B, contenders []syncContender) {
	config, _ := seededServer(b)
	names := make([]string, len(contenders))
	for c, contender := range contenders {
		names[c] = contender.name
	}
	eachSyncCase(b, config, func(b *testing.B, gvr schema.GroupVersionResource) {
		rotate(b, names, func(c, _ int) time.Duration {
			return timeSync(b, config, gvr, contenders[c].run)
		})
	})
}

// timeSync times one sync of run, from a collected heap (as measureSync's),
// and stops it.
func timeSync(b *testing.B, config *rest.Config, gvr schema.GroupVersionResource, run syncer) time.Duration {
	runtime.GC()
	start := time.Now()
	synced, stop := run(b, context.Background(), config, gvr)
	waitSynced(b, synced)
	elapsed := time.Since(start)
	stop()
	return elapsed
}
