package unstructured_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"

	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/mutationtest"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/unstructured"
)

// sharedWidgetsClient serves three Widgets equal but for their names
// (testdata/widgets-shared.yaml).
func sharedWidgetsClient(t *testing.T) dynamic.Interface {
	t.Helper()
	objs, err := fixtures.Load("../testdata/widgets-shared.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seed := make([]runtime.Object, len(objs))
	for i := range objs {
		seed[i] = objs[i]
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widget.GVR: "WidgetList"}, seed...)
}

// dynamicFactory is what client-go's dynamicinformer factories and this
// package's have in common, for tests that run both.
type dynamicFactory interface {
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	Shutdown()
}

// cachedWidgets starts factory's Widget informer and returns what its
// Lister lists once synced, and how to stop it.
func cachedWidgets(t *testing.T, factory dynamicFactory) (objs []*apiunstructured.Unstructured, stop func()) {
	t.Helper()
	informer := factory.ForResource(widget.GVR)
	stopCh := make(chan struct{})
	stop = func() {
		close(stopCh)
		factory.Shutdown()
	}
	factory.Start(stopCh)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !factory.WaitForCacheSync(ctx.Done())[widget.GVR] {
		stop()
		t.Fatal("the Widgets did not sync")
	}
	listed, err := informer.Lister().List(labels.Everything())
	if err != nil {
		stop()
		t.Fatal(err)
	}
	for _, obj := range listed {
		objs = append(objs, obj.(*apiunstructured.Unstructured))
	}
	return objs, stop
}

// tagsOf returns obj's spec.tags, the list it holds.
func tagsOf(obj *apiunstructured.Unstructured) []any {
	return obj.Object["spec"].(map[string]any)["tags"].([]any)
}

// distinct counts the distinct maps or lists among values, by address.
func distinct(values ...any) int {
	seen := map[uintptr]bool{}
	for _, v := range values {
		seen[reflect.ValueOf(v).Pointer()] = true
	}
	return len(seen)
}

// TestDropInSharing: the drop-in's objects share equal maps and lists
// (labels maps at once, other maps and lists from the second sighting
// on), unless made WithoutSharing; client-go's dynamicinformer shares
// nothing.
func TestDropInSharing(t *testing.T) {
	tests := []struct {
		name       string
		newFactory func(dynamic.Interface) dynamicFactory
		// want is how many distinct labels maps and tags lists the three
		// Widgets hold.
		want string
	}{{
		name:       "client-go dynamicinformer",
		newFactory: func(c dynamic.Interface) dynamicFactory { return dynamicinformer.NewDynamicSharedInformerFactory(c, 0) },
		want:       "3 labels maps, 3 tags lists",
	}, {
		name:       "drop-in",
		newFactory: func(c dynamic.Interface) dynamicFactory { return unstructured.NewDynamicSharedInformerFactory(c, 0) },
		want:       "1 labels maps, 2 tags lists",
	}, {
		name: "drop-in WithoutSharing",
		newFactory: func(c dynamic.Interface) dynamicFactory {
			return unstructured.NewDynamicSharedInformerFactoryWithOptions(c, 0, unstructured.WithoutSharing())
		},
		want: "3 labels maps, 3 tags lists",
	}, {
		name: "drop-in with no option",
		newFactory: func(c dynamic.Interface) dynamicFactory {
			return unstructured.NewDynamicSharedInformerFactoryWithOptions(c, 0)
		},
		want: "1 labels maps, 2 tags lists",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, stop := cachedWidgets(t, tc.newFactory(sharedWidgetsClient(t)))
			defer stop()
			var labelMaps, tagLists []any
			for _, obj := range objs {
				labelMaps = append(labelMaps, obj.Object["metadata"].(map[string]any)["labels"])
				tagLists = append(tagLists, tagsOf(obj))
			}
			got := fmt.Sprintf("%d labels maps, %d tags lists", distinct(labelMaps...), distinct(tagLists...))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("what the cached Widgets share (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMutationDetector: with client-go's cache mutation detector on
// (KUBE_CACHE_MUTATION_DETECTOR=true), a write into an object read from
// the drop-in's Lister is caught as it is in client-go's dynamicinformer:
// the detector panics. Written into a list the object shares (the
// default), every cached object holding that list is reported altered;
// WithoutSharing, only the one written, as in client-go.
func TestMutationDetector(t *testing.T) {
	tests := []struct {
		name       string
		newFactory func(dynamic.Interface) dynamicFactory
		want       mutationtest.Result
	}{{
		name:       "client-go dynamicinformer",
		newFactory: func(c dynamic.Interface) dynamicFactory { return dynamicinformer.NewDynamicSharedInformerFactory(c, 0) },
		want:       mutationtest.Result{Altered: 1, Panicked: true},
	}, {
		name:       "drop-in",
		newFactory: func(c dynamic.Interface) dynamicFactory { return unstructured.NewDynamicSharedInformerFactory(c, 0) },
		want:       mutationtest.Result{Altered: 2, Panicked: true},
	}, {
		name: "drop-in WithoutSharing",
		newFactory: func(c dynamic.Interface) dynamicFactory {
			return unstructured.NewDynamicSharedInformerFactoryWithOptions(c, 0, unstructured.WithoutSharing())
		},
		want: mutationtest.Result{Altered: 1, Panicked: true},
	}}
	if name := mutationtest.Case(); name != "" { // the child process
		for _, tc := range tests {
			if tc.name == name {
				writeIntoCachedWidget(t, tc.newFactory(sharedWidgetsClient(t)))
			}
		}
		return
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, mutationtest.Run(t, "TestMutationDetector", tc.name)); diff != "" {
				t.Errorf("what the mutation detector did (-want +got):\n%s", diff)
			}
		})
	}
}

// writeIntoCachedWidget writes into the tags list of a cached Widget, one
// whose list another holds too if there is one, as a buggy controller
// would, and waits for the detector.
func writeIntoCachedWidget(t *testing.T, factory dynamicFactory) {
	objs, stop := cachedWidgets(t, factory)
	defer stop()
	target := tagsOf(objs[0])
	for i, obj := range objs {
		for _, other := range objs[i+1:] {
			if distinct(tagsOf(obj), tagsOf(other)) == 1 {
				target = tagsOf(obj)
			}
		}
	}
	target[0] = "written"
	mutationtest.AwaitDetector()
}
