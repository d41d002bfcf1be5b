package generic_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// errDrifted is how the converter and the transform of these tests refuse a
// ConfigMap whose data says it is bad: a state the controller's Go type
// cannot take (a CRD version whose field changed type, say).
var errDrifted = errors.New("drifted from the Go type")

func drifted(cm *corev1.ConfigMap) bool { return cm.Data["bad"] == "true" }

// refuseDrifted converts a ConfigMap that has not drifted.
func refuseDrifted(obj runtime.Object) (*corev1.ConfigMap, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("a %T", obj)
	}
	if drifted(cm) {
		return nil, errDrifted
	}
	return cm, nil
}

// badWays are the ways a state of a known object fails to reach the cache:
// its conversion, or the transform.
var badWays = []struct {
	name    string
	convert generic.Converter[*corev1.ConfigMap]
	opts    []generic.InformerOption
}{
	{name: "conversion fails", convert: refuseDrifted},
	{name: "conversion fails, compact store", convert: refuseDrifted, opts: []generic.InformerOption{generic.WithCompactStore(0)}},
	{name: "transform fails", opts: []generic.InformerOption{generic.WithTransform(func(obj any) (any, error) {
		if cm, ok := obj.(*corev1.ConfigMap); ok && drifted(cm) {
			return nil, errDrifted
		}
		return obj, nil
	})}},
}

// TestKnownObjectsTurningBadStay is issue 45's "made-up deletes": a known
// object whose update does not convert or transform keeps its last good
// state in the cache, reaches no handler as deleted (not from the watch,
// not from a relist, with or without WatchList), is counted and named in
// Status.Stale, and the cache's resource version moves on to the update's,
// never back; a good update serves it again; a delete whose payload does
// not convert is still a delete, at the delete's resource version.
func TestKnownObjectsTurningBadStay(t *testing.T) {
	for _, server := range []struct {
		name     string
		listOnly bool
	}{{"WatchList", false}, {"list then watch", true}} {
		for _, way := range badWays {
			t.Run(server.name+", "+way.name, func(t *testing.T) {
				testKnownObjectsTurningBadStay(t, server.listOnly, way.convert, way.opts)
			})
		}
	}
}

func testKnownObjectsTurningBadStay(t *testing.T, listOnly bool, convert generic.Converter[*corev1.ConfigMap], opts []generic.InformerOption) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server := newShardServer(true, listOnly)
	server.create("cm", 2)
	var rejected atomic.Int32
	factory := newFactory(server.Source, convert, generic.WithErrorHandler(func(_ context.Context, err error) {
		var conversion *generic.ConversionError
		if errors.As(err, &conversion) {
			rejected.Add(1)
		}
	}))
	informer := acquire(factory, configMapsGVR, opts...)
	rec := newRecorder(func(cm *corev1.ConfigMap) string { return cm.Data["size"] })
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx)
	defer factory.Shutdown()
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	seen := &delivered{rec: rec}
	seen.until(t, "the initial adds", func(e []event) bool { return len(e) == 2 })

	good := func(size int) *corev1.ConfigMap {
		cm := get(t, server, "cm-0")
		cm.Data = map[string]string{"size": strconv.Itoa(size)}
		return cm
	}
	bad := func() *corev1.ConfigMap {
		cm := get(t, server, "cm-0")
		cm.Data = map[string]string{"bad": "true"}
		return cm
	}
	server.update(good(1))
	seen.until(t, "cm-0 at size 1", seen.has(event{Verb: "MODIFIED", Key: "default/cm-0", Last: "1"}))

	// An update that does not convert: stale, not deleted.
	written := server.update(bad())
	badRV := written.ResourceVersion
	waitForStale(t, ctx, informer, []string{"default/cm-0"}, badRV)
	checkCached(t, informer, "cm-0", "1")
	waitForCacheRV(t, ctx, informer, badRV)
	if err := informer.WaitForWrite(ctx, written); !errors.Is(err, generic.ErrStale) {
		t.Errorf("WaitForWrite of the state that did not convert: %v, want an error wrapping ErrStale", err)
	}

	// A relist that lists the bad state keeps the last good one.
	lists := server.listCount()
	server.expireWatches()
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return server.listCount() > lists, nil
	}); err != nil {
		t.Fatalf("no relist: %v", err)
	}
	marker := server.update(get(t, server, "cm-1")).ResourceVersion // applied after the relist
	waitForCacheRV(t, ctx, informer, marker)
	checkCached(t, informer, "cm-0", "1")
	waitForStale(t, ctx, informer, []string{"default/cm-0"}, badRV)

	// A good update serves it again, as an update from its last good state.
	server.update(good(2))
	seen.until(t, "cm-0 at size 2", seen.has(event{Verb: "MODIFIED", Key: "default/cm-0", Last: "2"}))
	waitForStale(t, ctx, informer, nil, "")

	// A delete whose payload does not convert is still a delete, at the
	// delete's resource version.
	server.update(bad())
	server.delete("cm-0")
	deleteRV := strconv.Itoa(serverRV(server))
	seen.until(t, "cm-0 deleted", seen.has(event{Verb: "DELETED", Key: "default/cm-0", Last: "2"}))
	waitForCacheRV(t, ctx, informer, deleteRV)
	waitForStale(t, ctx, informer, nil, "")
	if _, err := informer.Lister().Namespace("default").Get("cm-0"); err == nil {
		t.Error("cm-0 is still cached after its delete")
	}
	var deletes []event
	for _, e := range seen.events {
		if e.Verb == "DELETED" {
			deletes = append(deletes, e)
		}
	}
	if diff := cmp.Diff([]event{{Verb: "DELETED", Key: "default/cm-0", Last: "2"}}, deletes); diff != "" {
		t.Errorf("deletes delivered (-want +got):\n%s", diff)
	}
	if rejected.Load() == 0 {
		t.Error("no bad state was reported")
	}
}

// TestStaleNeverOutlivesItsResource: once the server stops serving a
// resource (its CRD deleted, its objects with it), the informer has
// delivered a delete for each object; when the resource is served again (the
// CRD installed again) and a new object of an old name does not convert (its
// new CRD version drifted from the Go type), it is skipped, never taken for
// the deleted one: no handler gets the deleted object's last state back as
// an add, and the cache does not hold it.
func TestStaleNeverOutlivesItsResource(t *testing.T) {
	tests := []struct {
		name string
		// size is the new team-a/large's spec.size: an int64 converts,
		// a string does not.
		size any
		want []event
	}{
		{name: "the new object converts", size: int64(11), want: []event{
			{Verb: "ADDED", Key: "team-a/large", Last: "large=11"},
			{Verb: "ADDED", Key: "team-a/reborn", Last: "reborn=7"},
		}},
		{name: "the new object does not convert", size: "ten", want: []event{
			{Verb: "ADDED", Key: "team-a/reborn", Last: "reborn=7"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			factory, serving := newSwitchedWidgetFactory(t)
			informer := acquire(factory, widget.GVR)
			rec := newRecorder(widgetSize)
			if _, err := informer.AddEventHandler(rec); err != nil {
				t.Fatal(err)
			}
			startAndSync(t, factory)
			rec.next(t, 3)

			serving.stopServing()
			for _, obj := range load(t, "testdata/widgets.yaml") {
				if err := serving.client.Tracker().Delete(widget.GVR, obj.GetNamespace(), obj.GetName()); err != nil {
					t.Fatal(err)
				}
			}
			rec.next(t, 3) // the deletes
			waitForState(t, informer, generic.NotServed)

			serving.serve()
			for _, w := range []*unstructured.Unstructured{newWidget("team-a", "large", tc.size), newWidget("team-a", "reborn", int64(7))} {
				if _, err := serving.client.Resource(widget.GVR).Namespace("team-a").Create(context.Background(), w, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			// reborn, created last, is added last.
			if diff := cmp.Diff(tc.want, rec.next(t, len(tc.want))); diff != "" {
				t.Errorf("events once served again (-want +got):\n%s", diff)
			}
			var cached []string
			objs, err := informer.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range objs {
				cached = append(cached, widgetSize(w))
			}
			slices.Sort(cached)
			var want []string
			for _, e := range tc.want {
				want = append(want, e.Last)
			}
			if diff := cmp.Diff(want, cached); diff != "" {
				t.Errorf("cached (-want +got):\n%s", diff)
			}
			if stale := generic.StaleObjects(informer); len(stale) > 0 {
				t.Errorf("stale objects %+v, want none", stale)
			}
		})
	}
}

// TestWaitForWriteOfAStateThatDidNotConvert: a WaitForWrite of a state
// that did not convert, called once the ingest has taken a later state of
// the object (a good one, or its delete) but while the cache lags behind
// (here a slow index function makes it take about a millisecond to index
// each new object), returns nil (the cache comes to hold the later state) or
// an error wrapping ErrStale: never an error saying that the object is
// not of the informer's resource.
func TestWaitForWriteOfAStateThatDidNotConvert(t *testing.T) {
	tests := []struct {
		name string
		// then is what follows the state that does not convert, once
		// the cache is far behind.
		then func(server *shardServer)
	}{
		{name: "a good state follows", then: func(server *shardServer) {
			cm := get(t, server, "cm-0")
			cm.Data = map[string]string{"size": "2"}
			server.update(cm)
		}},
		{name: "its delete follows", then: func(server *shardServer) { server.delete("cm-0") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			server := newShardServer(true, true)
			server.create("cm", 2)
			factory := newFactory(server.Source, refuseDrifted)
			slow := cache.Indexers{"slow": func(any) ([]string, error) {
				for start := time.Now(); time.Since(start) < time.Millisecond; {
				}
				return nil, nil
			}}
			informer := acquire(factory, configMapsGVR, generic.WithIndexers(slow))
			factory.Start(ctx)
			defer factory.Shutdown()
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatal(err)
			}
			bad := get(t, server, "cm-0")
			bad.Data = map[string]string{"bad": "true"}
			written := server.update(bad)
			server.create("other", 500) // 500 objects to index: the cache falls behind
			tc.then(server)
			// The ingest has taken what followed: cm-0 is no longer stale.
			waitForStale(t, ctx, informer, nil, "")
			if err := informer.WaitForWrite(ctx, written); err != nil && !errors.Is(err, generic.ErrStale) {
				t.Errorf("WaitForWrite of the state that did not convert: %v; want nil or an error wrapping ErrStale", err)
			}
		})
	}
}

// delivered keeps every event a recorder got.
type delivered struct {
	rec    *recorder[*corev1.ConfigMap]
	events []event
}

// until reads events until done holds of all read so far.
func (l *delivered) until(t *testing.T, what string, done func([]event) bool) {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	for !done(l.events) {
		select {
		case e := <-l.rec.events:
			l.events = append(l.events, e)
		case <-ctx.Done():
			t.Fatalf("%s: not among the events before the deadline: %+v", what, l.events)
		}
	}
}

// has is a condition of until: want is among the events.
func (l *delivered) has(want event) func([]event) bool {
	return func(events []event) bool { return slices.Contains(events, want) }
}

// get returns a copy of the server's ConfigMap default/name.
func get(t *testing.T, server *shardServer, name string) *corev1.ConfigMap {
	t.Helper()
	server.mu.Lock()
	defer server.mu.Unlock()
	cm, ok := server.objects["default/"+name]
	if !ok {
		t.Fatalf("the server has no default/%s", name)
	}
	return cm.DeepCopy()
}

func serverRV(server *shardServer) int {
	server.mu.Lock()
	defer server.mu.Unlock()
	return server.rv
}

// waitForStale waits until the informer's Status names exactly keys as
// stale, the first of them at resourceVersion rv.
func waitForStale(t *testing.T, ctx context.Context, informer generic.Informer[*corev1.ConfigMap], keys []string, rv string) {
	t.Helper()
	var got []string
	var status generic.Status
	var stale []generic.StaleObject
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		status = informer.Status()
		stale = generic.StaleObjects(informer)
		got = nil
		for _, o := range stale {
			got = append(got, o.Key)
		}
		return cmp.Equal(keys, got) && status.Stale == len(keys) && (len(keys) == 0 || stale[0].ResourceVersion == rv && stale[0].Err != nil), nil
	})
	if err != nil {
		t.Fatalf("Status.Stale %d, StaleObjects %+v; want %v at resourceVersion %s", status.Stale, stale, keys, rv)
	}
}

// checkCached checks that the cache holds ConfigMap default/name at size.
func checkCached(t *testing.T, informer generic.Informer[*corev1.ConfigMap], name, size string) {
	t.Helper()
	cm, err := informer.Lister().Namespace("default").Get(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got := cm.Data["size"]; got != size {
		t.Errorf("%s is cached at size %q, want its last good size %q", name, got, size)
	}
}

// waitForCacheRV waits until the cache (its indexer) is at resource
// version rv, and checks that the reflector is too: neither went back.
func waitForCacheRV(t *testing.T, ctx context.Context, informer generic.Informer[*corev1.ConfigMap], rv string) {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := informer.WaitForResourceVersion(wait, rv); err != nil {
		t.Fatalf("the cache did not reach resourceVersion %s: %v", rv, err)
	}
	if got := informer.Informer().GetIndexer().LastStoreSyncResourceVersion(); got != rv {
		t.Errorf("the cache is at resourceVersion %s, want %s", got, rv)
	}
	if got := informer.Informer().LastSyncResourceVersion(); got != rv {
		t.Errorf("the reflector is at resourceVersion %s, want %s", got, rv)
	}
}

var _ cache.TypedResourceEventHandler[*corev1.ConfigMap] = (*recorder[*corev1.ConfigMap])(nil)
