package generic_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// reportsOutcome is what an informer's callbacks got and what it counted.
type reportsOutcome struct {
	// Reports is how many calls the ErrorHandler got.
	Reports int64
	// DroppedErrors is Status().DroppedErrors, DroppedMetric the
	// MetricsProvider's counter.
	DroppedErrors, DroppedMetric int64
	// States are the States the StateHandler was told of, in order.
	States []generic.State
}

// TestErrorReportsAreBounded blocks the ErrorHandler on its first report,
// then floods the informer with objects that do not decode: at most 1,000
// reports wait for the handler, the others are dropped and counted in
// Status.DroppedErrors and the DroppedErrorsMetric, and the StateHandler
// still hears every change (Stopped, asked for while the reports wait).
// Before, every report waited, however many: memory grew with the flood
// for as long as the handler was blocked.
func TestErrorReportsAreBounded(t *testing.T) {
	const waitMax = 1000 // the documented bound
	tests := []struct {
		name  string
		flood int
		want  reportsOutcome
	}{
		{name: "below the bound", flood: 300, want: reportsOutcome{Reports: 1 + 300}},
		{name: "past the bound", flood: 1100, want: reportsOutcome{Reports: 1 + waitMax, DroppedErrors: 100, DroppedMetric: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.want.States = []generic.State{generic.Syncing, generic.Synced, generic.Stopped}
			list := &metainternalversion.List{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []runtime.Object{undecodable("flood", "first")}}
			lw := newBurstListerWatcher(list, tc.flood+1)
			entered, release := make(chan struct{}), make(chan struct{})
			var reports atomic.Int64
			var mu sync.Mutex
			var states []generic.State
			metrics := &recordingProvider{}
			informer := newInformer[*widget.Widget](lw, widget.GVR, nil,
				generic.WithErrorHandler(func(context.Context, error) {
					if reports.Add(1) == 1 {
						close(entered)
						<-release
					}
				}),
				generic.WithStateHandler(func(s generic.Status) {
					mu.Lock()
					defer mu.Unlock()
					states = append(states, s.State)
				}),
				generic.WithMetricsProvider(metrics))
			stop := runSynced(t, informer)
			select {
			case <-entered: // the first report is being made: it does not wait
			case <-testDone(t):
				stop()
				t.Fatal("the first report never reached the ErrorHandler")
			}
			for i := range tc.flood {
				lw.watcher.Add(undecodable("flood", fmt.Sprintf("w-%04d", i)))
			}
			lw.watcher.Add(typedRESTInstantiation.good("flood", "good", 1))
			// The ingest asks for each report as it skips the object, before
			// it hands on the next: once the good Widget is cached, every
			// report of the flood has been kept or dropped.
			waitUntil(t, "the good Widget is cached", func() bool {
				_, err := informer.Lister().Namespace("flood").Get("good")
				return err == nil
			})
			stopped := make(chan struct{})
			go func() { stop(); close(stopped) }()
			// Stopped is told while the reports wait: it must not be dropped.
			waitUntil(t, "the informer is Stopped", func() bool { return informer.Status().State == generic.Stopped })
			close(release)
			<-stopped // Run returns once every kept callback was made

			mu.Lock()
			got := reportsOutcome{
				Reports:       reports.Load(),
				DroppedErrors: informer.Status().DroppedErrors,
				DroppedMetric: metrics.only(t).snapshot().Counters["dropped-errors"],
				States:        states,
			}
			mu.Unlock()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("callbacks (-want +got):\n%s", diff)
			}
		})
	}
}
