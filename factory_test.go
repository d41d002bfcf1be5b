package generic_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/generictest"
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
	if err := f.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
}

func widgetSize(w *widget.Widget) string { return w.Name + "=" + strconv.Itoa(int(w.Spec.Size)) }

// TestFactoryUnstructuredEvents drives creates, updates and deletes through
// the fake dynamic client (generictest) and checks what typed handlers and
// the lister of an unstructured informer see.
func TestFactoryUnstructuredEvents(t *testing.T) {
	fake := generictest.New(t, widget.NewScheme(), generictest.Files("testdata/configmaps.yaml"))
	informer := generictest.NewUnstructuredInformer(fake, configMapsGVR)
	rec := generictest.NewRecorder[*unstructured.Unstructured]()
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]generictest.Event{
		{Verb: generictest.Added, Key: "team-a/flags"},
		{Verb: generictest.Added, Key: "team-a/settings"},
		{Verb: generictest.Added, Key: "team-b/settings"},
	}, rec.Events(), generictest.IgnoreResourceVersion(), generictest.IgnoreOrder()); diff != "" {
		t.Fatalf("initial events (-want +got):\n%s", diff)
	}

	tests := []struct {
		name      string
		change    func()
		wantEvent generictest.Event
		wantKeys  []string
		wantColor map[string]string
	}{{
		name:      "create",
		change:    func() { fake.Create(newConfigMap("team-b", "extra", "red")) },
		wantEvent: generictest.Event{Verb: generictest.Added, Key: "team-b/extra"},
		wantKeys:  []string{"team-a/flags", "team-a/settings", "team-b/extra", "team-b/settings"},
		wantColor: map[string]string{"team-a/settings": "blue", "team-b/extra": "red", "team-b/settings": "green"},
	}, {
		name:      "update",
		change:    func() { fake.Update(newConfigMap("team-a", "settings", "yellow")) },
		wantEvent: generictest.Event{Verb: generictest.Modified, Key: "team-a/settings"},
		wantKeys:  []string{"team-a/flags", "team-a/settings", "team-b/extra", "team-b/settings"},
		wantColor: map[string]string{"team-a/settings": "yellow", "team-b/extra": "red", "team-b/settings": "green"},
	}, {
		name:      "delete",
		change:    func() { fake.Delete(newConfigMap("team-b", "settings", "")) },
		wantEvent: generictest.Event{Verb: generictest.Deleted, Key: "team-b/settings"},
		wantKeys:  []string{"team-a/flags", "team-a/settings", "team-b/extra"},
		wantColor: map[string]string{"team-a/settings": "yellow", "team-b/extra": "red"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			tc.change() // returns once the handlers have seen it
			if diff := cmp.Diff([]generictest.Event{tc.wantEvent}, rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			all, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantKeys, keysOf(t, all)); diff != "" {
				t.Errorf("lister keys (-want +got):\n%s", diff)
			}
			colors := map[string]string{}
			for _, cm := range all {
				if color, found, _ := unstructured.NestedString(cm.Object, "data", "color"); found {
					colors[cm.GetNamespace()+"/"+cm.GetName()] = color
				}
			}
			if diff := cmp.Diff(tc.wantColor, colors); diff != "" {
				t.Errorf("cached data (-want +got):\n%s", diff)
			}
		})
	}
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

// TestFactoryTypedViewSkipsMalformed serves typed Widgets from the dynamic
// client through FromUnstructured (generictest's typed informers): a Widget
// whose spec has the wrong type is reported with its key and skipped, and
// every other Widget is served.
func TestFactoryTypedViewSkipsMalformed(t *testing.T) {
	fake := generictest.New(t, widget.NewScheme(), generictest.Files("testdata/widgets.yaml", "testdata/malformed/widget-wrong-type.yaml"))
	informer := generictest.NewInformer[*widget.Widget](fake)
	rec := generictest.NewRecorder[*widget.Widget]()
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	// The initial list's ConversionError goes to the ErrorHandler on the
	// informer's callbacks goroutine, which nothing the informer's sync or
	// the new handler's replay waits for (a change made through the Fake
	// does wait for it: see Fake.Create).
	waitUntil(t, "the initial list's malformed Widget is reported", func() bool { return len(fake.Errors()) > 0 })
	checkSkipped(t, fake, []string{"team-a/broken"})

	tests := []struct {
		name        string
		change      func()
		wantSkipped []string // keys of the ConversionErrors reported so far
		wantEvents  []generictest.Event
		wantSizes   map[string]int32
		wantStale   []string // keys of generic.StaleObjects
	}{{
		name:        "a malformed create is reported and skipped",
		change:      func() { fake.Create(newWidget("team-a", "broken-2", "huge")) },
		wantSkipped: []string{"team-a/broken", "team-a/broken-2"},
		wantSizes:   map[string]int32{"team-a/large": 10, "team-a/small": 1, "team-b/small": 2},
	}, {
		name:        "a good create after it is served",
		change:      func() { fake.Create(newWidget("team-a", "medium", int64(5))) },
		wantSkipped: []string{"team-a/broken", "team-a/broken-2"},
		wantEvents:  []generictest.Event{{Verb: generictest.Added, Key: "team-a/medium"}},
		wantSizes:   map[string]int32{"team-a/large": 10, "team-a/medium": 5, "team-a/small": 1, "team-b/small": 2},
	}, {
		// The server still has it: no delete, its last good state stays
		// (Status.Stale).
		name:        "an update that breaks a served Widget keeps its last good state",
		change:      func() { fake.Update(newWidget("team-a", "medium", "five")) },
		wantSkipped: []string{"team-a/broken", "team-a/broken-2", "team-a/medium"},
		wantSizes:   map[string]int32{"team-a/large": 10, "team-a/medium": 5, "team-a/small": 1, "team-b/small": 2},
		wantStale:   []string{"team-a/medium"},
	}, {
		name:        "fixing it serves it again",
		change:      func() { fake.Update(newWidget("team-a", "medium", int64(6))) },
		wantSkipped: []string{"team-a/broken", "team-a/broken-2", "team-a/medium"},
		wantEvents:  []generictest.Event{{Verb: generictest.Modified, Key: "team-a/medium"}},
		wantSizes:   map[string]int32{"team-a/large": 10, "team-a/medium": 6, "team-a/small": 1, "team-b/small": 2},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			tc.change()
			checkSkipped(t, fake, tc.wantSkipped)
			if diff := cmp.Diff(tc.wantEvents, rec.Events(), generictest.IgnoreResourceVersion()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			all, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			sizes := map[string]int32{}
			for _, w := range all { // *widget.Widget: no casts
				sizes[w.Namespace+"/"+w.Name] = w.Spec.Size
			}
			if diff := cmp.Diff(tc.wantSizes, sizes); diff != "" {
				t.Errorf("cached Widgets (-want +got):\n%s", diff)
			}
			var stale []string
			for _, o := range generic.StaleObjects(informer) {
				stale = append(stale, o.Key)
			}
			if diff := cmp.Diff(tc.wantStale, stale); diff != "" {
				t.Errorf("StaleObjects (-want +got):\n%s", diff)
			}
		})
	}
}

func newWidget(namespace, name string, size any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"spec":       map[string]any{"size": size},
	}}
}

// checkSkipped checks the keys of the ConversionErrors the fake's
// informers reported, all for Widgets.
func checkSkipped(t *testing.T, fake *generictest.Fake, want []string) {
	t.Helper()
	keys, others := skippedKeys(fake)
	for _, err := range others {
		t.Errorf("reported %v, want a *ConversionError of widgets", err)
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}

// skippedKeys returns the keys of the ConversionErrors of widgets the
// fake's informers reported so far, sorted, and the other errors.
func skippedKeys(fake *generictest.Fake) (keys []string, others []error) {
	for _, err := range fake.Errors() {
		var conversion *generic.ConversionError
		if !errors.As(err, &conversion) || conversion.GVR != widget.GVR {
			others = append(others, err)
			continue
		}
		if !slices.Contains(keys, conversion.Key) {
			keys = append(keys, conversion.Key)
		}
	}
	slices.Sort(keys)
	return keys, others
}

func TestFactorySharesOneInformerPerGVR(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
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
			a, b := acquire(factory, tc.a), acquire(factory, tc.b)
			if diff := cmp.Diff(tc.same, a.Informer() == b.Informer()); diff != "" {
				t.Errorf("same SharedIndexInformer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFactoryStartTwice: Start may be called more than once, and an
// informer asked for after Start runs at once under its context; with the
// client-go-shaped GenericInformerFactory (the drop-ins'), at the next
// Start, as client-go's factories do.
func TestFactoryStartTwice(t *testing.T) {
	t.Run("Factory: runs at once", func(t *testing.T) {
		client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
		factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
		defer factory.Shutdown()
		ctx, cancel := testContext(t)
		defer cancel()

		configMaps := acquire(factory, configMapsGVR)
		factory.Start(ctx)
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			t.Fatalf("first sync: %v", err)
		}
		widgets := acquire(factory, widget.GVR)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			t.Fatalf("sync of the late informer without a second Start: %v", err)
		}
		if !configMaps.HasSynced() || !widgets.HasSynced() {
			t.Error("informers not synced")
		}
	})
	t.Run("GenericInformerFactory: runs at the next Start", func(t *testing.T) {
		client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
		factory := generic.NewGenericInformerFactory[*unstructured.Unstructured](generic.DynamicSource(client), 0, "", nil, nil)
		defer factory.Shutdown()
		stop := testDone(t)

		configMaps := factory.ForResource(configMapsGVR)
		factory.Start(stop)
		factory.Start(stop)
		if diff := cmp.Diff(map[schema.GroupVersionResource]bool{configMapsGVR: true}, factory.WaitForCacheSync(stop)); diff != "" {
			t.Fatalf("first sync (-want +got):\n%s", diff)
		}
		widgets := factory.ForResource(widget.GVR)
		if widgets.Informer().HasSynced() || widgets.Informer().IsStopped() {
			t.Fatal("the late informer runs before the next Start")
		}
		if diff := cmp.Diff(map[schema.GroupVersionResource]bool{configMapsGVR: true}, factory.WaitForCacheSync(stop)); diff != "" {
			t.Fatalf("sync before a second Start (-want +got):\n%s", diff)
		}
		factory.Start(stop)
		want := map[schema.GroupVersionResource]bool{configMapsGVR: true, widget.GVR: true}
		if diff := cmp.Diff(want, factory.WaitForCacheSync(stop)); diff != "" {
			t.Fatalf("second sync (-want +got):\n%s", diff)
		}
		if !configMaps.Informer().HasSynced() || !widgets.Informer().HasSynced() {
			t.Error("informers not synced")
		}
	})
}

// TestWaitForCacheSyncCancelled: a wait on an informer that never syncs
// ends when its context does, with a *SyncError that says the informer is
// still syncing and wraps the context's error. (That it returns at once,
// not at a poll, holds by construction: it selects on ctx.Done(); a bound
// in real time would be a timing claim a loaded machine can break.)
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
			factory := newFactory[*corev1.Pod](never, nil, generic.WithErrorHandler(func(context.Context, error) {}))
			defer factory.Shutdown()
			acquire(factory, podsGVR)
			factory.Start(context.Background())

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelAfter < 0 {
				cancel()
			} else {
				timer := time.AfterFunc(tc.cancelAfter, cancel)
				defer timer.Stop()
			}
			returned := make(chan error, 1)
			go func() { returned <- factory.WaitForCacheSync(ctx).AsError() }()
			var err error
			select {
			case err = <-returned:
			case <-time.After(boundedWait):
				t.Fatalf("the wait did not return within %v of its context's end", boundedWait)
			}
			var syncErr *generic.SyncError
			if !errors.As(err, &syncErr) || !errors.Is(err, context.Canceled) {
				t.Fatalf("WaitForCacheSync = %v, want a *SyncError wrapping context.Canceled", err)
			}
			got := []schema.GroupVersionResource{}
			for _, s := range syncErr.Unsynced {
				got = append(got, s.GVR)
			}
			if diff := cmp.Diff([]schema.GroupVersionResource{podsGVR}, got); diff != "" {
				t.Errorf("unsynced informers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNilClient: a factory over a nil dynamic client, or a nil pointer of a
// client type (what a failed dynamic.NewForConfig leaves), never panics: its
// informers do not sync and say why.
func TestNilClient(t *testing.T) {
	tests := []struct {
		name   string
		client dynamic.Interface
	}{
		{"nil", nil},
		{"nil *FakeDynamicClient", (*dynamicfake.FakeDynamicClient)(nil)},
		{"nil *DynamicClient", (*dynamic.DynamicClient)(nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(tc.client), nil)
			defer factory.Shutdown()
			informer := acquire(factory, widget.GVR)
			factory.Start(context.Background())
			pollFor(t, "the informer's list fails", func() bool { return informer.Status().LastError != nil })
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := factory.WaitForCacheSync(ctx).AsError(); !errors.Is(err, generic.ErrNilClient) {
				t.Errorf("error = %v, want one wrapping ErrNilClient", err)
			}
		})
	}
}

// TestShutdownWaitsForCallbacks: Shutdown returns only once the callbacks
// the informers' goroutines were in have returned. An ErrorHandler is
// reporting a malformed Widget when Shutdown is called, and takes a while
// after that to finish (100 ms, as a slow log sink would).
func TestShutdownWaitsForCallbacks(t *testing.T) {
	client := newDynamicClient(t, "testdata/widgets.yaml")
	reporting := make(chan struct{})
	var once sync.Once
	var finished atomic.Bool
	factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget](),
		generic.WithErrorHandler(func(ctx context.Context, err error) {
			once.Do(func() { close(reporting) })
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond)
			finished.Store(true)
		}))
	acquire(factory, widget.GVR)
	startAndSync(t, factory)

	malformed := load(t, "testdata/malformed/widget-wrong-type.yaml")[0]
	ctx, cancel := testContext(t)
	defer cancel()
	if _, err := client.Resource(widget.GVR).Namespace(malformed.GetNamespace()).Create(ctx, malformed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-reporting:
	case <-ctx.Done():
		t.Fatal("the malformed Widget was not reported")
	}
	factory.Shutdown()
	if !finished.Load() {
		t.Error("Shutdown returned while the ErrorHandler was still running")
	}
}

// TestShutdownLeavesNoGoroutine starts informers of several kinds, shuts the
// factory down and checks, with goleak, that every goroutine has ended.
func TestShutdownLeavesNoGoroutine(t *testing.T) {
	client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
	factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget]())
	acquire(factory, widget.GVR)
	unstructuredFactory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	acquire(unstructuredFactory, configMapsGVR)
	startAndSync(t, factory)
	startAndSync(t, unstructuredFactory)

	factory.Shutdown()
	unstructuredFactory.Shutdown()
	if diff := cmp.Diff([]string(nil), libraryGoroutines()); diff != "" {
		t.Errorf("goroutines of the library still there when Shutdown returned (-want +got):\n%s", diff)
	}
	factory.Shutdown() // twice is fine
	goleak.VerifyNone(t)

	// After Shutdown, Start does nothing.
	acquire(factory, configMapsGVR)
	factory.Start(context.Background())
	goleak.VerifyNone(t)
}
