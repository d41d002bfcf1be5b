package controller_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
	"github.com/generic-informers/generic/internal/idle"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/typed"
)

// TestIdleDuringRequeueAfter: a reconcile started by RequeueAfter is work:
// the controller is not idle while it runs.
func TestIdleDuringRequeueAfter(t *testing.T) {
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithFieldSelector("metadata.name=large"))
	inSecond, release := make(chan struct{}), make(chan struct{})
	var n calls
	c, err := controller.New("later", controller.For(widgets), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
		switch n.add(key) {
		case 1:
			return controller.Result{RequeueAfter: time.Millisecond}, nil
		case 2:
			close(inSecond)
			<-release
		}
		return controller.Result{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	<-inSecond
	idle := controller.IdleReport(c).Idle
	close(release)
	if idle {
		t.Error("the controller is idle while a reconcile runs")
	}
}

// elapsed is the "for 1.5ms" of a busy key's state.
var elapsed = regexp.MustCompile(` for [0-9.]+[a-zµ]+$`)

// busyKeys is what the report says of each key, without how long each
// has been where it is.
func busyKeys(r idle.Report) []idle.Busy {
	var busy []idle.Busy
	for _, b := range r.Busy {
		b.State = elapsed.ReplaceAllString(b.State, "")
		busy = append(busy, b)
	}
	return busy
}

// TestIdleReportNamesKeyAndCause: what the controller reports to
// generictest's WaitIdle names each key it has still to do, where the key
// is and why. The report is taken where it cannot change under the test:
// in a reconcile, or in the ErrorHandler, which the worker calls.
func TestIdleReportNamesKeyAndCause(t *testing.T) {
	tests := []struct {
		name string
		// first is what the first reconcile of team-a/large does.
		first func() (controller.Result, error)
		// atCall: the report is taken at the start of reconcile number
		// atCall, or before, when the ErrorHandler is told of an error.
		atCall int
		want   []idle.Busy
	}{{
		name:   "in its Reconciler",
		first:  func() (controller.Result, error) { return controller.Result{}, nil },
		atCall: 1,
		want:   []idle.Busy{{Key: "team-a/large", State: "in its Reconciler"}},
	}, {
		name:   "a reconcile that failed",
		first:  func() (controller.Result, error) { return controller.Result{}, errors.New("widget is broken") },
		atCall: 2,
		want:   []idle.Busy{{Key: "team-a/large", State: "in its Reconciler", Cause: "its last reconcile failed: widget is broken"}},
	}, {
		name:   "a reconcile that panicked: the first line of the error",
		first:  func() (controller.Result, error) { panic("kaboom") },
		atCall: 2,
		want: []idle.Busy{{Key: "team-a/large", State: "in its Reconciler",
			Cause: "its last reconcile failed: controller idle: reconcile of team-a/large panicked: kaboom (…)"}},
	}, {
		name: "Requeue",
		first: func() (controller.Result, error) {
			return controller.Result{Requeue: true}, nil
		},
		atCall: 2,
		want:   []idle.Busy{{Key: "team-a/large", State: "in its Reconciler", Cause: "its last reconcile returned Result.Requeue"}},
	}, {
		name:   "RequeueAfter",
		first:  func() (controller.Result, error) { return controller.Result{RequeueAfter: time.Millisecond}, nil },
		atCall: 2,
		want:   []idle.Busy{{Key: "team-a/large", State: "in its Reconciler", Cause: "requeued after 1ms (Result.RequeueAfter)"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			widgets := generictest.NewInformer[*widget.Widget](fake, generic.WithFieldSelector("metadata.name=large"))
			var (
				c        *controller.Controller
				n        calls
				once     sync.Once
				got      idle.Report
				reported = make(chan struct{})
			)
			report := func() {
				once.Do(func() {
					got = controller.IdleReport(c)
					close(reported)
				})
			}
			c, err := controller.New("idle", controller.For(widgets), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
				call := n.add(key)
				if call == tc.atCall {
					report()
				}
				if call == 1 {
					return tc.first()
				}
				return controller.Result{}, nil
			}, fastRetries(), controller.WithReconcileErrorHandler(func(context.Context, error) { report() }))
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			<-reported
			if diff := cmp.Diff(tc.want, busyKeys(got)); diff != "" {
				t.Errorf("busy keys (-want +got):\n%s", diff)
			}
			if got.Idle {
				t.Errorf("the report says idle: %s", got)
			}
		})
	}
}

// TestIdleReportNamesQueuedKeys: while the one worker reconciles a key,
// the others are queued.
func TestIdleReportNamesQueuedKeys(t *testing.T) {
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake)
	var (
		c        *controller.Controller
		once     sync.Once
		got      idle.Report
		first    cache.ObjectName
		reported = make(chan struct{})
	)
	c, err := controller.New("idle", controller.For(widgets), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
		once.Do(func() {
			first, got = key, controller.IdleReport(c)
			close(reported)
		})
		return controller.Result{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	<-reported
	var want []idle.Busy
	for _, key := range []string{"team-a/large", "team-a/small", "team-b/small"} {
		state := "queued"
		if key == first.String() {
			state = "in its Reconciler"
		}
		want = append(want, idle.Busy{Key: key, State: state})
	}
	if diff := cmp.Diff(want, busyKeys(got)); diff != "" {
		t.Errorf("busy keys (-want +got):\n%s", diff)
	}
}

// TestIdleReportNamesConsistencyDelay: a key delayed because its informer
// has not caught up with its own write is reported with the delay: the
// informer and the write.
func TestIdleReportNamesConsistencyDelay(t *testing.T) {
	fake := newFake(t, generictest.Objects(configMap("team-a", "primary")))
	lag := newLagging(t, fake) // holds every watch event: the write's never comes
	cms := lag.informer(t, configMapsGVR)
	client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
	if err != nil {
		t.Fatal(err)
	}
	var (
		c        *controller.Controller
		n        calls
		once     sync.Once
		got      idle.Report
		delay    string
		reported = make(chan struct{})
	)
	c, err = controller.New("lagging", controller.For(cms), func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
		if n.add(key) > 1 {
			return controller.Result{}, nil
		}
		if err := update(ctx, client, key.Namespace, key.Name, func(cm *corev1.ConfigMap) { cm.Data = map[string]string{"written": "yes"} }); err != nil {
			return controller.Result{}, err
		}
		return controller.Result{RequeueAfter: time.Millisecond}, nil
	}, fastRetries(), shortWait(), controller.WithReconcileErrorHandler(func(_ context.Context, err error) {
		if _, ok := errors.AsType[*controller.ConsistencyDelayError](err); !ok {
			t.Errorf("reported: %v", err)
			return
		}
		once.Do(func() {
			got, delay = controller.IdleReport(c), err.Error()
			close(reported)
		})
	}))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	<-reported
	want := []idle.Busy{{Key: "team-a/primary", State: "waiting for its caches to catch up with its writes",
		Cause: strings.TrimPrefix(delay, "controller lagging: key team-a/primary ")}}
	if diff := cmp.Diff(want, busyKeys(got)); diff != "" {
		t.Errorf("busy keys (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(want[0].Cause, "delayed: the cache of /v1, Resource=configmaps has not caught up with the write of team-a/primary at resource version ") {
		t.Errorf("the cause does not name the informer and the write: %s", want[0].Cause)
	}
}

// TestIdleReportNotRunning: a controller not running says so.
func TestIdleReportNotRunning(t *testing.T) {
	fake := newFake(t)
	widgets := generictest.NewInformer[*widget.Widget](fake)
	c, err := controller.New("idle", controller.For(widgets), func(context.Context, cache.ObjectName) (controller.Result, error) {
		return controller.Result{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []idle.Report
	got = append(got, controller.IdleReport(c))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = c.Run(ctx) // returns at once: ctx ended before the handlers synced, or right after
	got = append(got, controller.IdleReport(c))
	want := []idle.Report{
		{NotRunning: "controller idle is not running (Run was not called)"},
		{NotRunning: "controller idle has stopped (its Run returned or is returning)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}
