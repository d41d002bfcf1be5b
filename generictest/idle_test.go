package generictest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
)

// neverIdle is an Idler always busy.
type neverIdle struct{}

func (neverIdle) Idle() bool { return false }

// runController runs a controller named "idle" of the ConfigMaps of fake
// with reconcile until tb's cleanups, retrying after 1 ms (10 ms at most).
func runController(tb testing.TB, fake *generictest.Fake, reconcile controller.Reconciler) *controller.Controller {
	c, err := controller.New("idle", controller.For(generictest.NewInformer[*corev1.ConfigMap](fake)), reconcile,
		controller.WithRateLimiter(workqueue.NewTypedItemExponentialFailureRateLimiter[cache.ObjectName](time.Millisecond, 10*time.Millisecond)),
		controller.WithReconcileErrorHandler(func(context.Context, error) {}))
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	tb.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return c
}

// TestWaitIdleErrorNamesKeyAndCause: WaitIdle's failure names each key the
// controller has still to do, where the key is and why: it used to say
// only that "a key keeps failing or being requeued".
func TestWaitIdleErrorNamesKeyAndCause(t *testing.T) {
	tests := []struct {
		name string
		// use waits, with the Fake's timeout.
		use func(tb testing.TB, timeout time.Duration)
		// wantFatal are parts of the failure's message, the first one
		// naming the wait that fails; %[1]v in them is the bound.
		wantFatal []string
	}{{
		name: "a reconcile that always fails",
		use: func(tb testing.TB, timeout time.Duration) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			c := runController(tb, fake, func(context.Context, cache.ObjectName) (controller.Result, error) {
				return controller.Result{}, errors.New("the settings are broken")
			})
			fake.WaitIdle(c)
		},
		wantFatal: []string{"generictest: the controller was not idle within %[1]v: controller ", ": team-a/settings: ", ": its last reconcile failed: the settings are broken"},
	}, {
		name: "a reconcile that never returns",
		use: func(tb testing.TB, timeout time.Duration) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			c := runController(tb, fake, func(ctx context.Context, _ cache.ObjectName) (controller.Result, error) {
				<-ctx.Done() // the controller stops at the test's end
				return controller.Result{}, nil
			})
			fake.WaitIdle(c)
		},
		wantFatal: []string{"generictest: the controller was not idle within %[1]v: controller ", ": team-a/settings: in its Reconciler for "},
	}, {
		name: "a reconcile that always asks for Requeue",
		use: func(tb testing.TB, timeout time.Duration) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout), generictest.Objects(settings()))
			c := runController(tb, fake, func(context.Context, cache.ObjectName) (controller.Result, error) {
				return controller.Result{Requeue: true}, nil //nolint:staticcheck // SA1019: the deprecated field still works
			})
			fake.WaitIdle(c)
		},
		wantFatal: []string{"generictest: the controller was not idle within %[1]v: controller ", ": team-a/settings: ", ": its last reconcile returned Result.Requeue"},
	}, {
		name: "a controller never run",
		use: func(tb testing.TB, timeout time.Duration) {
			fake := generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout))
			c, err := controller.New("idle", controller.For(generictest.NewInformer[*corev1.ConfigMap](fake)),
				func(context.Context, cache.ObjectName) (controller.Result, error) { return controller.Result{}, nil })
			if err != nil {
				tb.Fatal(err)
			}
			fake.WaitIdle(c)
		},
		wantFatal: []string{"generictest: the controller was not idle within %[1]v: controller idle: controller idle is not running (Run was not called)"},
	}, {
		name: "an Idler never idle",
		use: func(tb testing.TB, timeout time.Duration) {
			generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout)).WaitIdle(neverIdle{})
		},
		wantFatal: []string{"generictest: the Idler generictest_test.neverIdle was not idle within %[1]v: generictest_test.neverIdle.Idle() is false"},
	}, {
		name: "neither a controller nor an Idler",
		use: func(tb testing.TB, timeout time.Duration) {
			generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout)).WaitIdle("quota")
		},
		wantFatal: []string{"generictest: WaitIdle of string: want a *controller.Controller or an Idler"},
	}, {
		name: "nil",
		use: func(tb testing.TB, timeout time.Duration) {
			generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout)).WaitIdle(nil)
		},
		wantFatal: []string{"generictest: WaitIdle of <nil>: want a *controller.Controller or an Idler"},
	}, {
		name: "a nil *controller.Controller",
		use: func(tb testing.TB, timeout time.Duration) {
			var c *controller.Controller
			generictest.New(tb, scheme.Scheme, generictest.Timeout(timeout)).WaitIdle(c)
		},
		wantFatal: []string{"generictest: WaitIdle of a nil *controller.Controller"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for timeout := firstTimeout; ; timeout *= 2 {
				tb := &boundedTB{TB: t}
				tb.run(func() { tc.use(tb, timeout) })
				tb.runCleanups()

				msg := tb.message()
				if retryWithLongerBound(t, msg, tc.wantFatal, timeout) {
					continue
				}
				return
			}
		})
	}
}
