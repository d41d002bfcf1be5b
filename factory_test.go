package generic_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// newDynamicClient returns client-go's fake dynamic client seeded with the
// objects of the fixture files.
func newDynamicClient(t testing.TB, paths ...string) *dynamicfake.FakeDynamicClient {
	t.Helper()
	var objs []runtime.Object
	for _, obj := range load(t, paths...) {
		objs = append(objs, obj)
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, objs...)
}

// startAndSync starts f and fails the test unless every informer syncs.
func startAndSync[T generic.Object](t *testing.T, f *generic.Factory[T]) {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	f.Start(context.Background())
	for gvr, ok := range f.WaitForCacheSync(ctx) {
		if !ok {
			t.Fatalf("%v did not sync", gvr)
		}
	}
}

func widgetSize(w *widget.Widget) string { return w.Name + "=" + itoa(w.Spec.Size) }

func itoa(i int32) string { return strconv.Itoa(int(i)) }

// TestFactoryUnstructuredEvents drives creates, updates and deletes through
// the fake dynamic client and checks what typed handlers and the lister see.
func TestFactoryUnstructuredEvents(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml")
	factory := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()
	informer := factory.ForResource(configMapsGVR)
	label := func(u *unstructured.Unstructured) string {
		color, _, _ := unstructured.NestedString(u.Object, "data", "color")
		return color
	}
	rec := newRecorder(label)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, factory)
	initial := rec.next(t, 3)
	wantInitial := []event{
		{Verb: "ADDED", Key: "team-a/flags"},
		{Verb: "ADDED", Key: "team-a/settings", Last: "blue"},
		{Verb: "ADDED", Key: "team-b/settings", Last: "green"},
	}
	if diff := cmp.Diff(wantInitial, sortEvents(initial)); diff != "" {
		t.Fatalf("initial events (-want +got):\n%s", diff)
	}

	configMaps := client.Resource(configMapsGVR)
	ctx := context.Background()
	tests := []struct {
		name       string
		act        func() error
		wantEvents []event
		wantKeys   []string
	}{{
		name: "create",
		act: func() error {
			cm := newConfigMap("team-b", "extra", "red")
			_, err := configMaps.Namespace("team-b").Create(ctx, cm, metav1.CreateOptions{})
			return err
		},
		wantEvents: []event{{Verb: "ADDED", Key: "team-b/extra", Last: "red"}},
		wantKeys:   []string{"team-a/flags", "team-a/settings", "team-b/extra", "team-b/settings"},
	}, {
		name: "update",
		act: func() error {
			cm := newConfigMap("team-a", "settings", "yellow")
			_, err := configMaps.Namespace("team-a").Update(ctx, cm, metav1.UpdateOptions{})
			return err
		},
		wantEvents: []event{{Verb: "MODIFIED", Key: "team-a/settings", Last: "yellow"}},
		wantKeys:   []string{"team-a/flags", "team-a/settings", "team-b/extra", "team-b/settings"},
	}, {
		name: "delete",
		act: func() error {
			return configMaps.Namespace("team-b").Delete(ctx, "settings", metav1.DeleteOptions{})
		},
		wantEvents: []event{{Verb: "DELETED", Key: "team-b/settings", Last: "green"}},
		wantKeys:   []string{"team-a/flags", "team-a/settings", "team-b/extra"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.act(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantEvents, rec.next(t, len(tc.wantEvents))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			all, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, all)); diff != "" {
				t.Errorf("lister keys (-want +got):\n%s", diff)
			}
		})
	}
	got, err := informer.Lister().Namespace("team-a").Get("settings")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("yellow", label(got)); diff != "" {
		t.Errorf("lister after update (-want +got):\n%s", diff)
	}
	rec.none(t)
}

func newConfigMap(namespace, name, color string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"data":       map[string]any{"color": color},
	}}
}

func sortEvents(events []event) []event {
	sorted := append([]event(nil), events...)
	slices.SortFunc(sorted, func(a, b event) int { return strings.Compare(a.Key, b.Key) })
	return sorted
}

// TestFactoryTypedViewSkipsMalformed feeds typed Widgets from the dynamic
// client through FromUnstructured: a Widget whose spec has the wrong type is
// reported with its key and skipped, and every other Widget is served.
func TestFactoryTypedViewSkipsMalformed(t *testing.T) {
	client := newDynamicClient(t, "testdata/widgets.yaml", "testdata/malformed/widget-wrong-type.yaml")
	errs := make(errorSink, 100)
	factory := generic.NewFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget](),
		generic.WithErrorHandler(errs.handle))
	defer factory.Shutdown()
	informer := factory.ForResource(widget.GVR)
	rec := newRecorder(widgetSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, factory)
	rec.next(t, 3)
	checkConversionError(t, errs.next(t), "team-a/broken")

	widgets := client.Resource(widget.GVR).Namespace("team-a")
	ctx := context.Background()
	tests := []struct {
		name       string
		act        func() error
		wantError  string // key of a reported ConversionError, if any
		wantEvents []event
		wantKeys   []string
	}{{
		name: "a malformed create is reported and skipped",
		act: func() error {
			_, err := widgets.Create(ctx, newWidget("team-a", "broken-2", "huge"), metav1.CreateOptions{})
			return err
		},
		wantError: "team-a/broken-2",
		wantKeys:  []string{"team-a/large", "team-a/small", "team-b/small"},
	}, {
		name: "a good create after it is served",
		act: func() error {
			_, err := widgets.Create(ctx, newWidget("team-a", "medium", int64(5)), metav1.CreateOptions{})
			return err
		},
		wantEvents: []event{{Verb: "ADDED", Key: "team-a/medium", Last: "medium=5"}},
		wantKeys:   []string{"team-a/large", "team-a/medium", "team-a/small", "team-b/small"},
	}, {
		name: "an update that breaks a served Widget removes it with its last good state",
		act: func() error {
			_, err := widgets.Update(ctx, newWidget("team-a", "medium", "five"), metav1.UpdateOptions{})
			return err
		},
		wantError:  "team-a/medium",
		wantEvents: []event{{Verb: "DELETED", Key: "team-a/medium", Last: "medium=5"}},
		wantKeys:   []string{"team-a/large", "team-a/small", "team-b/small"},
	}, {
		name: "fixing it serves it again",
		act: func() error {
			_, err := widgets.Update(ctx, newWidget("team-a", "medium", int64(6)), metav1.UpdateOptions{})
			return err
		},
		wantEvents: []event{{Verb: "ADDED", Key: "team-a/medium", Last: "medium=6"}},
		wantKeys:   []string{"team-a/large", "team-a/medium", "team-a/small", "team-b/small"},
	}, {
		name: "deleting a Widget that was never served is reported, not delivered",
		act: func() error {
			return widgets.Delete(ctx, "broken", metav1.DeleteOptions{})
		},
		wantError: "team-a/broken",
		wantKeys:  []string{"team-a/large", "team-a/medium", "team-a/small", "team-b/small"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.act(); err != nil {
				t.Fatal(err)
			}
			if tc.wantError != "" {
				checkConversionError(t, errs.next(t), tc.wantError)
			}
			if diff := cmp.Diff(tc.wantEvents, nilIfEmpty(rec.next(t, len(tc.wantEvents)))); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			all, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, all)); diff != "" {
				t.Errorf("lister keys (-want +got):\n%s", diff)
			}
		})
	}
	// Reads hand out the very *widget.Widget the cache holds: no casts.
	small, err := informer.Lister().Namespace("team-b").Get("small")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(widget.Spec{Size: 2, Color: "green", ConfigMapName: "settings"}, small.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
}

func nilIfEmpty(events []event) []event {
	if len(events) == 0 {
		return nil
	}
	return events
}

func newWidget(namespace, name string, size any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec":       map[string]any{"size": size},
	}}
}

func checkConversionError(t *testing.T, err error, wantKey string) {
	t.Helper()
	var conversion *generic.ConversionError
	if !errors.As(err, &conversion) {
		t.Fatalf("reported %v, want a *ConversionError", err)
	}
	if diff := cmp.Diff(wantKey, conversion.Key); diff != "" {
		t.Errorf("ConversionError.Key (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(widget.GVR, conversion.GVR); diff != "" {
		t.Errorf("ConversionError.GVR (-want +got):\n%s", diff)
	}
}

func TestFactorySharesOneInformerPerGVR(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
	factory := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()

	tests := []struct {
		name string
		a, b schema.GroupVersionResource
		same bool
	}{
		{name: "same GVR", a: configMapsGVR, b: configMapsGVR, same: true},
		{name: "other resource", a: configMapsGVR, b: widget.GVR, same: false},
		{name: "other version", a: widget.GVR, b: widget.SchemeGroupVersion.WithResource("widgets").GroupResource().WithVersion("v2"), same: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := factory.ForResource(tc.a), factory.ForResource(tc.b)
			if diff := cmp.Diff(tc.same, a == b); diff != "" {
				t.Errorf("same informer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.same, a.Informer() == b.Informer()); diff != "" {
				t.Errorf("same SharedIndexInformer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFactoryStartTwice checks that Start is idempotent and that a second
// Start runs only the informers added since.
func TestFactoryStartTwice(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
	factory := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()
	ctx, cancel := testContext(t)
	defer cancel()

	configMaps := factory.ForResource(configMapsGVR)
	factory.Start(ctx)
	factory.Start(ctx)
	if diff := cmp.Diff(map[schema.GroupVersionResource]bool{configMapsGVR: true}, factory.WaitForCacheSync(ctx)); diff != "" {
		t.Fatalf("first sync (-want +got):\n%s", diff)
	}
	widgets := factory.ForResource(widget.GVR)
	if widgets.HasSynced() {
		t.Fatal("an informer added after Start runs before the next Start")
	}
	factory.Start(ctx)
	want := map[schema.GroupVersionResource]bool{configMapsGVR: true, widget.GVR: true}
	if diff := cmp.Diff(want, factory.WaitForCacheSync(ctx)); diff != "" {
		t.Fatalf("second sync (-want +got):\n%s", diff)
	}
	if !configMaps.HasSynced() || !widgets.HasSynced() {
		t.Error("informers not synced")
	}
}

// TestWaitForCacheSyncCancelled checks that a wait on an informer that never
// syncs returns within 100 ms of its context ending: it does not poll.
func TestWaitForCacheSyncCancelled(t *testing.T) {
	never := func(schema.GroupVersionResource, string, generic.TweakListOptionsFunc) cache.ListerWatcher {
		return generic.FailingListerWatcher(errors.New("this resource never lists"))
	}
	tests := []struct {
		name string
		// cancelAfter is how long after the wait began ctx is cancelled; a
		// negative value cancels it before the wait.
		cancelAfter time.Duration
	}{
		{name: "context already cancelled", cancelAfter: -1},
		{name: "context cancelled while waiting", cancelAfter: 50 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := generic.NewFactory[*corev1.Pod](never, nil, generic.WithErrorHandler(func(context.Context, error) {}))
			defer factory.Shutdown()
			factory.ForResource(podsGVR)
			factory.Start(context.Background())

			ctx, cancel := context.WithCancel(context.Background())
			cancelledAt := make(chan time.Time, 1)
			cancelNow := func() {
				cancelledAt <- time.Now()
				cancel()
			}
			if tc.cancelAfter < 0 {
				cancelNow()
			} else {
				timer := time.AfterFunc(tc.cancelAfter, cancelNow)
				defer timer.Stop()
			}
			got := factory.WaitForCacheSync(ctx)
			returned := time.Now()
			cancelled := <-cancelledAt
			if diff := cmp.Diff(map[schema.GroupVersionResource]bool{podsGVR: false}, got); diff != "" {
				t.Errorf("synced (-want +got):\n%s", diff)
			}
			if late := returned.Sub(cancelled); late > 100*time.Millisecond {
				t.Errorf("returned %v after the context ended, want within 100ms", late)
			}
		})
	}
}

// TestShutdownLeavesNoGoroutine starts informers of several kinds, shuts the
// factory down and checks, with goleak, that every goroutine has ended.
func TestShutdownLeavesNoGoroutine(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
	factory := generic.NewFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget]())
	factory.ForResource(widget.GVR)
	unstructuredFactory := generic.NewFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	unstructuredFactory.ForResource(configMapsGVR)
	startAndSync(t, factory)
	startAndSync(t, unstructuredFactory)

	factory.Shutdown()
	unstructuredFactory.Shutdown()
	factory.Shutdown() // twice is fine
	goleak.VerifyNone(t)

	// After Shutdown, Start does nothing.
	factory.ForResource(configMapsGVR)
	factory.Start(context.Background())
	goleak.VerifyNone(t)
}
