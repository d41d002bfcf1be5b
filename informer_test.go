package generic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/fixtures"
	"github.com/generic-informers/generic/internal/widget"
)

func podImage(p *corev1.Pod) string { return p.Spec.Containers[0].Image }

// podLists returns the fixture Pods as two lists: as first listed, and as a
// relist after a watch expired finds them: team-a/web-1 gone, team-a/web-0
// on a new image. typed chooses a *corev1.PodList or an UnstructuredList.
func podLists(t *testing.T, typed bool) (first, relist runtime.Object) {
	all := load(t, "testdata/pods.yaml")
	var kept []*unstructured.Unstructured
	for _, pod := range all {
		pod = pod.DeepCopy()
		switch pod.GetNamespace() + "/" + pod.GetName() {
		case "team-a/web-1":
			continue
		case "team-a/web-0":
			containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
			containers[0].(map[string]any)["image"] = "nginx:1.28"
			if err := unstructured.SetNestedSlice(pod.Object, containers, "spec", "containers"); err != nil {
				t.Fatal(err)
			}
			pod.SetResourceVersion("7")
		}
		kept = append(kept, pod)
	}
	if !typed {
		return unstructuredList("5", all...), unstructuredList("9", kept...)
	}
	toPodList := func(rv string, objs []*unstructured.Unstructured) *corev1.PodList {
		list := &corev1.PodList{}
		list.ResourceVersion = rv
		for _, obj := range only[*corev1.Pod](mustTyped(t, objs)) {
			list.Items = append(list.Items, *obj)
		}
		return list
	}
	return toPodList("5", all), toPodList("9", kept)
}

func mustTyped(t *testing.T, objs []*unstructured.Unstructured) []runtime.Object {
	t.Helper()
	typed, err := fixtures.Typed(widget.NewScheme(), objs)
	if err != nil {
		t.Fatal(err)
	}
	return typed
}

// TestTombstoneDelivery breaks the watch with 410 Gone and lets the relist
// find one Pod gone and one changed: the gone Pod reaches the typed handler
// as a delete with the tombstone and its last cached state, never as a value
// that would panic a type assertion.
func TestTombstoneDelivery(t *testing.T) {
	tests := []struct {
		name    string
		typed   bool
		convert generic.Converter[*corev1.Pod]
	}{
		{name: "typed source", typed: true},
		{name: "unstructured source converted at ingest", typed: false, convert: generic.FromUnstructured[*corev1.Pod]()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, relist := podLists(t, tc.typed)
			lw := newScriptedListerWatcher(first, relist)
			informer := newInformer(lw, podsGVR, tc.convert)
			rec := newRecorder(podImage)
			if _, err := informer.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			stop := runInformer(t, informer.Run)
			defer stop()
			rec.next(t, 4)

			expire(lw.nextWatch(t))

			want := []event{
				{Verb: "MODIFIED", Key: "team-a/web-0", Last: "nginx:1.28"},
				{Verb: "DELETED", Key: "team-a/web-1", Tombstone: true, Last: "nginx:1.27"},
			}
			if diff := cmp.Diff(want, sortEvents(rec.next(t, 2))); diff != "" {
				t.Errorf("events after relist (-want +got):\n%s", diff)
			}
			pods, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"team-a/db-0", "team-a/web-0", "team-b/web-0"}, keysOf(t, pods)); diff != "" {
				t.Errorf("lister keys after relist (-want +got):\n%s", diff)
			}
		})
	}
}

// metaObject is an interface type parameter, as typed.Object is: a nil
// *corev1.Pod in it is not its zero value.
type metaObject interface {
	runtime.Object
	metav1.Object
}

// TestConverterReturnsTypedNil: a Converter to an interface type that
// returns a nil pointer with no error has that object reported and skipped;
// the informer serves the others, and Run(nil) on it, run already, returns.
func TestConverterReturnsTypedNil(t *testing.T) {
	first, _ := podLists(t, true)
	errs := make(errorSink, 100)
	convert := func(obj runtime.Object) (metaObject, error) {
		if pod := obj.(*corev1.Pod); pod.Namespace == "team-b" {
			return (*corev1.Pod)(nil), nil
		}
		return obj.(*corev1.Pod), nil
	}
	informer := newInformer[metaObject](newScriptedListerWatcher(first), podsGVR, convert, generic.WithErrorHandler(errs.handle))
	defer runSynced(t, informer)()
	var convErr *generic.ConversionError
	if err := errs.next(t); !errors.As(err, &convErr) || convErr.Key != "team-b/web-0" {
		t.Errorf("reported %v, want a *ConversionError for team-b/web-0", err)
	}
	got, err := informer.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team-a/db-0", "team-a/web-0", "team-a/web-1"}, keysOf(t, got)); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	informer.Run(nil) //nolint:staticcheck // SA1012: Run(nil) on a running informer must return
}

// TestBadTransformResult: a transform that returns no T has each object
// reported and stored as it was, instead of dropped without a word.
func TestBadTransformResult(t *testing.T) {
	tests := []struct {
		name      string
		transform cache.TransformFunc
	}{
		{"nil", func(any) (any, error) { return nil, nil }},
		{"a nil *Pod", func(any) (any, error) { return (*corev1.Pod)(nil), nil }},
		{"another type", func(any) (any, error) { return &corev1.ConfigMap{}, nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := podLists(t, true)
			errs := make(errorSink, 100)
			informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil,
				generic.WithErrorHandler(errs.handle), generic.WithTransform(tc.transform))
			defer runSynced(t, informer)()
			for range 4 {
				if err := errs.next(t); !errors.Is(err, generic.ErrUnexpectedType) {
					t.Errorf("reported %v, want an error wrapping ErrUnexpectedType", err)
				}
			}
			got, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"team-a/db-0", "team-a/web-0", "team-a/web-1", "team-b/web-0"}, keysOf(t, got)); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTransformError: a transform that fails on an object makes it one
// that did not convert: reported as a *ConversionError naming it, and left
// out of the cache; the others are cached.
func TestTransformError(t *testing.T) {
	tests := []struct {
		name     string
		failOn   string
		wantKeys []string
	}{
		{name: "one object", failOn: "web-1", wantKeys: []string{"team-a/db-0", "team-a/web-0", "team-b/web-0"}},
		{name: "none", failOn: "", wantKeys: []string{"team-a/db-0", "team-a/web-0", "team-a/web-1", "team-b/web-0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := podLists(t, true)
			errs := make(errorSink, 100)
			informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil,
				generic.WithErrorHandler(errs.handle), generic.WithTransform(func(obj any) (any, error) {
					if obj.(*corev1.Pod).Name == tc.failOn {
						return nil, errors.New("no")
					}
					return obj, nil
				}))
			defer runSynced(t, informer)()
			if tc.failOn != "" {
				var conversion *generic.ConversionError
				if err := errs.next(t); !errors.As(err, &conversion) || conversion.Key != "team-a/"+tc.failOn {
					t.Errorf("reported %v, want a *ConversionError for team-a/%s", err, tc.failOn)
				}
			}
			got, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, got)); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNilIndexFunction: WithIndexers with a nil function reports it as an
// *IndexError naming the index, which is left out.
func TestNilIndexFunction(t *testing.T) {
	errs := make(errorSink, 10)
	newInformer[*corev1.Pod](newScriptedListerWatcher(), podsGVR, nil,
		generic.WithErrorHandler(errs.handle), generic.WithIndexers(cache.Indexers{"broken": nil}))
	var indexErr *generic.IndexError
	if err := errs.next(t); !errors.As(err, &indexErr) || indexErr.Index != "broken" {
		t.Errorf("reported %v, want an *IndexError for index broken", err)
	}
}

// TestWatchReturnsNothing: a ListerWatcher whose Watch returns neither a
// watch nor an error (client-go's reflector would panic on it) is treated as
// failing: the informer syncs from the list, and retries the watch.
func TestWatchReturnsNothing(t *testing.T) {
	tests := []struct {
		name    string
		convert generic.Converter[*corev1.Pod]
	}{
		{"without a converter", nil},
		{"with a converter", generic.Identity[*corev1.Pod]()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, _ := podLists(t, true)
			watched := make(chan struct{}, 10)
			lw := &cache.ListWatch{
				ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return first, nil },
				WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
					watched <- struct{}{}
					return nil, nil
				},
			}
			informer := newInformer[*corev1.Pod](lw, podsGVR, tc.convert)
			defer runSynced(t, informer)()
			for range 2 { // the first watch, and the retry after it failed
				select {
				case <-watched:
				case <-testDone(t):
					t.Fatal("the informer did not watch again")
				}
			}
		})
	}
}

// TestErrorHandlerMayReadTheCache: an ErrorHandler told of an index error
// reads the informer's cache. Index functions run with the cache locked, so
// the report must come after: the informer syncs and the read returns.
func TestErrorHandlerMayReadTheCache(t *testing.T) {
	first, _ := podLists(t, true)
	var informer generic.Informer[*corev1.Pod]
	listed := make(chan int, 100)
	informer = newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil,
		generic.WithErrorHandler(func(context.Context, error) {
			pods, _ := informer.Lister().List(labels.Everything())
			listed <- len(pods)
		}),
		generic.WithIndexers(cache.Indexers{"failing": func(any) ([]string, error) {
			return nil, errors.New("no index for you")
		}}))
	defer runSynced(t, informer)()
	select {
	case <-listed:
	case <-testDone(t):
		t.Fatal("the ErrorHandler's read of the cache did not return")
	}
}

// TestIndexerErrorsDoNotPanic adds index functions that fail on some objects:
// client-go's indexer would panic; the informer reports an *IndexError, leaves
// those objects out of that index, says so in every answer of that index
// (*PartialIndexError) and serves everything else.
func TestIndexerErrorsDoNotPanic(t *testing.T) {
	first, _ := podLists(t, true)
	errs := make(errorSink, 100)
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil,
		generic.WithErrorHandler(errs.handle),
		generic.WithIndexers(cache.Indexers{"untyped-image": func(obj any) ([]string, error) {
			if pod := obj.(*corev1.Pod); pod.Namespace == "team-b" {
				return nil, errors.New("team-b has no images")
			}
			return []string{podImage(obj.(*corev1.Pod))}, nil
		}}))
	err := informer.AddIndexers(cache.TypedIndexers[*corev1.Pod]{
		"node": func(pod *corev1.Pod) ([]string, error) {
			if pod.Spec.NodeName == "node-2" {
				return nil, fmt.Errorf("node-2 is not indexed")
			}
			return []string{pod.Spec.NodeName}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer runSynced(t, informer)()
	reported := map[string]bool{}
	for range 3 { // team-a/web-1 and team-b/web-0 on node-2; team-b/web-0's image
		var indexErr *generic.IndexError
		if err := errs.next(t); !errors.As(err, &indexErr) {
			t.Fatalf("reported %v, want an *IndexError", err)
		} else {
			reported[indexErr.Index+" "+indexErr.Key] = true
		}
	}
	wantReported := map[string]bool{"node team-a/web-1": true, "node team-b/web-0": true, "untyped-image team-b/web-0": true}
	if diff := cmp.Diff(wantReported, reported); diff != "" {
		t.Errorf("reported index errors (-want +got):\n%s", diff)
	}

	tests := []struct {
		name, index, value string
		want               indexAnswer
	}{
		{name: "typed index", index: "node", value: "node-1",
			want: indexAnswer{Keys: []string{"team-a/db-0", "team-a/web-0"}, Partial: []string{"team-a/web-1", "team-b/web-0"}}},
		{name: "typed index leaves failed objects out", index: "node", value: "node-2",
			want: indexAnswer{Partial: []string{"team-a/web-1", "team-b/web-0"}}},
		{name: "untyped index", index: "untyped-image", value: "nginx:1.27",
			want: indexAnswer{Keys: []string{"team-a/web-0", "team-a/web-1"}, Partial: []string{"team-b/web-0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := informer.Lister().ByIndex(tc.index, tc.value)
			if diff := cmp.Diff(tc.want, answerOf(anySlice(got), err)); diff != "" {
				t.Errorf("ByIndex (-want +got):\n%s", diff)
			}
		})
	}
}

func testDone(t *testing.T) <-chan struct{} {
	ctx, cancel := testContext(t)
	t.Cleanup(cancel)
	return ctx.Done()
}

func TestAddEventHandlerBadInput(t *testing.T) {
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(), podsGVR, nil)
	tests := []struct {
		name    string
		handler cache.TypedResourceEventHandler[*corev1.Pod]
		options []cache.HandlerOptions
	}{
		{name: "nil handler", handler: nil},
		{name: "two HandlerOptions", handler: newRecorder(podImage), options: []cache.HandlerOptions{{}, {}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := informer.AddEventHandler(tc.handler, tc.options...); err == nil {
				t.Error("no error")
			}
		})
	}
	if err := informer.AddIndexers(cache.TypedIndexers[*corev1.Pod]{"nil": nil}); err == nil {
		t.Error("AddIndexers of a nil function: no error")
	}
}

// TestMalformedObjectsInList lists Widgets among which one has a spec of the
// wrong type and one has no name: both are reported with what key they have
// and skipped, the informer syncs and serves the others.
func TestMalformedObjectsInList(t *testing.T) {
	objs := load(t, "testdata/widgets.yaml", "testdata/malformed/widget-wrong-type.yaml", "testdata/malformed/no-name.yaml")
	errs := make(errorSink, 100)
	informer := newInformer(newScriptedListerWatcher(unstructuredList("3", objs...)), widget.GVR,
		generic.FromUnstructured[*widget.Widget](), generic.WithErrorHandler(errs.handle))
	rec := newRecorder(widgetSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	stop := runInformer(t, informer.Run)
	defer stop()
	want := []event{
		{Verb: "ADDED", Key: "team-a/large", Last: "large=10"},
		{Verb: "ADDED", Key: "team-a/small", Last: "small=1"},
		{Verb: "ADDED", Key: "team-b/small", Last: "small=2"},
	}
	if diff := cmp.Diff(want, sortEvents(rec.next(t, 3))); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	var keys []string
	for range 2 {
		var conversion *generic.ConversionError
		if err := errs.next(t); !errors.As(err, &conversion) {
			t.Fatalf("reported %v, want a *ConversionError", err)
		} else {
			keys = append(keys, conversion.Key)
		}
	}
	if diff := cmp.Diff([]string{"team-a/", "team-a/broken"}, sortedStrings(keys)); diff != "" {
		t.Errorf("reported keys (-want +got):\n%s", diff)
	}
	// Handlers may see the initial list before HasSynced turns true.
	if !cache.WaitForCacheSync(testDone(t), informer.HasSynced) {
		t.Error("informer not synced")
	}
}

func sortedStrings(s []string) []string {
	sorted := append([]string(nil), s...)
	slices.Sort(sorted)
	return sorted
}

// TestRunEndsWithContext checks that Run returns once its context ends.
func TestRunEndsWithContext(t *testing.T) {
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(), podsGVR, nil,
		generic.WithErrorHandler(func(context.Context, error) {}))
	stop := runInformer(t, informer.Run)
	stop() // waits for Run to return
	if !informer.Informer().IsStopped() {
		t.Error("informer not stopped")
	}
}

// TestStripManagedFields checks that WithStripManagedFields drops
// managedFields and nothing else, before the user's transform.
func TestStripManagedFields(t *testing.T) {
	first, _ := podLists(t, true)
	original := first.(*corev1.PodList).DeepCopy()
	for i := range first.(*corev1.PodList).Items {
		fieldsV1 := &metav1.FieldsV1{} // SetRawString: Raw is no field with the fieldsv1string build tag
		fieldsV1.SetRawString(`{"f:spec":{}}`)
		first.(*corev1.PodList).Items[i].ManagedFields = []metav1.ManagedFieldsEntry{{
			Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			FieldsType: "FieldsV1", FieldsV1: fieldsV1,
		}}
	}
	var transformed []string
	informer := newInformer[*corev1.Pod](newScriptedListerWatcher(first), podsGVR, nil,
		generic.WithStripManagedFields(),
		generic.WithTransform(func(obj any) (any, error) {
			if len(obj.(*corev1.Pod).ManagedFields) == 0 {
				transformed = append(transformed, obj.(*corev1.Pod).Name)
			}
			return obj, nil
		}))
	defer runSynced(t, informer)()
	for _, want := range original.Items {
		got, err := informer.Lister().Namespace(want.Namespace).Get(want.Name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, got); diff != "" {
			t.Errorf("%s/%s (-want: the object without managedFields, +got):\n%s", want.Namespace, want.Name, diff)
		}
	}
	if diff := cmp.Diff(len(original.Items), len(transformed)); diff != "" {
		t.Errorf("objects the user's transform saw stripped (-want +got):\n%s", diff)
	}
}
