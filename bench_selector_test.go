package generic_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/generic-informers/generic"
)

// unstructuredBenchLister is made behind a function the compiler does not
// inline, as benchListers' listers are.
//
//go:noinline
func unstructuredBenchLister(p *benchPods) generic.Lister[*unstructured.Unstructured] {
	return generic.NewLister[*unstructured.Unstructured](p.unstructured, podsGVR.GroupResource())
}

// BenchmarkListSelector lists with a label selector (app=app-3, a tenth of
// the objects) through the generic Lister of *corev1.Pod and of
// *unstructured.Unstructured over the same Pods, side by side in one run:
// across all namespaces (List) and in one namespace (Namespace(ns).List).
// Issue 12's target is unstructured at most 1.5x typed's time and 2x its
// allocations:
//
//	go test -run '^$' -bench 'ListSelector' -count 6 | benchstat -col /contender -
func BenchmarkListSelector(b *testing.B) {
	p := newBenchPods(b)
	typed, _, _ := benchListers(p)
	untyped := unstructuredBenchLister(p)
	allWant := benchNamespaces * benchPodsInNamespace / 10
	nsWant := benchPodsInNamespace / 10
	check := func(b *testing.B, got, want int, err error) {
		if err != nil || got != want {
			b.Fatalf("listed %d (error %v), want %d", got, err, want)
		}
	}
	b.Run("read=List/contender=typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pods, err := typed.List(p.selector)
			check(b, len(pods), allWant, err)
		}
	})
	b.Run("read=List/contender=unstructured", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pods, err := untyped.List(p.selector)
			check(b, len(pods), allWant, err)
		}
	})
	b.Run("read=NamespaceList/contender=typed", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			pods, err := typed.Namespace(p.namespaces[(i*benchPodsInNamespace)%len(p.namespaces)]).List(p.selector)
			check(b, len(pods), nsWant, err)
		}
	})
	b.Run("read=NamespaceList/contender=unstructured", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			pods, err := untyped.Namespace(p.namespaces[(i*benchPodsInNamespace)%len(p.namespaces)]).List(p.selector)
			check(b, len(pods), nsWant, err)
		}
	})
}
