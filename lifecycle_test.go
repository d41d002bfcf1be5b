package generic_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
)

// TestReleaseCountsHolders walks the holds on one GVR through Acquire and
// Release, with Start in between: each Handle releases exactly its own
// hold, once.
func TestReleaseCountsHolders(t *testing.T) {
	client := newDynamicClient(t, "testdata/widgets.yaml")
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()
	ctx, cancel := testContext(t)
	defer cancel()

	first := acquire(factory, widget.GVR)
	second := acquire(factory, widget.GVR)
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name        string
		do          func() bool
		want        bool
		wantStopped bool
	}{
		{name: "first of two holds", do: first.Release, want: false},
		{name: "the same hold again changes nothing", do: first.Release, want: false},
		{name: "last hold stops the informer", do: second.Release, want: true, wantStopped: true},
		{name: "once gone, a release changes nothing", do: second.Release, want: false, wantStopped: true},
	}
	for _, step := range steps {
		if diff := cmp.Diff(step.want, step.do()); diff != "" {
			t.Errorf("%s: Release (-want +got):\n%s", step.name, diff)
		}
		if step.wantStopped {
			// Release does not wait: the informer stops soon after.
			pollFor(t, step.name+": the informer is Stopped", func() bool { return first.Status().State == generic.Stopped })
		} else if diff := cmp.Diff(generic.Synced, first.Status().State); diff != "" {
			t.Errorf("%s: state (-want +got):\n%s", step.name, diff)
		}
	}
	if first.Informer() != second.Informer() {
		t.Error("two holds got two informers")
	}
	if _, ok := factory.Statuses()[widget.GVR]; ok {
		t.Error("a released informer is still listed by Statuses")
	}

	// After release, Acquire makes a fresh informer that runs at once
	// (Start came before) and WaitForCacheSync waits for.
	fresh := acquire(factory, widget.GVR)
	if fresh.Informer() == first.Informer() {
		t.Fatal("Acquire after the last Release returned the stopped informer")
	}
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Errorf("fresh informer did not sync: %v", err)
	}
	all, err := fresh.Lister().List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"team-a/large", "team-a/small", "team-b/small"}, keysOf(t, all)); diff != "" {
		t.Errorf("fresh informer's cache (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(generic.Synced, factory.Statuses()[widget.GVR].State); diff != "" {
		t.Errorf("fresh informer's state (-want +got):\n%s", diff)
	}
}

// TestAcquireNeverReturnsStopped: once the context given to Start ends,
// its informers stop; Acquire hands out a fresh one, not a stopped one.
func TestAcquireNeverReturnsStopped(t *testing.T) {
	client := newDynamicClient(t, "testdata/widgets.yaml")
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()
	startCtx, stop := context.WithCancel(context.Background())
	old := acquire(factory, widget.GVR)
	factory.Start(startCtx)
	ctx, cancel := testContext(t)
	defer cancel()
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Fatal(err)
	}
	stop()
	// What Acquire replaces is an informer whose State is Stopped, which
	// comes after client-go's IsStopped: that turns true when the shared
	// informer's controller returns, before its handlers are done and its
	// Run returns (the state table's "stopped").
	waitForState(t, old, generic.Stopped)
	stopped := old.Informer()
	if !stopped.IsStopped() {
		t.Error("the informer is Stopped but its shared informer is not")
	}
	fresh := acquire(factory, widget.GVR)
	if fresh.Informer() == stopped || fresh.Informer().IsStopped() {
		t.Fatal("Acquire returned a stopped informer")
	}
	factory.Start(ctx)
	if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
		t.Errorf("the fresh informer did not sync: %v", err)
	}
}

// TestAcquireReleaseLeavesNoGoroutine acquires, starts and releases the
// same GVR 100 times: the number of goroutines does not grow.
func TestAcquireReleaseLeavesNoGoroutine(t *testing.T) {
	client := newDynamicClient(t, "testdata/widgets.yaml")
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()
	ctx, cancel := testContext(t)
	defer cancel()
	baseline := goleak.IgnoreCurrent()
	for range 100 {
		handle := acquire(factory, widget.GVR)
		factory.Start(ctx)
		if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
			t.Fatal(err)
		}
		if !handle.Release() {
			t.Fatal("Release of the only holder returned false")
		}
		// Release does not wait for the informer's goroutines: they end
		// by themselves, soon after.
		waitForNoLibraryGoroutines(t, "after Release")
	}
	if err := goleak.Find(baseline); err != nil {
		t.Errorf("goroutines after 100 acquire/release cycles: %v", err)
	}
}

// servingSwitch makes client-go's fake dynamic client stop and start serving
// a resource: while off, every list and watch of it fails with 404 Not Found,
// as when its CRD is deleted, and the open watch ends. It counts the lists.
type servingSwitch struct {
	client  *dynamicfake.FakeDynamicClient
	off     atomic.Bool
	lists   atomic.Int32
	mu      sync.Mutex
	watches []watch.Interface
}

// newSwitchedWidgetFactory returns a Widget factory made with opts over a
// fake dynamic client seeded from testdata/widgets.yaml, the switch that
// stops and starts serving Widgets, and shuts the factory down at cleanup.
func newSwitchedWidgetFactory(t *testing.T, opts ...generic.InformerOption) (*generic.Factory[*widget.Widget], *servingSwitch) {
	client := newDynamicClient(t, "testdata/widgets.yaml")
	serving := newServingSwitch(client, widget.GVR)
	factory := newFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget](), asFactoryOptions(opts)...)
	t.Cleanup(factory.Shutdown)
	return factory, serving
}

func newServingSwitch(client *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource) *servingSwitch {
	s := &servingSwitch{client: client}
	notFound := apierrors.NewNotFound(gvr.GroupResource(), "")
	client.PrependReactor("list", gvr.Resource, func(clienttesting.Action) (bool, runtime.Object, error) {
		s.lists.Add(1)
		if s.off.Load() {
			return true, nil, notFound
		}
		return false, nil, nil
	})
	client.PrependWatchReactor(gvr.Resource, func(action clienttesting.Action) (bool, watch.Interface, error) {
		// Under mu, so that a watch is either refused or ended by
		// stopServing, never opened just after it and left open.
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.off.Load() {
			return true, nil, notFound
		}
		// With the watch's options, as the fake's own reactor: a watch
		// opened after its list is sent what was added since.
		var options metav1.ListOptions
		if watchAction, ok := action.(clienttesting.WatchActionImpl); ok {
			options = watchAction.ListOptions
		}
		w, err := client.Tracker().Watch(gvr, action.GetNamespace(), options)
		if err == nil {
			s.watches = append(s.watches, w)
		}
		return true, w, err
	})
	return s
}

// stopServing makes the resource 404 and ends the open watches.
func (s *servingSwitch) stopServing() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.off.Store(true)
	for _, w := range s.watches {
		w.Stop()
	}
	s.watches = nil
}

func (s *servingSwitch) serve() { s.off.Store(false) }

// TestResourceNoLongerServed: the fake client starts answering 404 for
// Widgets (as when their CRD is deleted) and drops their objects without
// events. The informer delivers a delete for each cached Widget, with its
// last state, reports NotServed, probes with backoff, and when Widgets are
// served again relists by itself and serves the new objects.
func TestResourceNoLongerServed(t *testing.T) {
	var states stateLog
	factory, serving := newSwitchedWidgetFactory(t, generic.WithStateHandler(states.record))
	informer := acquire(factory, widget.GVR)
	rec := newRecorder(widgetSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, factory)
	rec.next(t, 3)

	// The CRD goes, and its objects with it, with no delete event.
	serving.stopServing()
	for _, obj := range load(t, "testdata/widgets.yaml") {
		if err := serving.client.Tracker().Delete(widget.GVR, obj.GetNamespace(), obj.GetName()); err != nil {
			t.Fatal(err)
		}
	}
	want := []event{
		{Verb: "DELETED", Key: "team-a/large", Tombstone: true, Last: "large=10"},
		{Verb: "DELETED", Key: "team-a/small", Tombstone: true, Last: "small=1"},
		{Verb: "DELETED", Key: "team-b/small", Tombstone: true, Last: "small=2"},
	}
	if diff := cmp.Diff(want, sortEvents(rec.next(t, 3))); diff != "" {
		t.Errorf("deletes when not served (-want +got):\n%s", diff)
	}
	status := informer.Status()
	if diff := cmp.Diff(generic.NotServed, status.State); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if !apierrors.IsNotFound(status.LastError) {
		t.Errorf("last error %v, want a NotFound", status.LastError)
	}

	// While not served: a handful of probes, not a retry loop.
	before := serving.lists.Load()
	time.Sleep(4 * time.Second)
	if probes := serving.lists.Load() - before; probes > 3 {
		t.Errorf("%d lists in 4 s while not served, want at most 3 (backoff 1 s, 2 s, ...)", probes)
	}

	// Served again, with a new Widget: the informer relists by itself.
	serving.serve()
	if _, err := serving.client.Resource(widget.GVR).Namespace("team-a").Create(context.Background(), newWidget("team-a", "reborn", int64(7)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]event{{Verb: "ADDED", Key: "team-a/reborn", Last: "reborn=7"}}, rec.next(t, 1)); diff != "" {
		t.Errorf("events when served again (-want +got):\n%s", diff)
	}
	waitForState(t, informer, generic.Synced)
	wantStates := []generic.State{generic.Syncing, generic.Synced, generic.NotServed, generic.Synced}
	if diff := cmp.Diff(wantStates, states.heard(t, len(wantStates))); diff != "" {
		t.Errorf("state changes (-want +got):\n%s", diff)
	}
}

// TestStopWhenNotServed: with WithStopWhenNotServed the informer delivers
// the deletes and stops for good; Acquire then hands out a fresh one.
func TestStopWhenNotServed(t *testing.T) {
	factory, serving := newSwitchedWidgetFactory(t, generic.WithStopWhenNotServed())
	informer := acquire(factory, widget.GVR)
	rec := newRecorder(widgetSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, factory)
	rec.next(t, 3)
	serving.stopServing()
	rec.next(t, 3) // the deletes
	waitForState(t, informer, generic.Stopped)

	lists := serving.lists.Load()
	time.Sleep(2 * time.Second)
	if more := serving.lists.Load() - lists; more != 0 {
		t.Errorf("%d lists after stopping for good, want none", more)
	}
	serving.serve()
	stopped := informer.Informer()
	if fresh := acquire(factory, widget.GVR); fresh.Informer() == stopped {
		t.Error("Acquire returned the informer that stopped for good")
	}
}

// TestCallbacksMayCallTheFactory: a StateHandler that asks the factory for
// every Status, and an event handler that calls Acquire on its own
// resource (client-go style, at every use) while the informer stops for
// good, return: nothing holds the factory's lock while calling them, and
// Acquire does not wait for the informer it replaces.
func TestCallbacksMayCallTheFactory(t *testing.T) {
	var factory *generic.Factory[*widget.Widget]
	factory, serving := newSwitchedWidgetFactory(t, generic.WithStopWhenNotServed(),
		generic.WithStateHandler(func(generic.Status) { factory.Statuses() }))
	informer := acquire(factory, widget.GVR)
	_, err := informer.AddEventHandler(cache.TypedResourceEventHandlerFuncs[*widget.Widget]{
		DeleteFunc: func(cache.DeletedObject[*widget.Widget]) { acquire(factory, widget.GVR) },
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(widgetSize)
	if _, err := informer.AddEventHandler(rec); err != nil {
		t.Fatal(err)
	}
	startAndSync(t, factory)
	factory.Statuses()
	first := informer.Informer()
	rec.next(t, 3)
	serving.stopServing()
	rec.next(t, 3) // the deletes, each of which called Acquire
	// The Handle reads the informer that holds its hold now: once the
	// first is Stopped, a delete's Acquire may have replaced it already.
	waitUntil(t, "the informer is Stopped or replaced", func() bool {
		return informer.Informer() != first || informer.Status().State == generic.Stopped
	})
	if first.IsStopped() {
		t.Error("Acquire cancelled the informer it replaced while its deletes were being delivered")
	}
}

// TestRetiredInformerRunsUntil: an informer that stopped for good and was
// replaced by Acquire goes on running (making no requests) so that its
// handlers get every delete, until the next informer of its resource is
// replaced in turn, the last Release, or Shutdown.
func TestRetiredInformerRunsUntil(t *testing.T) {
	tests := []struct {
		name string
		// end does what should end the retired informer; fresh is the
		// Handle that replaced it (both Handles read the informer that
		// holds their holds now: the fresh one).
		end func(t *testing.T, factory *generic.Factory[*widget.Widget], serving *servingSwitch, retired, fresh generic.Handle[*widget.Widget])
	}{
		{name: "Shutdown", end: func(_ *testing.T, factory *generic.Factory[*widget.Widget], _ *servingSwitch, _, _ generic.Handle[*widget.Widget]) {
			factory.Shutdown()
		}},
		{name: "the last Release", end: func(t *testing.T, _ *generic.Factory[*widget.Widget], _ *servingSwitch, retired, fresh generic.Handle[*widget.Widget]) {
			released := []bool{retired.Release(), fresh.Release()}
			if diff := cmp.Diff([]bool{false, true}, released); diff != "" {
				t.Errorf("Release of two holds (-want +got):\n%s", diff)
			}
		}},
		{name: "the next retirement", end: func(t *testing.T, factory *generic.Factory[*widget.Widget], serving *servingSwitch, _, fresh generic.Handle[*widget.Widget]) {
			serving.serve()
			startAndSync(t, factory)
			serving.stopServing()
			waitForState(t, fresh, generic.Stopped)
			newlyRetired := fresh.Informer()
			if acquire(factory, widget.GVR).Informer() == newlyRetired {
				t.Error("Acquire returned the informer that stopped for good")
			}
			if newlyRetired.IsStopped() {
				t.Error("the newly retired informer was cancelled")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			factory, serving := newSwitchedWidgetFactory(t, generic.WithStopWhenNotServed())
			retired := acquire(factory, widget.GVR)
			gate := newDeleteGate()
			if _, err := retired.AddEventHandler(gate); err != nil {
				t.Fatal(err)
			}
			startAndSync(t, factory)
			serving.stopServing()
			<-gate.entered // the first delete is in the handler, two wait
			waitForState(t, retired, generic.Stopped)
			retiredShared := retired.Informer()
			fresh := acquire(factory, widget.GVR)
			// Proving that nothing cancels it takes a wait; cancelled, it
			// stops within milliseconds.
			cancelled := stopsWithin(retiredShared, 2*time.Second)
			close(gate.open)
			if cancelled {
				t.Fatal("Acquire cancelled the informer it replaced while it delivered its deletes")
			}
			if diff := cmp.Diff(3, gate.deletes(t, 3)); diff != "" {
				t.Errorf("deletes delivered (-want +got):\n%s", diff)
			}
			tt.end(t, factory, serving, retired, fresh)
			waitUntil(t, "the retired informer stopped", retiredShared.IsStopped)
		})
	}
}

// deleteGate is an event handler whose first OnDelete waits until open is
// closed, and which counts deletes.
type deleteGate struct {
	entered chan struct{}
	open    chan struct{}
	deleted chan struct{}
	once    sync.Once
}

func newDeleteGate() *deleteGate {
	return &deleteGate{entered: make(chan struct{}), open: make(chan struct{}), deleted: make(chan struct{}, 100)}
}

func (*deleteGate) OnAdd(*widget.Widget, bool)   {}
func (*deleteGate) OnUpdate(_, _ *widget.Widget) {}
func (g *deleteGate) OnDelete(cache.DeletedObject[*widget.Widget]) {
	g.once.Do(func() {
		close(g.entered)
		<-g.open
	})
	g.deleted <- struct{}{}
}

// deletes counts deletes until n have come or the test's deadline.
func (g *deleteGate) deletes(t *testing.T, n int) int {
	ctx, cancel := testContext(t)
	defer cancel()
	for got := 0; ; got++ {
		if got == n {
			return got
		}
		select {
		case <-g.deleted:
		case <-ctx.Done():
			return got
		}
	}
}

// stopsWithin reports whether informer stops within d.
func stopsWithin(informer cache.SharedIndexInformer, d time.Duration) bool {
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, d, true,
		func(context.Context) (bool, error) { return informer.IsStopped(), nil })
	return err == nil
}

// waitUntil polls done until it holds or the test's deadline.
func waitUntil(t *testing.T, what string, done func() bool) {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	if wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(context.Context) (bool, error) { return done(), nil }) != nil {
		t.Fatalf("waited in vain until %s", what)
	}
}

// TestNotServedFromTheStartIsProbed: with WithStopWhenNotServed, a
// resource that is not served from the start (a CRD not installed yet)
// does not stop the informer; only one that goes away does
// (TestStopWhenNotServed). It is NotServed and probed, and the waits end
// with their context, naming it and the 404.
func TestNotServedFromTheStartIsProbed(t *testing.T) {
	client := newDynamicClient(t, "testdata/widgets.yaml")
	client.PrependReactor("list", "widgets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(widget.GVR.GroupResource(), "")
	})
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil, generic.WithStopWhenNotServed())
	defer factory.Shutdown()
	informer := acquire(factory, widget.GVR)
	factory.Start(context.Background())
	// The waits below are bounded to show that they end: first let the
	// informer list, however loaded the machine, so that they have a 404
	// to name.
	waitUntil(t, "widgets are NotServed", func() bool { return informer.Status().State == generic.NotServed })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()

	err := factory.WaitForCacheSync(ctx).AsError()
	var syncErr *generic.SyncError
	if !errors.As(err, &syncErr) {
		t.Fatalf("error = %v, want a *SyncError", err)
	}
	got := map[string]generic.State{}
	for _, s := range syncErr.Unsynced {
		got[s.GVR.Resource] = s.State
	}
	if diff := cmp.Diff(map[string]generic.State{"widgets": generic.NotServed}, got); diff != "" {
		t.Errorf("unsynced (-want +got):\n%s", diff)
	}
	if !errors.Is(err, context.DeadlineExceeded) || !apierrors.IsNotFound(err) {
		t.Errorf("error = %v, want one that wraps the deadline and the 404", err)
	}
}

// TestWaitForCacheSyncErrorNamesWhy checks the error-returning wait: each
// resource that did not sync is named, with its state and reason.
func TestWaitForCacheSyncErrorNamesWhy(t *testing.T) {
	client := newDynamicClient(t, "testdata/widgets.yaml", "testdata/configmaps.yaml")
	client.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(configMapsGVR.GroupResource(), "", errors.New("user cannot list"))
	})
	client.PrependReactor("list", "namespaces", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(namespacesGVR.GroupResource(), "")
	})
	factory := newFactory[*unstructured.Unstructured](generic.DynamicSource(client), nil)
	defer factory.Shutdown()
	informers := map[string]generic.Informer[*unstructured.Unstructured]{}
	for _, gvr := range []schema.GroupVersionResource{widget.GVR, configMapsGVR, namespacesGVR} {
		informers[gvr.Resource] = acquire(factory, gvr)
	}
	factory.Start(context.Background())
	waitUntil(t, "configmaps are Forbidden and namespaces NotServed", func() bool {
		return informers["configmaps"].Status().State == generic.Forbidden && informers["namespaces"].Status().State == generic.NotServed
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := factory.WaitForCacheSync(ctx).AsError()

	var syncErr *generic.SyncError
	if !errors.As(err, &syncErr) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want a *SyncError wrapping the deadline", err)
	}
	got := map[string]generic.State{}
	for _, s := range syncErr.Unsynced {
		got[s.GVR.Resource] = s.State
	}
	if diff := cmp.Diff(map[string]generic.State{"configmaps": generic.Forbidden, "namespaces": generic.NotServed}, got); diff != "" {
		t.Errorf("unsynced (-want +got):\n%s", diff)
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("error %q is not Forbidden to apierrors.IsForbidden", err)
	}
	for _, s := range syncErr.Unsynced {
		if !errors.Is(err, s.LastError) {
			t.Errorf("error %q does not unwrap to %s's last error %v", err, s.GVR, s.LastError)
		}
	}
	for _, part := range []string{"/v1, Resource=configmaps: forbidden", "user cannot list", "/v1, Resource=namespaces: not served"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not say %q", err, part)
		}
	}
}

// stateLog records the states a StateHandler is told of.
type stateLog struct {
	mu  sync.Mutex
	log []generic.State
}

func (l *stateLog) record(s generic.Status) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = append(l.log, s.State)
}

// heard waits until the StateHandler has been told of n changes and
// returns them. The handler runs on a goroutine of its own (the
// informer's callbacks goroutine), so Status can show a change before the
// handler hears of it.
func (l *stateLog) heard(t *testing.T, n int) []generic.State {
	t.Helper()
	waitUntil(t, fmt.Sprintf("the StateHandler hears %d changes", n), func() bool { return len(l.states()) >= n })
	return l.states()
}

func (l *stateLog) states() []generic.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]generic.State(nil), l.log...)
}

func waitForState[T generic.Object](t *testing.T, informer generic.Informer[T], want generic.State) {
	t.Helper()
	waitUntil(t, "the state is "+want.String(), func() bool { return informer.Status().State == want })
}
