package listwatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

var errDrifted = errors.New("drifted from the Go type")

// refuseDrifted converts a ConfigMap whose data does not say it is bad.
func refuseDrifted(obj runtime.Object) (*corev1.ConfigMap, error) {
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return nil, errUnexpectedType
	}
	if cm.Data["bad"] == "true" {
		return nil, errDrifted
	}
	return cm, nil
}

// drifted is c at resourceVersion rv in a state that does not convert.
func drifted(c *corev1.ConfigMap, rv string) *corev1.ConfigMap {
	c = c.DeepCopy()
	c.ResourceVersion, c.Data = rv, map[string]string{"bad": "true"}
	return c
}

// TestRelistKeepsOnlyWhatMayStand: a relist (a list, or a WatchList
// stream's initial events) that lists a known object in a state that does
// not convert keeps its last good state only if that state may stand for
// it: not once the informer's selection has left it out (a reshard step
// that the watch could not make, so that the reflector relists under the
// new selection from a server that ignores the ShardSelector), and not if
// the listed object is another one of its name (another UID: the server
// deleted the one held and made another).
func TestRelistKeepsOnlyWhatMayStand(t *testing.T) {
	low, high := cm("low", "1", true), cm("high", "2", false)
	again := drifted(high, "6")
	again.UID += "-again"
	tests := []struct {
		name string
		// narrow: the selection becomes the lower half of the hash space
		// between the first list and the relist.
		narrow bool
		relist []*corev1.ConfigMap
		want   []got
	}{
		{
			name:   "the same object, in the selection: kept at its last good state",
			relist: []*corev1.ConfigMap{low, drifted(high, "5")},
			want:   []got{{watch.Added, "high", "2"}, {watch.Added, "low", "1"}},
		},
		{
			name:   "outside the narrowed selection: left out",
			narrow: true,
			relist: []*corev1.ConfigMap{low, drifted(high, "5")},
			want:   []got{{watch.Added, "low", "1"}},
		},
		{
			name:   "another object of its name: left out",
			relist: []*corev1.ConfigMap{low, again},
			want:   []got{{watch.Added, "low", "1"}},
		},
	}
	for _, relist := range []struct {
		name string
		run  func(ctx context.Context, t *testing.T, lw cache.ListerWatcherWithContext, srv *server, objects []*corev1.ConfigMap) []got
	}{{"list", relistByList}, {"WatchList", relistByWatchList}} {
		for _, tc := range tests {
			t.Run(relist.name+"/"+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				srv := &server{objects: []*corev1.ConfigMap{low, high}, rv: "4"}
				sel := &switchable{changed: make(chan struct{})}
				chain := New(srv.lw(), Config[*corev1.ConfigMap]{
					GVR: schema.GroupVersionResource{Resource: "configmaps"}, Convert: refuseDrifted, UnexpectedType: errUnexpectedType,
					NewT: func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
				}, Hooks{Reject: func(context.Context, string, error) {}, Served: &served{}, Meter: noMeter{}, Selection: sel.selection, ServedChanged: unchanged})
				lw := cache.ToListerWatcherWithContext(chain.ListerWatcher())
				if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
					t.Fatal(err)
				}
				if tc.narrow {
					sel.set(lowHalf)
				}
				if diff := cmp.Diff(tc.want, sortedGot(relist.run(ctx, t, lw, srv, tc.relist))); diff != "" {
					t.Errorf("what the relist hands on (-want +got):\n%s", diff)
				}
				var wantStale []string
				for _, g := range tc.want {
					if g.Name == "high" {
						wantStale = append(wantStale, "high")
					}
				}
				checkStale(ctx, t, chain, wantStale)
			})
		}
	}
}

// relistByList relists with a list of objects.
func relistByList(ctx context.Context, t *testing.T, lw cache.ListerWatcherWithContext, srv *server, objects []*corev1.ConfigMap) []got {
	t.Helper()
	srv.mu.Lock()
	srv.objects, srv.rv = objects, "7"
	srv.mu.Unlock()
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	var handed []got
	for _, item := range items {
		handed = append(handed, gotOf(watch.Event{Type: watch.Added, Object: item}))
	}
	return handed
}

// relistByWatchList relists with a WatchList stream whose initial events
// are the objects.
func relistByWatchList(ctx context.Context, t *testing.T, lw cache.ListerWatcherWithContext, srv *server, objects []*corev1.ConfigMap) []got {
	t.Helper()
	initial := true
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{SendInitialEvents: &initial, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	srv.mu.Lock()
	fake := srv.watchers[len(srv.watchers)-1]
	srv.mu.Unlock()
	for _, obj := range objects {
		fake.Add(obj.DeepCopy())
	}
	fake.Action(watch.Bookmark, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: "7", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}})
	var handed []got
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("got %v, then the watch ended", handed)
			}
			if e.Type == watch.Bookmark {
				return handed
			}
			handed = append(handed, gotOf(e))
		case <-ctx.Done():
			t.Fatalf("got %v, then no bookmark", handed)
		}
	}
}

// TestWatchOfAStateThatDoesNotConvert: a watch event of a known object in
// a state that does not convert is handed on as a bookmark at its
// resourceVersion, the object kept at its last good state; but if the
// event is of another object of its name (another UID: the one held is
// gone), the one held is deleted, at the event's resourceVersion.
func TestWatchOfAStateThatDoesNotConvert(t *testing.T) {
	held := cm("held", "1", true)
	again := drifted(held, "6")
	again.UID += "-again"
	tests := []struct {
		name      string
		event     *corev1.ConfigMap
		want      got
		wantStale []string
	}{
		{name: "the same object: kept, stale", event: drifted(held, "6"), want: got{watch.Bookmark, "", "6"}, wantStale: []string{"held"}},
		{name: "another object of its name: the one held is deleted", event: again, want: got{watch.Deleted, "held", "6"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv := &server{objects: []*corev1.ConfigMap{held}, rv: "4"}
			chain := New(srv.lw(), Config[*corev1.ConfigMap]{
				GVR: schema.GroupVersionResource{Resource: "configmaps"}, Convert: refuseDrifted, UnexpectedType: errUnexpectedType,
				NewT: func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
			}, Hooks{Reject: func(context.Context, string, error) {}, Served: &served{}, Meter: noMeter{}, Selection: everything, ServedChanged: unchanged})
			lw := cache.ToListerWatcherWithContext(chain.ListerWatcher())
			if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "4", AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			srv.mu.Lock()
			fake := srv.watchers[0]
			srv.mu.Unlock()
			fake.Modify(tc.event)
			if diff := cmp.Diff([]got{tc.want}, receive(ctx, t, w, 1)); diff != "" {
				t.Errorf("what the watch hands on (-want +got):\n%s", diff)
			}
			checkStale(ctx, t, chain, tc.wantStale)
		})
	}
}

// checkStale checks that the chain names exactly the objects of names as
// stale, once it does or ctx ends: what an event handed on changes in the
// record may be committed a moment after the reader took it.
func checkStale(ctx context.Context, t *testing.T, chain *Chain[*corev1.ConfigMap], names []string) {
	t.Helper()
	var stale []string
	_ = wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
		stale = nil
		objs := chain.Stale()
		for _, st := range objs {
			stale = append(stale, st.Key.Name)
		}
		return cmp.Equal(names, stale), nil
	})
	if diff := cmp.Diff(names, stale); diff != "" {
		t.Errorf("stale objects (-want +got):\n%s", diff)
	}
}

// TestReselectKeepsStaleness: a reshard step that moves the watch (its
// list of the new selection, reselect.go) and lists a held object in a
// state that does not convert keeps its last good state, which the record
// holds already (no event), and marks it stale, as the watch would have:
// the watch of the new selection starts after that state and never
// delivers it.
func TestReselectKeepsStaleness(t *testing.T) {
	x := cm("x", "2", true)
	tests := []struct {
		name      string
		listed    *corev1.ConfigMap
		want      []got
		wantStale []string
	}{
		{name: "listed in a state that does not convert: stale", listed: drifted(x, "5"),
			want: []got{{watch.Bookmark, "", "9"}}, wantStale: []string{"x"}},
		{name: "listed in a good state: updated", listed: cm("x", "5", true),
			want: []got{{watch.Modified, "x", "5"}, {watch.Bookmark, "", "9"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv := &server{objects: []*corev1.ConfigMap{x}, rv: "4"}
			sel := &switchable{changed: make(chan struct{})}
			chain := New(srv.lw(), Config[*corev1.ConfigMap]{
				GVR: schema.GroupVersionResource{Resource: "configmaps"}, Convert: refuseDrifted, UnexpectedType: errUnexpectedType,
				NewT: func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
			}, Hooks{Reject: func(context.Context, string, error) {}, Served: &served{}, Meter: noMeter{}, Selection: sel.selection, ServedChanged: unchanged})
			lw := cache.ToListerWatcherWithContext(chain.ListerWatcher())
			if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "4", AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			srv.mu.Lock()
			srv.objects, srv.rv = []*corev1.ConfigMap{tc.listed}, "9"
			srv.mu.Unlock()
			sel.set(lowHalf) // x stays in the selection
			if diff := cmp.Diff(tc.want, receive(ctx, t, w, len(tc.want))); diff != "" {
				t.Errorf("what the watch hands on (-want +got):\n%s", diff)
			}
			checkStale(ctx, t, chain, tc.wantStale)
		})
	}
}
