package listwatch

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// laterResource is a server on which a resource is served from some moment
// on (a CRD installed later): lists answer 404 until serve, then one
// ConfigMap.
type laterResource struct {
	mu      sync.Mutex
	serving bool
	// notFound counts the lists answered 404; answered is signalled at
	// each.
	notFound int
	answered chan struct{}
	// whileAnswering, if not nil, is called once, inside the first list
	// answered 404, before the answer: what happens while a request is
	// under way.
	whileAnswering func()
}

func newLaterResource() *laterResource {
	return &laterResource{answered: make(chan struct{}, 100)}
}

func (r *laterResource) serve() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.serving = true
}

func (r *laterResource) stopServing() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.serving = false
}

func (r *laterResource) list(context.Context, metav1.ListOptions) (runtime.Object, error) {
	r.mu.Lock()
	serving, during := r.serving, r.whileAnswering
	r.whileAnswering = nil
	r.mu.Unlock()
	if serving {
		return &corev1.ConfigMapList{
			ListMeta: metav1.ListMeta{ResourceVersion: "7"},
			Items:    []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "later", ResourceVersion: "7"}}},
		}, nil
	}
	if during != nil {
		during()
	}
	r.mu.Lock()
	r.notFound++
	r.mu.Unlock()
	r.answered <- struct{}{}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "things"}, "")
}

func (r *laterResource) watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return watch.NewEmptyWatch(), nil
}

// servedChanges is Hooks.ServedChanged of a test: change closes the
// channel and replaces it.
type servedChanges struct {
	mu      sync.Mutex
	changed chan struct{}
}

func newServedChanges() *servedChanges { return &servedChanges{changed: make(chan struct{})} }

func (s *servedChanges) current() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *servedChanges) change() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
}

// TestServedChangedProbesAtOnce: a resource not served (a CRD not installed
// yet, or deleted) is probed with a backoff that grows to 30 s, and the
// reflector, handed a 404 before the first list, retried at its own
// backoff, which grows to 30-60 s: an informer synced up to a minute after
// its CRD was installed. Told that the resources served changed
// (Hooks.ServedChanged), the guard must ask at once: here the probes'
// backoff is an hour, so only the change can make it ask. A held list
// returns the objects (the reflector never sees the 404), a parked watch
// ends with 410 Gone so that the reflector relists, and a change while the
// request answered 404 was under way counts too.
func TestServedChangedProbesAtOnce(t *testing.T) {
	tests := []struct {
		name string
		// listedBefore: the resource was listed, then not served (a CRD
		// deleted and installed again): the watch parks.
		listedBefore bool
		// changeWhileAnswering: the change happens inside the request
		// answered 404, before its answer arrives.
		changeWhileAnswering bool
	}{
		{name: "never listed: the held list lists once the resources served changed"},
		{name: "never listed: a change while the 404 was under way", changeWhileAnswering: true},
		{name: "listed before: the parked watch ends once the resources served changed", listedBefore: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server := newLaterResource()
			changes := newServedChanges()
			chain := New(&cache.ListWatch{ListWithContextFunc: server.list, WatchFuncWithContext: server.watch}, Config[*corev1.ConfigMap]{
				GVR:             schema.GroupVersionResource{Resource: "things"},
				Convert:         identity[*corev1.ConfigMap],
				UnexpectedType:  errUnexpectedType,
				NotServedProbes: wait.Backoff{Duration: time.Hour, Factor: 2, Steps: math.MaxInt32, Cap: time.Hour},
			}, Hooks{
				Reject:        func(context.Context, string, error) {},
				Served:        &served{},
				Meter:         noMeter{},
				Selection:     everything,
				ServedChanged: changes.current,
			})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer chain.Wait()
			defer cancel()
			lw := cache.ToListerWatcherWithContext(chain.ListerWatcher())
			if tc.changeWhileAnswering {
				server.whileAnswering = func() {
					server.serve()
					changes.change()
				}
			}

			if tc.listedBefore {
				server.serve()
				if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
					t.Fatal(err)
				}
				server.stopServing()
				if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
					t.Fatalf("the list of a resource no longer served: %v, want the empty list", err)
				}
				w, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "7"})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Stop()
				server.serve()
				changes.change()
				select {
				case e := <-w.ResultChan():
					if diff := cmp.Diff(watch.Error, e.Type); diff != "" {
						t.Errorf("event of the parked watch (-want +got):\n%s", diff)
					}
				case <-ctx.Done():
					t.Fatal("the parked watch did not end after the resources served changed")
				}
				return
			}

			type result struct {
				list runtime.Object
				err  error
			}
			done := make(chan result, 1)
			go func() {
				list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
				done <- result{list, err}
			}()
			<-server.answered
			if !tc.changeWhileAnswering {
				server.serve()
				changes.change()
			}
			got := <-done
			if got.err != nil {
				t.Fatalf("the list: %v, want it held until the resource is served", got.err)
			}
			items, err := metaOfList(got.list)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("7", items.GetResourceVersion()); diff != "" {
				t.Errorf("resourceVersion of the list (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(1, server.notFound); diff != "" {
				t.Errorf("lists answered 404 (-want +got):\n%s", diff)
			}
		})
	}
}
