package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/heaptest"
	"github.com/generic-informers/generic/typed"
)

// BenchmarkShardedSync is one replica of n (n = 1, 2, 4) syncing the
// seeded ConfigMaps (the objects count is all replicas'), with the API
// server's ShardedListAndWatch feature gate on (it filters) and off (the
// informer filters on the client). Each op is replica 0 of a fresh typed
// factory, from Start until synced; it reports the objects that replica
// caches and the live heap its cache holds. The test server runs in this
// process, so the gate is flipped here, between runs, as its flag would
// set it.
func BenchmarkShardedSync(b *testing.B) {
	config, _ := seededServer(b)
	warmUp(b, config, configMapsGVR)
	for _, gate := range []bool{true, false} {
		for _, count := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("gate=%s/n=%d", map[bool]string{true: "on", false: "off"}[gate], count), func(b *testing.B) {
				featuregatetesting.SetFeatureGateDuringTest(b, utilfeature.DefaultFeatureGate, features.ShardedListAndWatch, gate)
				measureShardedSync(b, count)
			})
		}
	}
}

func measureShardedSync(b *testing.B, count int) {
	config, _ := seededServer(b)
	var heap uint64
	var cached int
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		before := heaptest.Live()
		b.StartTimer()
		factory, err := typed.NewFactory(config, scheme, generic.WithShard(0, count))
		if err != nil {
			b.Fatal(err)
		}
		informer, err := typed.InformerFor[*corev1.ConfigMap](factory)
		if err != nil {
			b.Fatal(err)
		}
		factory.Start(context.Background())
		waitSynced(b, informer.Informer().HasSyncedChecker().Done())
		b.StopTimer()
		after := heaptest.Live()
		objs, err := informer.Lister().List(labels.Everything())
		if err != nil {
			b.Fatal(err)
		}
		cached = len(objs)
		if want := count > 1; informer.Status().ShardFilteredByClient != (want && !utilfeature.DefaultFeatureGate.Enabled(features.ShardedListAndWatch)) {
			b.Fatalf("Status().ShardFilteredByClient = %v with the gate %v", informer.Status().ShardFilteredByClient, utilfeature.DefaultFeatureGate.Enabled(features.ShardedListAndWatch))
		}
		runtime.KeepAlive(informer)
		if after > before {
			heap += after - before
		}
		factory.Shutdown()
		b.StartTimer()
	}
	b.ReportMetric(float64(heap)/float64(b.N), "heap-B")
	b.ReportMetric(float64(cached), "objects")
}
