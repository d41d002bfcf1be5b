package generic_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// TestCompactStoreDeliveryLatency: the delivery latency histogram gets an
// observation per watch event and handler, with the compact store as
// without it.
func TestCompactStoreDeliveryLatency(t *testing.T) {
	defer generic.TimeEveryEvent()()
	got := map[string]int{}
	for _, c := range []struct {
		name string
		opts []generic.InformerOption
	}{
		{"default", nil},
		{"compact(100)", []generic.InformerOption{generic.WithCompactStore(100)}},
		{"compact(0)", []generic.InformerOption{generic.WithCompactStore(0)}},
	} {
		server := newShardServer(true, true)
		provider := &recordingProvider{}
		informer := newInformer[*corev1.ConfigMap](server.Source(configMapsGVR, "", nil), configMapsGVR, nil,
			append(c.opts, generic.WithMetricsProvider(provider))...)
		lines := make(chan string, 100)
		if _, err := informer.Informer().AddEventHandler(eventLog(lines)); err != nil {
			t.Fatal(err)
		}
		stop := runSynced(t, informer)
		for i := range 3 {
			server.apply(watch.Added, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprint("cm-", i), UID: server.newUID()}})
		}
		waitForLines(t, lines, "add default/cm-0", "add default/cm-1", "add default/cm-2")
		got[c.name] = provider.only(t).snapshot().Latencies
		stop()
	}
	want := map[string]int{"default": 3, "compact(100)": 3, "compact(0)": 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delivery latency observations (-want +got):\n%s", diff)
	}
}

// compactState is an informer's view of the objects: from its handlers
// (key → rv, built from adds, updates and deletes) and its reads.
type compactState struct {
	mu      sync.Mutex
	handler map[string]string
}

func (s *compactState) set(key, rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rv == "" {
		delete(s.handler, key)
		return
	}
	s.handler[key] = rv
}

func (s *compactState) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.handler)
}

// TestCompactStoreBurst runs informers with the default and compact
// stores over one server through a burst of creates, updates and deletes,
// with a watch expiry in the middle, a resync period and concurrent
// readers, and requires them to end in the same state.
func TestCompactStoreBurst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	server := newShardServer(true, false)
	server.createIn("default", "a", 20)
	type run struct {
		name  string
		h     generic.Handle[*corev1.ConfigMap]
		state *compactState
	}
	var runs []run
	for _, c := range []struct {
		name string
		opts []generic.InformerOption
	}{
		{"default", nil},
		{"compact(0)", []generic.InformerOption{generic.WithCompactStore(0)}},
		{"compact(3)", []generic.InformerOption{generic.WithCompactStore(3)}},
	} {
		opts := append([]generic.InformerOption{generic.WithResyncPeriod(50 * time.Millisecond)}, c.opts...)
		factory := newFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(opts)...)
		t.Cleanup(factory.Shutdown)
		h, err := factory.Acquire(configMapsGVR)
		if err != nil {
			t.Fatal(err)
		}
		state := &compactState{handler: map[string]string{}}
		_, err = h.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*corev1.ConfigMap]{
			AddFunc: func(cm *corev1.ConfigMap) { state.set(cm.Namespace+"/"+cm.Name, cm.ResourceVersion) },
			UpdateFunc: func(old, cm *corev1.ConfigMap) {
				if old.Name != cm.Name {
					t.Errorf("%s: update of %s to %s", c.name, old.Name, cm.Name)
				}
				state.set(cm.Namespace+"/"+cm.Name, cm.ResourceVersion)
			},
			DeleteFunc: func(d cache.DeletedObject[*corev1.ConfigMap]) {
				if d.OptionalObj == nil {
					t.Errorf("%s: delete without its object: %+v", c.name, d.FinalStateUnknown)
					return
				}
				state.set(d.OptionalObj.Namespace+"/"+d.OptionalObj.Name, "")
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.AddIndexers(cache.TypedIndexers[*corev1.ConfigMap]{"v": func(cm *corev1.ConfigMap) ([]string, error) {
			return []string{cm.Data["v"]}, nil
		}}); err != nil {
			t.Fatal(err)
		}
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{c.name, h, state})
	}
	// Readers.
	readCtx, stopReading := context.WithCancel(ctx)
	var readers sync.WaitGroup
	for _, r := range runs {
		readers.Go(func() {
			for readCtx.Err() == nil {
				cms, _ := r.h.Lister().List(labels.Everything())
				for _, cm := range cms {
					_ = cm.Data["v"]
				}
				_, _ = r.h.Lister().ByIndex("v", "3")
				_, _ = r.h.Lister().Namespace("default").Get("a-3")
				for _, obj := range r.h.Informer().GetIndexer().List() {
					if _, ok := obj.(*corev1.ConfigMap); !ok {
						t.Errorf("%s: GetIndexer().List() holds a %T", r.name, obj)
					}
				}
			}
		})
	}
	for i := range 300 {
		name := fmt.Sprintf("a-%d", i%25)
		server.mu.Lock()
		cm := server.objects["default/"+name]
		server.mu.Unlock()
		switch {
		case cm == nil:
			server.apply(watch.Added, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: server.newUID()}, Data: map[string]string{"v": fmt.Sprint(i % 5)}})
		case i%7 == 0:
			server.delete(name)
		default:
			cm = cm.DeepCopy()
			cm.Data = map[string]string{"v": fmt.Sprint(i % 5)}
			server.update(cm)
		}
		if i == 150 {
			server.expireWatches()
		}
	}
	want := map[string]string{}
	server.mu.Lock()
	for key, cm := range server.objects {
		want[key] = cm.ResourceVersion
	}
	server.mu.Unlock()
	got := func() map[string]map[string]string {
		all := map[string]map[string]string{}
		for _, r := range runs {
			all[r.name+" handler"] = r.state.snapshot()
			cms, err := r.h.Lister().List(labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]string{}
			for _, cm := range cms {
				listed[cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
			}
			all[r.name+" lister"] = listed
		}
		return all
	}
	wantAll := map[string]map[string]string{}
	for _, r := range runs {
		wantAll[r.name+" handler"], wantAll[r.name+" lister"] = want, want
	}
	var diff string
	_ = wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		diff = cmp.Diff(wantAll, got())
		return diff == "", nil
	})
	stopReading()
	readers.Wait()
	if diff != "" {
		t.Errorf("state (-server +informer):\n%s", diff)
	}
}

// TestCompactStoreBurstTurningBad is TestBurstOfObjectsTurningBad for
// the metadata instantiation with and without a compact store.
func TestCompactStoreBurstTurningBad(t *testing.T) {
	kind := metadataInstantiation
	got := map[string]map[string][]event{}
	for _, c := range []struct {
		name string
		opts []generic.InformerOption
	}{
		{"default", nil},
		{"compact(0)", []generic.InformerOption{generic.WithCompactStore(0)}},
		{"compact(5)", []generic.InformerOption{generic.WithCompactStore(5)}},
	} {
		lw := newBurstListerWatcher(&metainternalversion.List{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, 2*burstObjects)
		informer := newInformer(lw, widget.GVR, kind.convert, append(c.opts, generic.WithErrorHandler(func(context.Context, error) {}))...)
		rec := newRecorder(kind.size)
		if _, err := informer.AddEventHandler(rec); err != nil {
			t.Fatal(err)
		}
		stop := runSynced(t, informer)
		for i := range burstObjects {
			name := fmt.Sprintf("w-%03d", i)
			lw.watcher.Add(kind.good("burst", name, i+1))
			if i%2 == 0 {
				lw.watcher.Modify(kind.bad("burst", name))
			} else {
				lw.watcher.Delete(kind.bad("burst", name))
			}
		}
		events := map[string][]event{}
		for _, e := range rec.next(t, burstObjects+burstObjects/2) {
			events[e.Key] = append(events[e.Key], e)
		}
		cached, _ := informer.Lister().List(labels.Everything())
		events["cached"] = nil
		for _, m := range cached {
			events["cached"] = append(events["cached"], event{Key: m.Name})
		}
		slices.SortFunc(events["cached"], func(a, b event) int { return strings.Compare(a.Key, b.Key) })
		got[c.name] = events
		stop()
	}
	if diff := cmp.Diff(got["default"], got["compact(0)"]); diff != "" {
		t.Errorf("compact(0) (-default +compact):\n%s", diff)
	}
	if diff := cmp.Diff(got["default"], got["compact(5)"]); diff != "" {
		t.Errorf("compact(5) (-default +compact):\n%s", diff)
	}
}

// TestCompactStoreReshard reshards a replica with the default store and
// one with a compact store, with churn while it runs, and requires the
// same caches and handler events.
func TestCompactStoreReshard(t *testing.T) {
	for _, c := range serverKinds {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := testContext(t)
			defer cancel()
			server := newShardServer(c.honours, c.listOnly)
			server.create("cm", 60)
			from, to := generic.Shard{Index: 0, Count: 2}, generic.Shard{Index: 1, Count: 3}
			plain := startReplica(t, ctx, server, generic.WithShard(from.Index, from.Count))
			compact := startReplica(t, ctx, server, generic.WithShard(from.Index, from.Count), generic.WithCompactStore(2))
			for _, r := range []*replica{plain, compact} {
				if err := r.factory.Reshard(ctx, to); err != nil {
					t.Fatal(err)
				}
			}
			// Objects of the new shard updated out of it (a new UID is
			// not possible: delete and recreate).
			for i := range 10 {
				server.delete(fmt.Sprintf("cm-%d-0", i))
			}
			server.apply(watch.Added, inShardOf(t, server, "marker", to))
			for _, r := range []*replica{plain, compact} {
				if missed := r.waitFor(ctx, "ADDED", []string{"default/marker"}); len(missed) > 0 {
					t.Fatalf("no marker")
				}
			}
			got := map[string]any{"keys": compact.keys(), "events": sortEvents(compact.handled())}
			want := map[string]any{"keys": plain.keys(), "events": sortEvents(plain.handled())}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-default +compact):\n%s", diff)
			}
		})
	}
}

// TestCompactStoreLateIndexersAndEmptyMaps adds indexers after the sync
// and reads an object with empty maps before and after it leaves the
// decoded objects, default store against compact ones.
func TestCompactStoreLateIndexersAndEmptyMaps(t *testing.T) {
	ctx, cancel := testContext(t)
	defer cancel()
	server := newShardServer(true, false)
	server.apply(watch.Added, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "empty", UID: server.newUID(), Labels: map[string]string{}}, Data: map[string]string{}})
	server.createIn("other", "cm", 5)
	reads := func(opts ...generic.InformerOption) map[string]any {
		factory := newFactory[*corev1.ConfigMap](server.Source, nil, asFactoryOptions(opts)...)
		defer factory.Shutdown()
		h := acquire(factory, configMapsGVR)
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			t.Fatal(err)
		}
		got := map[string]any{}
		first, err := h.Lister().Namespace("default").Get("empty")
		got["first Get"], got["first Get err"] = first, fmt.Sprint(err)
		if err := h.AddIndexers(cache.TypedIndexers[*corev1.ConfigMap]{"name": func(cm *corev1.ConfigMap) ([]string, error) { return []string{cm.Name}, nil }}); err != nil {
			t.Fatal(err)
		}
		if err := h.Informer().AddIndexers(cache.Indexers{"ns": cache.MetaNamespaceIndexFunc}); err != nil {
			t.Fatal(err)
		}
		byName, err := h.Lister().ByIndex("name", "cm-1")
		got["ByIndex name=cm-1"], got["ByIndex err"] = byName, fmt.Sprint(err)
		keys, err := h.Informer().GetIndexer().IndexKeys("ns", "other")
		got["IndexKeys ns=other"], got["IndexKeys err"] = len(keys), fmt.Sprint(err)
		objs, err := h.Informer().GetIndexer().Index("ns", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other"}})
		got["Index ns"], got["Index err"] = len(objs), fmt.Sprint(err)
		// Read the others, so that "empty" leaves a small decoded cache.
		_, _ = h.Lister().List(labels.Everything())
		again, err := h.Lister().Namespace("default").Get("empty")
		got["second Get"], got["second Get err"] = again, fmt.Sprint(err)
		return got
	}
	want := reads()
	for _, opts := range [][]generic.InformerOption{{generic.WithCompactStore(1)}, {generic.WithCompactStore(100)}} {
		// An empty map may read back as nil, once the object is no longer
		// kept decoded (WithCompactStore's doc): equal, as protobuf sees it.
		if diff := cmp.Diff(want, reads(opts...), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%v (-default +compact):\n%s", opts, diff)
		}
	}
}
