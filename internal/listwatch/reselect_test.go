package listwatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// switchable is a selection the test changes: every object, then half of
// the hash space (by UID) from the first change on.
type switchable struct {
	mu         sync.Mutex
	selector   sharding.Selector
	generation uint64
	changed    chan struct{}
}

func (s *switchable) selection() (sharding.Selector, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.selector, s.generation, s.changed
}

func (s *switchable) set(selector sharding.Selector) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.selector = selector
	s.generation++
	close(s.changed)
	s.changed = make(chan struct{})
}

// lowHalf selects the UIDs whose hash is in the lower half.
var lowHalf = sharding.NewSelector(sharding.ShardRangeRequirement{Key: "object.metadata.uid", Start: "0x0000000000000000", End: "0x8000000000000000"})

// server is a ListerWatcher whose lists return its objects as they are now
// (or fail), and whose watches the test feeds; it records the options of
// each watch.
type server struct {
	mu       sync.Mutex
	objects  []*corev1.ConfigMap
	rv       string
	listErr  error
	watches  []metav1.ListOptions
	watchers []*watch.FakeWatcher
}

func (s *server) lw() cache.ListerWatcher {
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.listErr != nil {
				return nil, s.listErr
			}
			list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: s.rv}}
			for _, cm := range s.objects {
				list.Items = append(list.Items, *cm.DeepCopy())
			}
			return list, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			w := watch.NewFakeWithChanSize(10, false)
			s.watches = append(s.watches, o)
			s.watchers = append(s.watchers, w)
			return w, nil
		},
	}
}

// cm is ConfigMap name at resourceVersion rv, with a UID whose hash is in
// the lower half of the hash space (low) or not.
func cm(name, rv string, low bool) *corev1.ConfigMap {
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	// FNV-1a folds the last bytes in at the bottom: vary the first.
	for i := range 1000 {
		obj.UID = types.UID(fmt.Sprintf("%d-%s", i, name))
		if in, _ := lowHalf.Matches(obj); in == low {
			return obj
		}
	}
	panic("no UID found in the half asked for")
}

// got is an event as the test compares it.
type got struct {
	Type watch.EventType
	Name string
	RV   string
}

func gotOf(e watch.Event) got {
	if e.Type == watch.Error {
		return got{Type: e.Type, Name: string(apierrors.FromObject(e.Object).(apierrors.APIStatus).Status().Reason)}
	}
	m := e.Object.(metav1.Object)
	return got{Type: e.Type, Name: m.GetName(), RV: m.GetResourceVersion()}
}

// TestReselect: when the selection changes during a watch, the watch lists
// the new selection and hands on what differs from what it delivered (an
// add, an update for a new resourceVersion, a delete carrying the last
// state), then a bookmark at the list's resourceVersion, and watches the
// new selection from there; a list that fails ends the watch with a 410
// Gone instead, so that the reflector relists.
func TestReselect(t *testing.T) {
	keptLow, leftHigh, changedLow := cm("kept", "1", true), cm("left", "2", false), cm("changed", "3", true)
	tests := []struct {
		name       string
		after      []*corev1.ConfigMap
		listErr    error
		selector   sharding.Selector
		want       []got
		wantWatch  *metav1.ListOptions
		wantListed string
	}{
		{
			name:     "narrowed: the objects outside leave, a changed one is updated, a new one added",
			after:    []*corev1.ConfigMap{keptLow, leftHigh, cm("changed", "5", true), cm("new", "6", true), cm("newHigh", "7", false)},
			selector: lowHalf,
			want: []got{
				{watch.Modified, "changed", "5"}, {watch.Added, "new", "6"}, {watch.Deleted, "left", "2"},
				{watch.Bookmark, "", "9"},
			},
			wantWatch:  &metav1.ListOptions{ResourceVersion: "9", ShardSelector: lowHalf.String()},
			wantListed: "9",
		},
		{
			name:       "an object deleted meanwhile leaves with its last state",
			after:      []*corev1.ConfigMap{leftHigh, changedLow},
			selector:   nil,
			want:       []got{{watch.Deleted, "kept", "1"}, {watch.Bookmark, "", "9"}},
			wantWatch:  &metav1.ListOptions{ResourceVersion: "9"},
			wantListed: "9",
		},
		{
			name:     "the list fails: 410 Gone, the reflector relists",
			listErr:  errors.New("boom"),
			selector: lowHalf,
			want:     []got{{watch.Error, string(metav1.StatusReasonExpired), ""}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv := &server{objects: []*corev1.ConfigMap{keptLow, leftHigh, changedLow}, rv: "4"}
			chain, sel := reselectableChain(srv)
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
			srv.objects, srv.rv, srv.listErr = tt.after, "9", tt.listErr
			srv.mu.Unlock()
			sel.set(tt.selector)

			events := receive(ctx, t, w, len(tt.want))
			if diff := cmp.Diff(sortedGot(tt.want), sortedGot(events)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if tt.wantWatch == nil {
				if len(srv.watches) != 1 {
					t.Errorf("%d watches, want the first alone", len(srv.watches))
				}
				return
			}
			if len(srv.watches) != 2 {
				t.Fatalf("%d watches, want 2", len(srv.watches))
			}
			if diff := cmp.Diff(*tt.wantWatch, srv.watches[1], cmp.FilterPath(func(p cmp.Path) bool {
				f := p.Last().String()
				return f != ".ResourceVersion" && f != ".ShardSelector"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("the watch of the new selection (-want +got):\n%s", diff)
			}
			if !srv.watchers[0].IsStopped() {
				t.Error("the watch of the old selection was not stopped")
			}
			// The bookmark's commit records the list once the bookmark is
			// in the watch's buffer, which may be a moment after the
			// reader took it: wait for it, at most until ctx ends.
			last, _, next := chain.LastListed()
			for last.ResourceVersion != tt.wantListed {
				select {
				case <-next:
				case <-ctx.Done():
				}
				if ctx.Err() != nil {
					break
				}
				last, _, next = chain.LastListed()
			}
			if diff := cmp.Diff(tt.wantListed, last.ResourceVersion); diff != "" {
				t.Errorf("LastListed's resourceVersion (-want +got):\n%s", diff)
			}
		})
	}
}

// sortedGot orders the events before the bookmark by name: the adds,
// updates and deletes of a reselect come in no set order among
// themselves.
func sortedGot(events []got) []got {
	out := append([]got(nil), events...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[i].Type != watch.Bookmark && out[j].Type != watch.Bookmark && out[j].Name < out[i].Name {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestWatchAfterAReshardStepMoves: a reshard step between the reflector's
// list and its watch does not make it relist (client-go's relist backoff
// would pace the step): the watch continues the list at the list's
// selection and moves to the new one at once.
func TestWatchAfterAReshardStepMoves(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kept, left := cm("kept", "1", true), cm("left", "2", false)
	srv := &server{objects: []*corev1.ConfigMap{kept, left}, rv: "4"}
	chain, sel := reselectableChain(srv)
	lw := cache.ToListerWatcherWithContext(chain.ListerWatcher())
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	sel.set(lowHalf) // between the list and the watch
	w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "4", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	events := receive(ctx, t, w, 2)
	if diff := cmp.Diff([]got{{watch.Deleted, "left", "2"}, {watch.Bookmark, "", "4"}}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var selectors []string
	for _, o := range srv.watches {
		selectors = append(selectors, o.ShardSelector)
	}
	if diff := cmp.Diff([]string{"", lowHalf.String()}, selectors); diff != "" {
		t.Errorf("the watches' selectors: the list's, then the new one (-want +got):\n%s", diff)
	}
}

// reselectableChain is a chain of ConfigMaps over srv whose selection the
// returned switchable changes.
func reselectableChain(srv *server) (*Chain[*corev1.ConfigMap], *switchable) {
	sel := &switchable{changed: make(chan struct{})}
	chain := New(srv.lw(), Config[*corev1.ConfigMap]{
		GVR: schema.GroupVersionResource{Resource: "configmaps"}, Convert: identity[*corev1.ConfigMap], UnexpectedType: errUnexpectedType,
		NewT: func() *corev1.ConfigMap { return &corev1.ConfigMap{} },
	}, Hooks{Reject: func(context.Context, string, error) {}, Served: &served{}, Meter: noMeter{}, Selection: sel.selection, ServedChanged: unchanged})
	return chain, sel
}

// receive returns the next n events of w, and fails t if w ends or ctx
// does first.
func receive(ctx context.Context, t *testing.T, w watch.Interface, n int) []got {
	t.Helper()
	var events []got
	for len(events) < n {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("got %v, then the watch ended", events)
			}
			events = append(events, gotOf(e))
		case <-ctx.Done():
			t.Fatalf("got %v, then nothing", events)
		}
	}
	return events
}

// TestReselectEventsInResourceVersionOrder: the events of a reshard step
// come oldest resourceVersion first (the deletes, carrying the last states
// delivered, then the adds and updates), then the bookmark: the cache's
// resourceVersion is that of the last event it applied, and a cache at N
// must hold every object the step brings at N or before, or a
// read-your-writes wait for N would end while one is missing.
func TestReselectEventsInResourceVersionOrder(t *testing.T) {
	objects := func(prefix string, n, firstRV int, low bool) []*corev1.ConfigMap {
		var objs []*corev1.ConfigMap
		for i := range n {
			objs = append(objs, cm(fmt.Sprint(prefix, i), strconv.Itoa(firstRV+i), low))
		}
		return objs
	}
	tests := []struct {
		name          string
		before, after []*corev1.ConfigMap
	}{
		{name: "objects join", before: objects("kept", 5, 1, true), after: slices.Concat(objects("kept", 5, 1, true), objects("joined", 20, 30, true))},
		{name: "objects leave and join", before: objects("left", 20, 1, false), after: objects("joined", 20, 30, true)},
		{name: "objects change", before: objects("changed", 20, 1, true), after: objects("changed", 20, 30, true)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv := &server{objects: tc.before, rv: "25"}
			chain, sel := reselectableChain(srv)
			lw := cache.ToListerWatcherWithContext(chain.ListerWatcher())
			if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "25", AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			srv.mu.Lock()
			srv.objects, srv.rv = tc.after, "60"
			srv.mu.Unlock()
			sel.set(lowHalf)
			var events []got
			for {
				e := receive(ctx, t, w, 1)[0]
				events = append(events, e)
				if e.Type == watch.Bookmark {
					break
				}
			}
			ordered := slices.IsSortedFunc(events, func(a, b got) int {
				ra, _ := strconv.Atoi(a.RV)
				rb, _ := strconv.Atoi(b.RV)
				return ra - rb
			})
			if !ordered {
				t.Errorf("the step's events are not in resourceVersion order: %v", events)
			}
		})
	}
}
