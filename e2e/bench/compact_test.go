package bench

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/typed"
)

// compactDecodedObjects is how many decoded objects the compact store of
// the benchmarks keeps: BenchmarkCompactRead's hot set.
const compactDecodedObjects = 1000

// BenchmarkCompactRead measures what a read costs from a compact store
// (generic.WithCompactStore(compactDecodedObjects)), beside the default
// store, over the `objects` realistic Pods of BenchmarkCacheSize, both
// informers synced in this process:
//
// Contenders: generic-typed (the default store), generic-typed-compact,
// and, under read=get-miss, protobuf-decode: one protobuf decode of a
// cached Pod's encoding (corev1.Pod.Unmarshal), what a read that misses the
// decoded objects is compared with. The reads:
//
//   - read=get-miss: Namespace(ns).Get of each Pod in turn, so that every
//     read misses the decoded objects (it keeps compactDecodedObjects, fewer
//     than the Pods): one decompression, one decode, one insert;
//   - read=get-miss-paired: a protobuf decode of one Pod and a compact
//     store's Get of another that misses, in turn within every iteration,
//     each timed: decode-ns and miss-ns are their means (the target's
//     comparison, under the same conditions);
//   - read=get-hot: Get of each Pod of a hot set of compactDecodedObjects
//     in turn, all read once before: every read finds its Pod decoded;
//   - read=get-pattern: the stated read pattern, 90% of the reads on a hot
//     set of 1,000 Pods and 10% on the others, at random; p50-ns and p99-ns
//     are the percentiles of the single reads, ns/op their mean;
//   - read=list-selector: List with a label selector that matches the Pods
//     of one Deployment (50), from all the Pods.
func BenchmarkCompactRead(b *testing.B) {
	config := realisticServer(b)
	seedResource(b, config, podsGVR)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stores := map[string]generic.Lister[*corev1.Pod]{}
	for _, store := range []struct {
		name string
		opts []generic.FactoryOption
	}{
		{"generic-typed", nil},
		{"generic-typed-compact", []generic.FactoryOption{generic.WithCompactStore(compactDecodedObjects)}},
	} {
		factory, err := typed.NewFactory(config, scheme, append([]generic.FactoryOption{generic.WithLabelSelector(realisticPodsSelector)}, store.opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		defer factory.Shutdown()
		pods, err := typed.InformerFor[*corev1.Pod](factory)
		if err != nil {
			b.Fatal(err)
		}
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			b.Fatal(err)
		}
		stores[store.name] = pods.Lister()
	}
	all, err := stores["generic-typed"].List(labels.Everything())
	if err != nil || len(all) == 0 {
		b.Fatalf("%d Pods, %v", len(all), err)
	}
	all = generic.SortByNamespaceName(all)
	encoded := make([][]byte, len(all))
	for i, pod := range all {
		if encoded[i], err = pod.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
	hot := all[:min(1000, len(all))]
	selector := labels.SelectorFromSet(all[len(all)/2].Labels)

	b.Run("read=get-miss/contender=protobuf-decode", func(b *testing.B) {
		i := 0
		for b.Loop() {
			pod := &corev1.Pod{}
			if err := pod.Unmarshal(encoded[i%len(encoded)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	// Runs one after the other do not share their conditions (the heap,
	// the collector's pace, the CPU's caches): a decode measured first,
	// just after the sync, ran up to a third faster than the same decode
	// measured after the reads. So the target's comparison is made in
	// turn within every iteration.
	b.Run("read=get-miss-paired/contender=generic-typed-compact", func(b *testing.B) {
		lister := stores["generic-typed-compact"]
		var decode, miss time.Duration
		var reads int
		for b.Loop() {
			started := time.Now()
			if err := (&corev1.Pod{}).Unmarshal(encoded[reads%len(encoded)]); err != nil {
				b.Fatal(err)
			}
			decode += time.Since(started)
			pod := all[(reads+len(all)/2)%len(all)] // read last len(all) reads ago: a miss
			started = time.Now()
			if _, err := lister.Namespace(pod.Namespace).Get(pod.Name); err != nil {
				b.Fatal(err)
			}
			miss += time.Since(started)
			reads++
		}
		b.ReportMetric(float64(decode.Nanoseconds())/float64(reads), "decode-ns")
		b.ReportMetric(float64(miss.Nanoseconds())/float64(reads), "miss-ns")
	})
	for _, name := range []string{"generic-typed", "generic-typed-compact"} {
		lister := stores[name]
		get := func(b *testing.B, pod *corev1.Pod) {
			if _, err := lister.Namespace(pod.Namespace).Get(pod.Name); err != nil {
				b.Fatal(err)
			}
		}
		b.Run("read=get-miss/contender="+name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				get(b, all[i%len(all)])
				i++
			}
		})
		b.Run("read=get-hot/contender="+name, func(b *testing.B) {
			for _, pod := range hot {
				get(b, pod) // kept decoded from now on: as many as it keeps
			}
			i := 0
			for b.Loop() {
				get(b, hot[i%len(hot)])
				i++
			}
		})
		b.Run("read=get-pattern/contender="+name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			var took []time.Duration
			for b.Loop() {
				pod := all[r.IntN(len(all))]
				if r.IntN(10) < 9 {
					pod = hot[r.IntN(len(hot))]
				}
				started := time.Now()
				get(b, pod)
				took = append(took, time.Since(started))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
		})
		b.Run("read=list-selector/contender="+name, func(b *testing.B) {
			for b.Loop() {
				pods, err := lister.List(selector)
				if err != nil || len(pods) == 0 {
					b.Fatalf("%d Pods, %v", len(pods), err)
				}
			}
		})
	}
}
