package generic_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// watchNotFoundListerWatcher lists the fixture Widgets and answers every
// watch, WatchList streams included, 404 Not Found: a server on which the
// resource lists but does not watch.
type watchNotFoundListerWatcher struct {
	list  runtime.Object
	lists atomic.Int32
}

// IsWatchListSemanticsUnSupported is false: the reflector tries WatchList
// first, as it does against a real API server.
func (lw *watchNotFoundListerWatcher) IsWatchListSemanticsUnSupported() bool { return false }

func (lw *watchNotFoundListerWatcher) List(metav1.ListOptions) (runtime.Object, error) {
	lw.lists.Add(1)
	return lw.list.DeepCopyObject(), nil
}

func (lw *watchNotFoundListerWatcher) Watch(metav1.ListOptions) (watch.Interface, error) {
	return nil, apierrors.NewNotFound(widget.GVR.GroupResource(), "")
}

// TestWatchNotFoundWhileListWorks is the defect "a watch that 404s while
// list works empties the cache while Status says Synced": the guard took
// the watch's 404 for the resource's and answered the relist with an empty
// stream. Only a list's 404 says a resource is not served: the objects stay,
// no delete is delivered, and the informer stays Synced.
func TestWatchNotFoundWhileListWorks(t *testing.T) {
	lw := &watchNotFoundListerWatcher{list: unstructuredList("5", load(t, "testdata/widgets.yaml")...)}
	informer := newInformer[*widget.Widget](lw, widget.GVR, generic.FromUnstructured[*widget.Widget]())
	rec := newRecorder(widgetSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	defer runSynced(t, informer)()
	rec.next(t, 3)
	waitUntil(t, "two relists after the watch's 404", func() bool { return lw.lists.Load() >= 3 })

	// A relist delivers updates of the objects it finds again; no delete.
	for pending := len(rec.events); pending > 0; pending-- {
		if e := <-rec.events; e.Verb == "DELETED" {
			t.Errorf("delete after the watch's 404: %+v", e)
		}
	}
	cached, err := informer.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team-a/large", "team-a/small", "team-b/small"}, keysOf(t, cached)); diff != "" {
		t.Errorf("cached (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(generic.Synced, informer.Status().State); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

// TestRecoveryBeforeFirstSync is the defect "state stuck": an informer
// that is NotServed (CRD not installed yet) or Forbidden (RBAC) before its
// first sync, and later syncs, used to keep reporting NotServed or
// Forbidden with the old error forever, and its StateHandler never heard
// Synced. Each change now reaches the StateHandler once, in order.
func TestRecoveryBeforeFirstSync(t *testing.T) {
	tests := []struct {
		name  string
		fail  error
		wantT []generic.State
	}{
		{
			name:  "not served, then served",
			fail:  apierrors.NewNotFound(widget.GVR.GroupResource(), ""),
			wantT: []generic.State{generic.Syncing, generic.NotServed, generic.Syncing, generic.Synced},
		},
		{
			name:  "forbidden, then allowed",
			fail:  apierrors.NewForbidden(widget.GVR.GroupResource(), "", errors.New("user cannot list")),
			wantT: []generic.State{generic.Syncing, generic.Forbidden, generic.Syncing, generic.Synced},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/widgets.yaml")
			var failing atomic.Bool
			failing.Store(true)
			client.PrependReactor("list", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
				if failing.Load() {
					return true, nil, tc.fail
				}
				return false, nil, nil
			})
			var states stateLog
			factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget](),
				generic.WithStateHandler(states.record))
			defer factory.Shutdown()
			informer := acquire(factory, widget.GVR)
			factory.Start(context.Background())
			failed := tc.wantT[1]
			waitUntil(t, "the state is "+failed.String(), func() bool { return informer.Status().State == failed })
			failing.Store(false)

			waitForState(t, informer, generic.Synced)
			if diff := cmp.Diff(tc.wantT, states.heard(t, len(tc.wantT))); diff != "" {
				t.Errorf("state changes (-want +got):\n%s", diff)
			}
			if err := informer.Status().LastError; err != nil {
				t.Errorf("LastError = %v after the sync, want nil", err)
			}
		})
	}
}
