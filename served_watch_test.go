package generic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// servedWatchRun is one run of a fakeServedWatch.
type servedWatchRun struct {
	ctx     context.Context
	changed func()
}

// fakeServedWatch is a ServedWatch that hands each run to the test and
// returns when its context ends.
type fakeServedWatch struct {
	started          chan servedWatchRun
	runs, returnedTo atomic.Int32
}

func (w *fakeServedWatch) run(ctx context.Context, changed func()) {
	w.runs.Add(1)
	defer w.returnedTo.Add(1)
	select {
	case w.started <- servedWatchRun{ctx: ctx, changed: changed}:
	default:
	}
	<-ctx.Done()
}

// TestServedWatchWhileNotServed: an informer of a CRD installed after it
// started synced only when its probe backoff (1 s doubling to 30 s) next
// came round, up to 30 s after the CRD was served. With WithServedWatch,
// the Registry runs the watch while an informer is NotServed, and each
// change it reports makes the informer ask at once: here the probes are an
// hour apart, so the informer syncs by the change alone. The watch stops
// once no informer is NotServed, never runs while every resource is
// served, and has returned by the end of Shutdown.
func TestServedWatchWhileNotServed(t *testing.T) {
	tests := []struct {
		name string
		// notServed: the resource is not served at first; servedLater:
		// it is served, and the watch reports a change, before Shutdown.
		notServed, servedLater bool
		wantRuns               int32
	}{
		{name: "served later: the watch runs, its change syncs the informer, then it stops", notServed: true, servedLater: true, wantRuns: 1},
		{name: "every resource served: the watch never runs", wantRuns: 0},
		{name: "still not served at Shutdown: Shutdown stops the watch", notServed: true, wantRuns: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/widgets.yaml")
			var notServed atomic.Bool
			notServed.Store(tc.notServed)
			client.PrependReactor("list", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
				if notServed.Load() {
					return true, nil, apierrors.NewNotFound(widget.GVR.GroupResource(), "")
				}
				return false, nil, nil
			})
			watch := &fakeServedWatch{started: make(chan servedWatchRun, 1)}
			factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget](), generic.WithServedWatch(watch.run))
			generic.SetNotServedProbes(factory.Registry, time.Hour)
			informer := acquire(factory, widget.GVR)
			ctx, cancel := testContext(t)
			defer cancel()
			factory.Start(ctx)

			if !tc.notServed {
				waitForState(t, informer, generic.Synced)
			} else {
				waitForState(t, informer, generic.NotServed)
				var run servedWatchRun
				select {
				case run = <-watch.started:
				case <-ctx.Done():
					t.Fatal("the ServedWatch did not run while the informer was NotServed")
				}
				if tc.servedLater {
					notServed.Store(false)
					run.changed()
					waitForState(t, informer, generic.Synced)
					select {
					case <-run.ctx.Done():
					case <-ctx.Done():
						t.Fatal("the ServedWatch still runs once no informer is NotServed")
					}
				}
			}
			factory.Shutdown()
			if diff := cmp.Diff([]int32{tc.wantRuns, tc.wantRuns}, []int32{watch.runs.Load(), watch.returnedTo.Load()}); diff != "" {
				t.Errorf("runs of the ServedWatch, and returns by the end of Shutdown (-want +got):\n%s", diff)
			}
		})
	}
}
