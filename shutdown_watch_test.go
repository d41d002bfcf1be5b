package generic_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// TestShutdownReportsACallbackItWaitsOn: a StateHandler or ErrorHandler
// call that Shutdown waits on, as one that called Shutdown itself, is
// reported to the ErrorHandler (ErrShutdownWaitsOnCallback, naming the
// informer), so that such a Shutdown does not hang in silence; Shutdown
// returns once the callback has. Such a call used to deadlock with no word.
//
// The callback here waits for Shutdown on a goroutine of its own, which is
// to Shutdown what a call from the callback is (it waits on the callback,
// which waits for it), so that the test can end the wait once the report
// came: a direct call would not return, and leak.
func TestShutdownReportsACallbackItWaitsOn(t *testing.T) {
	tests := []struct {
		name string
		// fromErrorHandler: the ErrorHandler waits for Shutdown, when it
		// is told of a malformed Widget; else the StateHandler, when it is
		// told the informer synced.
		fromErrorHandler bool
	}{
		{name: "from a StateHandler"},
		{name: "from an ErrorHandler", fromErrorHandler: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/widgets.yaml")
			reported1 := make(chan struct{}, 1)
			var factory *generic.Factory[*widget.Widget]
			var once sync.Once
			var callbackErr error
			callbackDone := make(chan struct{})
			waitForShutdownInCallback := func() {
				once.Do(func() {
					defer close(callbackDone)
					shutDown := make(chan struct{})
					go func() { factory.Shutdown(); close(shutDown) }()
					select {
					case <-reported1:
					case <-shutDown:
						callbackErr = errors.New("Shutdown returned while a callback it waits for ran")
					case <-time.After(boundedWait):
						callbackErr = errors.New("Shutdown waited on the callback, and nothing was reported")
					}
				})
			}
			var reportedMu sync.Mutex
			var reported []string
			errorHandler := func(ctx context.Context, err error) {
				if errors.Is(err, generic.ErrShutdownWaitsOnCallback) {
					reportedMu.Lock()
					reported = append(reported, err.Error())
					reportedMu.Unlock()
					select {
					case reported1 <- struct{}{}:
					default:
					}
					return
				}
				if tc.fromErrorHandler {
					waitForShutdownInCallback()
				}
			}
			stateHandler := func(status generic.Status) {
				if !tc.fromErrorHandler && status.State == generic.Synced {
					waitForShutdownInCallback()
				}
			}
			factory = newFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget](),
				generic.WithErrorHandler(errorHandler), generic.WithStateHandler(stateHandler))
			generic.SetShutdownReportAfter(factory.Registry, 20*time.Millisecond)
			acquire(factory, widget.GVR)
			startAndSync(t, factory)
			if tc.fromErrorHandler {
				malformed := load(t, "testdata/malformed/widget-wrong-type.yaml")[0]
				if _, err := client.Resource(widget.GVR).Namespace(malformed.GetNamespace()).Create(t.Context(), malformed, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-callbackDone:
			case <-time.After(boundedWait):
				t.Fatal("the callback was not called")
			}
			factory.Shutdown() // returns: the callback has
			if callbackErr != nil {
				t.Fatal(callbackErr)
			}
			// Each Shutdown reports once; the test's own may have met the
			// callback on its way out, and reported it too.
			reportedMu.Lock()
			defer reportedMu.Unlock()
			var unnamed []string
			for _, report := range reported {
				if !strings.Contains(report, widget.GVR.String()) {
					unnamed = append(unnamed, report)
				}
			}
			if diff := cmp.Diff([]string(nil), unnamed); len(reported) == 0 || diff != "" {
				t.Errorf("%d reports; those that do not name the informer %s (-want +got):\n%s", len(reported), widget.GVR, diff)
			}
		})
	}
}
