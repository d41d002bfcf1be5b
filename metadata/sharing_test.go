package metadata_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	clientmetadata "k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"

	"github.com/generic-informers/generic/internal/mutationtest"
	"github.com/generic-informers/generic/metadata"
)

// equalPods returns three Pods equal but for their names: the same labels
// and finalizers.
func equalPods() []runtime.Object {
	var pods []runtime.Object
	for _, name := range []string{"one", "two", "three"} {
		pod := partial("Pod", "team-a", name, map[string]string{"app": "shared"})
		pod.Finalizers = []string{"example.com/cleanup", "example.com/audit"}
		pods = append(pods, pod)
	}
	return pods
}

// metadataFactory is what client-go's metadatainformer factories and this
// package's have in common, for tests that run both.
type metadataFactory interface {
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	Shutdown()
}

// cachedPods starts factory's Pod informer and returns what its Lister
// lists once synced, and how to stop it.
func cachedPods(t *testing.T, factory metadataFactory) (objs []*metav1.PartialObjectMetadata, stop func()) {
	t.Helper()
	informer := factory.ForResource(podsGVR)
	stopCh := make(chan struct{})
	stop = func() {
		close(stopCh)
		factory.Shutdown()
	}
	factory.Start(stopCh)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !factory.WaitForCacheSync(ctx.Done())[podsGVR] {
		stop()
		t.Fatal("the Pods did not sync")
	}
	listed, err := informer.Lister().List(labels.Everything())
	if err != nil {
		stop()
		t.Fatal(err)
	}
	for _, obj := range listed {
		objs = append(objs, obj.(*metav1.PartialObjectMetadata))
	}
	return objs, stop
}

// distinct counts the distinct maps or slices among values, by address.
func distinct(values ...any) int {
	seen := map[uintptr]bool{}
	for _, v := range values {
		seen[reflect.ValueOf(v).Pointer()] = true
	}
	return len(seen)
}

var metadataFactories = []struct {
	name       string
	newFactory func(clientmetadata.Interface) metadataFactory
}{
	{name: "client-go metadatainformer", newFactory: func(c clientmetadata.Interface) metadataFactory {
		return metadatainformer.NewSharedInformerFactory(c, 0)
	}},
	{name: "drop-in", newFactory: func(c clientmetadata.Interface) metadataFactory { return metadata.NewSharedInformerFactory(c, 0) }},
}

// TestDropInSharesNothing: the metadata drop-in's objects share no map or
// slice, as client-go's metadatainformer's: it needs no WithoutSharing.
func TestDropInSharesNothing(t *testing.T) {
	for _, tc := range metadataFactories {
		t.Run(tc.name, func(t *testing.T) {
			objs, stop := cachedPods(t, tc.newFactory(newClient(t, equalPods()...)))
			defer stop()
			var labelMaps, finalizers []any
			for _, obj := range objs {
				labelMaps, finalizers = append(labelMaps, obj.Labels), append(finalizers, obj.Finalizers)
			}
			got := fmt.Sprintf("%d labels maps, %d finalizers slices", distinct(labelMaps...), distinct(finalizers...))
			if diff := cmp.Diff("3 labels maps, 3 finalizers slices", got); diff != "" {
				t.Errorf("what the cached Pods share (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMutationDetector: with client-go's cache mutation detector on
// (KUBE_CACHE_MUTATION_DETECTOR=true), a write into an object read from
// the drop-in's Lister is caught as it is in client-go's
// metadatainformer: the detector reports that one object and panics.
func TestMutationDetector(t *testing.T) {
	if name := mutationtest.Case(); name != "" { // the child process
		for _, tc := range metadataFactories {
			if tc.name == name {
				objs, stop := cachedPods(t, tc.newFactory(newClient(t, equalPods()...)))
				defer stop()
				objs[0].Finalizers[0] = "written"
				mutationtest.AwaitDetector()
			}
		}
		return
	}
	for _, tc := range metadataFactories {
		t.Run(tc.name, func(t *testing.T) {
			want := mutationtest.Result{Altered: 1, Panicked: true}
			if diff := cmp.Diff(want, mutationtest.Run(t, "TestMutationDetector", tc.name)); diff != "" {
				t.Errorf("what the mutation detector did (-want +got):\n%s", diff)
			}
		})
	}
}
