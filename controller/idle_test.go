package controller_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/controller"
	"github.com/generic-informers/generic/generictest"
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
	idle := controller.KeysReport(c).Idle
	close(release)
	if idle {
		t.Error("the controller is idle while a reconcile runs")
	}
}

// elapsed is the "for 1.5ms" of a busy key's state.
var elapsed = regexp.MustCompile(` for [0-9.]+[a-zµ]+$`)

// busyKeys is what the report says of each key, without how long each
// has been where it is.
func busyKeys(r controller.IdleReport) []controller.BusyKey {
	var busy []controller.BusyKey
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
		want   []controller.BusyKey
	}{{
		name:   "in its Reconciler",
		first:  func() (controller.Result, error) { return controller.Result{}, nil },
		atCall: 1,
		want:   []controller.BusyKey{{Key: "team-a/large", State: "in its Reconciler"}},
	}, {
		name:   "a reconcile that failed",
		first:  func() (controller.Result, error) { return controller.Result{}, errors.New("widget is broken") },
		atCall: 2,
		want:   []controller.BusyKey{{Key: "team-a/large", State: "in its Reconciler", Cause: "its last reconcile failed: widget is broken"}},
	}, {
		name:   "a reconcile that panicked: the first line of the error",
		first:  func() (controller.Result, error) { panic("kaboom") },
		atCall: 2,
		want: []controller.BusyKey{{Key: "team-a/large", State: "in its Reconciler",
			Cause: "its last reconcile failed: controller idle: reconcile of team-a/large panicked: kaboom (…)"}},
	}, {
		name: "Requeue",
		first: func() (controller.Result, error) {
			return controller.Result{Requeue: true}, nil
		},
		atCall: 2,
		want:   []controller.BusyKey{{Key: "team-a/large", State: "in its Reconciler", Cause: "its last reconcile returned Result.Requeue"}},
	}, {
		name:   "RequeueAfter",
		first:  func() (controller.Result, error) { return controller.Result{RequeueAfter: time.Millisecond}, nil },
		atCall: 2,
		want:   []controller.BusyKey{{Key: "team-a/large", State: "in its Reconciler", Cause: "requeued after 1ms (Result.RequeueAfter)"}},
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
				got      controller.IdleReport
				reported = make(chan struct{})
			)
			report := func() {
				once.Do(func() {
					got = controller.KeysReport(c)
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
		got      controller.IdleReport
		first    cache.ObjectName
		reported = make(chan struct{})
	)
	c, err := controller.New("idle", controller.For(widgets), func(_ context.Context, key cache.ObjectName) (controller.Result, error) {
		once.Do(func() {
			first, got = key, controller.KeysReport(c)
			close(reported)
		})
		return controller.Result{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	<-reported
	var want []controller.BusyKey
	for _, key := range []string{"team-a/large", "team-a/small", "team-b/small"} {
		state := "queued"
		if key == first.String() {
			state = "in its Reconciler"
		}
		want = append(want, controller.BusyKey{Key: key, State: state})
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
		got      controller.IdleReport
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
			got, delay = controller.KeysReport(c), err.Error()
			close(reported)
		})
	}))
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	<-reported
	want := []controller.BusyKey{{Key: "team-a/primary", State: "waiting for its caches to catch up with its writes",
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
	var got []controller.IdleReport
	got = append(got, controller.KeysReport(c))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = c.Run(ctx) // returns at once: ctx ended before the handlers synced, or right after
	got = append(got, controller.KeysReport(c))
	want := []controller.IdleReport{
		{NotRunning: "controller idle is not running (Run was not called)"},
		{NotRunning: "controller idle has stopped (its Run returned or is returning)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
}

// TestWaitIdleWaitsForItsOwnWritesEchoes is issue 46's public wait: a
// reconcile that bumps a counter in its primary and returns, so that each
// step is reconciled only once its write's echo (the watch event) has
// reached the controller's handler. The controller's own WaitIdle (not
// generictest's, which also knows every write made through the Fake)
// returns only once every step is done: between a write and its echo the
// queue is empty, and a wait that read the queue alone returned after the
// first step.
func TestWaitIdleWaitsForItsOwnWritesEchoes(t *testing.T) {
	const steps = 20
	tests := []struct {
		name string
		// workers is the controller's; the echo races the worker's return.
		workers int
	}{{name: "one worker", workers: 1}, {name: "four workers", workers: 4}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			cms := generictest.NewInformer[*corev1.ConfigMap](fake)
			client, err := typed.ClientFor[*corev1.ConfigMap](fake.Factory())
			if err != nil {
				t.Fatal(err)
			}
			var n calls
			reconcile := func(ctx context.Context, key cache.ObjectName) (controller.Result, error) {
				n.add(key)
				cached, err := cms.Lister().Namespace(key.Namespace).Get(key.Name)
				if err != nil {
					return controller.Result{}, err
				}
				step, _ := strconv.Atoi(cached.Data["step"])
				if step >= steps {
					return controller.Result{}, nil
				}
				next := cached.DeepCopy()
				next.Data = map[string]string{"step": strconv.Itoa(step + 1)}
				_, err = client.Update(ctx, next, metav1.UpdateOptions{})
				return controller.Result{}, err
			}
			c, err := controller.New("steps", controller.For(cms), reconcile, controller.WithWorkers(tc.workers), fastRetries())
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			fake.Create(configMap("team-a", "stepper")) // its handlers have it when Create returns
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := c.WaitIdle(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := cms.Lister().Namespace("team-a").Get("stepper")
			if err != nil {
				t.Fatal(err)
			}
			type outcome struct {
				Step       string
				Reconciles int
			}
			// One reconcile per step, and the last one that finds it done.
			if diff := cmp.Diff(outcome{Step: strconv.Itoa(steps), Reconciles: steps + 1}, outcome{got.Data["step"], len(n.take())}); diff != "" {
				t.Errorf("when WaitIdle returned (-want +got):\n%s", diff)
			}
			if r := c.Idle(); !r.Idle {
				t.Errorf("Idle after WaitIdle: %s", r)
			}
		})
	}
}

// TestWaitIdleReportsWhatIsBusy: a WaitIdle whose context ends first is a
// *NotIdleError naming the busy key, where it is and why, and wrapping the
// context's error.
func TestWaitIdleReportsWhatIsBusy(t *testing.T) {
	fake := newFake(t)
	cms := generictest.NewInformer[*corev1.ConfigMap](fake)
	c, err := controller.New("broken", controller.For(cms), func(context.Context, cache.ObjectName) (controller.Result, error) {
		return controller.Result{}, errors.New("the settings are broken")
	}, fastRetries())
	if err != nil {
		t.Fatal(err)
	}
	run(t, c)
	fake.Create(configMap("team-a", "settings"))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = c.WaitIdle(ctx)
	notIdle, ok := errors.AsType[*controller.NotIdleError](err)
	if !ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitIdle: %v, want a *NotIdleError wrapping context.DeadlineExceeded", err)
	}
	var keys []string
	for _, b := range notIdle.Report.Busy {
		keys = append(keys, b.Key+" "+b.Cause)
	}
	if diff := cmp.Diff([]string{"team-a/settings its last reconcile failed: the settings are broken"}, keys); diff != "" {
		t.Errorf("busy keys (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "controller broken: team-a/settings: ") {
		t.Errorf("the error does not name the controller and the key: %v", err)
	}
}
