package typed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// crdServer stands in for the server's CustomResourceDefinitions: lists
// answer listErrs in turn, then a list at resourceVersion 10; each watch
// is a FakeWatcher handed to the test.
type crdServer struct {
	mu       sync.Mutex
	listErrs []error
	lists    int
	// watchedFrom records the resourceVersion of each watch.
	watchedFrom []string
	watches     chan *watch.FakeWatcher
}

func (s *crdServer) list(context.Context, metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if len(s.listErrs) > 0 {
		err := s.listErrs[0]
		s.listErrs = s.listErrs[1:]
		return nil, err
	}
	return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}, nil
}

func (s *crdServer) watch(_ context.Context, options metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	s.watchedFrom = append(s.watchedFrom, options.ResourceVersion)
	s.mu.Unlock()
	w := watch.NewFake()
	s.watches <- w
	return w, nil
}

func crd(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// TestWatchCRDs: the Factory's ServedWatch calls changed once its watch of
// CustomResourceDefinitions is open (what changed before it) and at each
// CRD created or changed, not at a delete or a bookmark; it watches from
// the resourceVersion of a list, and watches again after a watch ends (410
// Gone included) or a list fails (RBAC), until its context ends.
func TestWatchCRDs(t *testing.T) {
	forbidden := apierrors.NewForbidden(crdResource.GroupResource(), "", errors.New("cannot list"))
	tests := []struct {
		name     string
		listErrs []error
		// events are sent on the first watch; end ends it (closed, or
		// with an error event) and the next one gets the rest.
		events      []watch.Event
		end         func(*watch.FakeWatcher)
		wantChanged int
		wantLists   int
		wantWatches []string
	}{
		{
			name: "created and changed CRDs, not deleted ones or bookmarks",
			events: []watch.Event{
				{Type: watch.Added, Object: crd("a")},
				{Type: watch.Deleted, Object: crd("b")},
				{Type: watch.Bookmark, Object: crd("")},
				{Type: watch.Modified, Object: crd("a")},
			},
			wantChanged: 3, wantLists: 1, wantWatches: []string{"10"},
		},
		{
			name:        "a list forbidden: retried",
			listErrs:    []error{forbidden},
			wantChanged: 1, wantLists: 2, wantWatches: []string{"10"},
		},
		{
			name:        "a watch that ends: watched again from a fresh list",
			end:         func(w *watch.FakeWatcher) { w.Stop() },
			wantChanged: 2, wantLists: 2, wantWatches: []string{"10", "10"},
		},
		{
			name: "410 Gone: watched again from a fresh list",
			end: func(w *watch.FakeWatcher) {
				w.Error(&apierrors.NewResourceExpired("too old").ErrStatus)
			},
			wantChanged: 2, wantLists: 2, wantWatches: []string{"10", "10"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := &crdServer{listErrs: tc.listErrs, watches: make(chan *watch.FakeWatcher, 2)}
			lw := &cache.ListWatch{ListWithContextFunc: server.list, WatchFuncWithContext: server.watch}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			changed := make(chan struct{}, 10)
			done := make(chan struct{})
			go func() {
				defer close(done)
				watchCRDs(ctx, cache.ToListerWatcherWithContext(lw), func() { changed <- struct{}{} })
			}()
			next := func() *watch.FakeWatcher {
				select {
				case w := <-server.watches:
					return w
				case <-ctx.Done():
					t.Fatal("no watch of CRDs")
					return nil
				}
			}
			w := next()
			for _, e := range tc.events {
				w.Action(e.Type, e.Object)
			}
			if tc.end != nil {
				tc.end(w)
				next()
			}
			for range tc.wantChanged {
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatal("changed was not called")
				}
			}
			cancel()
			<-done
			server.mu.Lock()
			defer server.mu.Unlock()
			type outcome struct {
				ExtraChanged int
				Lists        int
				Watches      []string
			}
			want := outcome{ExtraChanged: 0, Lists: tc.wantLists, Watches: tc.wantWatches}
			got := outcome{ExtraChanged: len(changed), Lists: server.lists, Watches: server.watchedFrom}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}
