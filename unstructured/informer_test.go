package unstructured_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/unstructured"
)

var configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func newClient(t *testing.T) *dynamicfake.FakeDynamicClient {
	t.Helper()
	objs, err := fixtures.Load("../testdata/configmaps.yaml", "../testdata/widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	seed := make([]runtime.Object, len(objs))
	for i := range objs {
		seed[i] = objs[i]
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMapsGVR: "ConfigMapList", widget.GVR: "WidgetList"}, seed...)
}

// TestDropInFactory uses the client-go-shaped API and checks what it shares
// and serves; Shutdown ends every goroutine even though the stop channel
// given to Start is never closed.
func TestDropInFactory(t *testing.T) {
	factory := unstructured.NewFilteredDynamicSharedInformerFactory(newClient(t), 0, "team-a", nil)
	widgets := factory.ForResource(widget.GVR)
	if widgets != factory.ForResource(widget.GVR) {
		t.Error("ForResource of the same GVR returned another informer")
	}
	stop := make(chan struct{}) // never closed
	factory.Start(stop)
	timeout, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if diff := cmp.Diff(map[schema.GroupVersionResource]bool{widget.GVR: true}, factory.WaitForCacheSync(timeout.Done())); diff != "" {
		t.Fatalf("synced (-want +got):\n%s", diff)
	}
	got, err := widgets.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(2, len(got)); diff != "" {
		t.Errorf("widgets in team-a (-want +got):\n%s", diff)
	}
	factory.Shutdown()
	goleak.VerifyNone(t)
}

// TestDropInWaitForCacheSync: the client-go-shaped wait (which polls, as
// client-go's does) reports which started informers synced, and returns when
// its stop channel closes or when the informers it waits for have stopped.
func TestDropInWaitForCacheSync(t *testing.T) {
	closed := make(chan struct{})
	close(closed)
	tests := []struct {
		name string
		// listFails makes every list of Widgets fail: they never sync.
		listFails bool
		// stopInformers closes the channel given to Start before the wait.
		stopInformers bool
		waitStop      <-chan struct{}
		want          map[schema.GroupVersionResource]bool
	}{{
		name:     "synced",
		waitStop: nil, // never closed
		want:     map[schema.GroupVersionResource]bool{widget.GVR: true},
	}, {
		name:      "stop channel closed before the informer can sync",
		listFails: true,
		waitStop:  closed,
		want:      map[schema.GroupVersionResource]bool{widget.GVR: false},
	}, {
		name:          "the informer stopped before it could sync",
		listFails:     true,
		stopInformers: true,
		waitStop:      nil, // never closed
		want:          map[schema.GroupVersionResource]bool{widget.GVR: false},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newClient(t)
			if tc.listFails {
				client.PrependReactor("list", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("no list for you")
				})
			}
			factory := unstructured.NewDynamicSharedInformerFactory(client, 0)
			defer factory.Shutdown()
			factory.ForResource(widget.GVR)
			startStop := make(chan struct{})
			factory.Start(startStop)
			if tc.stopInformers {
				close(startStop)
			}
			if diff := cmp.Diff(tc.want, factory.WaitForCacheSync(tc.waitStop)); diff != "" {
				t.Errorf("synced (-want +got):\n%s", diff)
			}
		})
	}
}

// ownLister is a Lister written outside this library, as a test double would
// be: NewRuntimeObjectShim must take it, as client-go's does.
type ownLister struct {
	objs []*apiunstructured.Unstructured
}

func (l ownLister) List(labels.Selector) ([]*apiunstructured.Unstructured, error) { return l.objs, nil }
func (l ownLister) Get(string) (*apiunstructured.Unstructured, error)             { return l.objs[0], nil }
func (l ownLister) Namespace(string) unstructured.NamespaceLister                 { return l }

func TestRuntimeObjectShimOfOwnLister(t *testing.T) {
	objs, err := fixtures.Load("../testdata/configmaps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shim := unstructured.NewRuntimeObjectShim(ownLister{objs: objs})
	got, err := shim.ByNamespace("any").List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(len(objs), len(got)); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	first, err := shim.Get("x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(runtime.Object(objs[0]), first); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
}

// TestDropInRelease uses the Releaser extension of the client-go-shaped
// factory.
func TestDropInRelease(t *testing.T) {
	factory := unstructured.NewDynamicSharedInformerFactory(newClient(t), 0)
	defer factory.Shutdown()
	first := factory.ForResource(widget.GVR)
	factory.Start(make(chan struct{}))
	releaser, ok := factory.(generic.Releaser)
	if !ok {
		t.Fatal("the factory is not a Releaser")
	}
	if diff := cmp.Diff([]bool{false, true, false}, []bool{
		releaser.Release(configMapsGVR), releaser.Release(widget.GVR), releaser.Release(widget.GVR),
	}); diff != "" {
		t.Errorf("Release results (-want +got):\n%s", diff)
	}
	// Release does not wait: the informer stops soon after.
	err := wait.PollUntilContextTimeout(context.Background(), time.Millisecond, 10*time.Second, true,
		func(context.Context) (bool, error) { return first.Informer().IsStopped(), nil })
	if err != nil {
		t.Error("the released informer still runs")
	}
	if factory.ForResource(widget.GVR).Informer() == first.Informer() {
		t.Error("ForResource after release returned the stopped informer")
	}
}

// TestDropInSharesWhatRepeats: the drop-in's factory interns the dynamic
// client's objects as it ingests them: cached objects equal the client's,
// and two made alike share their labels map and their managedFields'
// fieldsV1 tree. (Strings are not checked here: the fake client's copies
// share them already; internal/share's tests hold the interning.)
func TestDropInSharesWhatRepeats(t *testing.T) {
	configMap := func(name string) *apiunstructured.Unstructured {
		return &apiunstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{
				"name": name, "namespace": "team-a",
				"labels": map[string]any{"app": "web", "tier": "front"},
				"managedFields": []any{map[string]any{
					"manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:data": map[string]any{"f:k": map[string]any{}}},
				}},
			},
			"data": map[string]any{"k": name},
		}}
	}
	seed := []runtime.Object{configMap("one"), configMap("two")}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMapsGVR: "ConfigMapList"}, seed...)
	factory := unstructured.NewDynamicSharedInformerFactory(client, 0)
	lister := factory.ForResource(configMapsGVR).Lister()
	t.Cleanup(factory.Shutdown)
	factory.Start(nil)
	timeout, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.WaitForCacheSync(timeout.Done())
	var cached [2]*apiunstructured.Unstructured
	for i, name := range []string{"one", "two"} {
		obj, err := lister.ByNamespace("team-a").Get(name)
		if err != nil {
			t.Fatal(err)
		}
		cached[i] = obj.(*apiunstructured.Unstructured)
		if diff := cmp.Diff(seed[i], cached[i]); diff != "" {
			t.Errorf("%s (-client's +cached):\n%s", name, diff)
		}
	}
	type shared struct{ Labels, FieldsV1 bool }
	metadata := func(u *apiunstructured.Unstructured) map[string]any { return u.Object["metadata"].(map[string]any) }
	fieldsV1 := func(u *apiunstructured.Unstructured) any {
		return metadata(u)["managedFields"].([]any)[0].(map[string]any)["fieldsV1"]
	}
	one, two := cached[0], cached[1]
	got := shared{
		Labels:   reflect.ValueOf(metadata(one)["labels"]).UnsafePointer() == reflect.ValueOf(metadata(two)["labels"]).UnsafePointer(),
		FieldsV1: reflect.ValueOf(fieldsV1(one)).UnsafePointer() == reflect.ValueOf(fieldsV1(two)).UnsafePointer(),
	}
	if diff := cmp.Diff(shared{Labels: true, FieldsV1: true}, got); diff != "" {
		t.Errorf("shared by the two objects (-want +got):\n%s", diff)
	}
}

// TestDropInTransformBeforeSharing: a transform set with client-go's
// SetTransform edits objects in place, as client-go lets it; the drop-in
// shares what repeats only after it, so an edit of one object's data never
// reaches another's, though their data were equal as the client made
// them.
func TestDropInTransformBeforeSharing(t *testing.T) {
	configMap := func(name string) runtime.Object {
		return &apiunstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "team-a"},
			"data":     map[string]any{"k": "v", "drop": "x"},
		}}
	}
	informer := syncedWithTransform(t, []runtime.Object{configMap("a"), configMap("b"), configMap("c")}, func(obj any) (any, error) {
		if u, ok := obj.(*apiunstructured.Unstructured); ok && u.GetName() == "c" {
			delete(u.Object["data"].(map[string]any), "drop")
		}
		return obj, nil
	})
	got := map[string]map[string]any{}
	for _, name := range []string{"a", "b", "c"} {
		obj, err := informer.Lister().ByNamespace("team-a").Get(name)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = obj.(*apiunstructured.Unstructured).Object["data"].(map[string]any)
	}
	want := map[string]map[string]any{"a": {"k": "v", "drop": "x"}, "b": {"k": "v", "drop": "x"}, "c": {"k": "v"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cached data (-want +got):\n%s", diff)
	}
}

// TestDropInTransformSetsOneMap: a transform that sets one map in every
// object (client-go lets it) gets that map back as it was, whatever the
// drop-in shares: the sharing writes into no map it did not make.
func TestDropInTransformSetsOneMap(t *testing.T) {
	eight := map[string]any{}
	for i := range 8 {
		eight["k"+strconv.Itoa(i)] = "v"
	}
	defaults := map[string]any{"c": eight}
	child := reflect.ValueOf(defaults["c"]).UnsafePointer()
	var seed []runtime.Object
	for _, name := range []string{"a", "b", "c"} {
		seed = append(seed, &apiunstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "team-a"},
		}})
	}
	informer := syncedWithTransform(t, seed, func(obj any) (any, error) {
		if u, ok := obj.(*apiunstructured.Unstructured); ok {
			u.Object["defaults"] = defaults
		}
		return obj, nil
	})
	if got := reflect.ValueOf(defaults["c"]).UnsafePointer(); got != child {
		t.Errorf("the transform's map was written to: its child moved from %p to %p", child, got)
	}
	for _, name := range []string{"a", "b", "c"} {
		obj, err := informer.Lister().ByNamespace("team-a").Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]any{"c": eight}, obj.(*apiunstructured.Unstructured).Object["defaults"]); diff != "" {
			t.Errorf("%s's defaults (-want +got):\n%s", name, diff)
		}
	}
}

// syncedWithTransform returns the drop-in's synced ConfigMaps informer over
// a fake dynamic client holding seed, with transform set client-go's way.
func syncedWithTransform(t *testing.T, seed []runtime.Object, transform cache.TransformFunc) informers.GenericInformer {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{configMapsGVR: "ConfigMapList"}, seed...)
	factory := unstructured.NewDynamicSharedInformerFactory(client, 0)
	informer := factory.ForResource(configMapsGVR)
	if err := informer.Informer().SetTransform(transform); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(factory.Shutdown)
	factory.Start(nil)
	timeout, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(timeout.Done(), informer.Informer().HasSynced) {
		t.Fatal("the informer did not sync")
	}
	return informer
}
