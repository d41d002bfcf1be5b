package bench

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// BenchmarkReadList lists the Pods of every namespace that a label selector
// matches (a tenth of them): the generic Lister of *corev1.Pod and of
// *unstructured.Unstructured, against the generated lister and
// dynamiclister, on the same Pods, each in the cache its users have
// (readCaches, filled once per process, measured with no API server
// running). Issue 12's target: generic-unstructured at most 1.5x
// generic-typed's time and 2x its allocations.
func BenchmarkReadList(b *testing.B) {
	caches := sharedReadCaches(b)
	genericTyped, genericUnstructured := typedLister(caches.typed), unstructuredLister(caches.unstructured)
	generated, dynamic := podLister(caches.typed), dynamicLister(caches.dynamic)
	dropIn := dropInLister(caches.dropIn)
	contenders := []struct {
		name string
		list func(labels.Selector) int
	}{
		{"generic-typed", func(s labels.Selector) int { return count(genericTyped.List(s)) }},
		{"generic-unstructured", func(s labels.Selector) int { return count(genericUnstructured.List(s)) }},
		{"client-go", func(s labels.Selector) int { return count(generated.List(s)) }},
		{"client-go-dynamiclister", func(s labels.Selector) int { return count(dynamic.List(s)) }},
		{"generic-unstructured-dropin", func(s labels.Selector) int { return count(dropIn.List(s)) }},
	}
	selector := labels.SelectorFromSet(labels.Set{"app": "app-3"})
	want := count(genericTyped.List(selector))
	for _, c := range contenders {
		b.Run("contender="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := c.list(selector); got != want {
					b.Fatalf("listed %d, want %d", got, want)
				}
			}
		})
	}
}
