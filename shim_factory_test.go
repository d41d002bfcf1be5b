package generic_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/heaptest"
	"github.com/generic-informers/generic/internal/widget"
)

// TestGenericInformerFactoryRelease walks ForResource and Release through
// the orders a program may call them in: each ForResource is one hold,
// Release drops one and reports the last, a resource with no hold reports
// false, and an informer asked for again after its last Release is held
// anew.
func TestGenericInformerFactoryRelease(t *testing.T) {
	tests := []struct {
		name string
		// script is one letter per call: F ForResource(ConfigMaps), R
		// Release(ConfigMaps), O Release(Widgets), S Start, X Shutdown.
		script string
		// want is what each R and O returned, in order.
		want []bool
	}{
		{name: "no hold", script: "R", want: []bool{false}},
		{name: "one hold", script: "FRR", want: []bool{true, false}},
		{name: "two holds", script: "FFRRR", want: []bool{false, true, false}},
		{name: "another resource", script: "FOR", want: []bool{false, true}},
		{name: "held again after the last release", script: "FRFR", want: []bool{true, true}},
		{name: "interleaved", script: "FRFFRFRR", want: []bool{true, false, false, true}},
		{name: "started", script: "FSFRR", want: []bool{false, true}},
		{name: "after Shutdown", script: "FFXRRR", want: []bool{false, true, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := generic.NewGenericInformerFactory[*unstructured.Unstructured](
				generic.DynamicSource(newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")), 0, "", nil, nil)
			defer factory.Shutdown()
			got := []bool{}
			for _, call := range tc.script {
				switch call {
				case 'F':
					factory.ForResource(configMapsGVR)
				case 'R':
					got = append(got, factory.Release(configMapsGVR))
				case 'O':
					got = append(got, factory.Release(widget.GVR))
				case 'S':
					factory.Start(testDone(t))
				case 'X':
					factory.Shutdown()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Release results of %q (-want +got):\n%s", tc.script, diff)
			}
		})
	}
}

// TestForResourceKeepsNothingPerCall: client-go code calls
// factory.ForResource(gvr).Lister() in every reconcile, and client-go's
// factory keeps nothing per call. A million calls must leave the live heap
// about where it was (each call kept a hold of about 80 bytes before: some
// 80 MB), and still count as a million holds: the millionth Release is the
// last.
func TestForResourceKeepsNothingPerCall(t *testing.T) {
	const calls = 1_000_000
	// Far below what a hold a call costs (calls × 80 B), far above what
	// the informer itself and the collector's noise take.
	const bound = 8 << 20
	factory := generic.NewGenericInformerFactory[*unstructured.Unstructured](
		generic.DynamicSource(newDynamicClient(t, "testdata/configmaps.yaml")), 0, "", nil, nil)
	defer factory.Shutdown()
	factory.ForResource(configMapsGVR) // the informer itself, before measuring
	before := heaptest.Live()
	for range calls - 1 {
		factory.ForResource(configMapsGVR)
	}
	grown := int64(heaptest.Live()) - int64(before)
	t.Logf("the live heap grew by %d bytes over %d ForResource calls", grown, calls)
	if grown > bound {
		t.Errorf("the live heap grew by %d bytes over %d ForResource calls, want at most %d", grown, calls, bound)
	}
	last := 0 // the Release that reported the last hold
	for n := 1; n <= calls && last == 0; n++ {
		if factory.Release(configMapsGVR) {
			last = n
		}
	}
	if diff := cmp.Diff(calls, last); diff != "" {
		t.Errorf("the Release that dropped the last of a million holds (-want +got):\n%s", diff)
	}
}
