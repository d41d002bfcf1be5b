package generic_test

// Regression tests for the lifecycle defects fixed by the informer
// lifecycle redesign (commit 9c91876), numbered as in the issue.

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/generic-informers/generic"
	"github.com/generic-informers/generic/internal/widget"
	"github.com/generic-informers/generic/unstructured"
)

// boundedWait is how long a defect test waits for something that takes
// milliseconds when the library is right.
const boundedWait = 30 * time.Second

// sharedFactory is what the tests of defects 6 and 7 do with a factory,
// whichever API it has: the generic Factory, the drop-in
// unstructured.NewDynamicSharedInformerFactory or client-go's own
// dynamicinformer.
type sharedFactory struct {
	forResource      func() cache.SharedIndexInformer
	start            func(ctx context.Context)
	waitForCacheSync func(ctx context.Context) map[schema.GroupVersionResource]bool
	shutdown         func()
}

// clientGoShaped is the API of client-go's DynamicSharedInformerFactory,
// which the drop-in implements too.
type clientGoShaped interface {
	Start(stopCh <-chan struct{})
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	Shutdown()
}

func genericWidgets(client *dynamicfake.FakeDynamicClient) sharedFactory {
	f := newFactory[*apiunstructured.Unstructured](generic.DynamicSource(client), nil)
	return sharedFactory{
		forResource: func() cache.SharedIndexInformer { return acquire(f, widget.GVR).Informer() },
		start:       f.Start,
		waitForCacheSync: func(ctx context.Context) map[schema.GroupVersionResource]bool {
			return map[schema.GroupVersionResource]bool{widget.GVR: f.WaitForCacheSync(ctx).AsError() == nil}
		},
		shutdown: f.Shutdown,
	}
}

func clientGoShapedWidgets(f clientGoShaped) sharedFactory {
	return sharedFactory{
		forResource:      func() cache.SharedIndexInformer { return f.ForResource(widget.GVR).Informer() },
		start:            func(ctx context.Context) { f.Start(ctx.Done()) },
		waitForCacheSync: func(ctx context.Context) map[schema.GroupVersionResource]bool { return f.WaitForCacheSync(ctx.Done()) },
		shutdown:         f.Shutdown,
	}
}

// runByHand runs informer as client-go users do, Informer().Run(stop), and
// returns a channel closed when Run has returned.
func runByHand(informer cache.SharedIndexInformer, stop <-chan struct{}) <-chan struct{} {
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		informer.Run(stop)
	}()
	return ran
}

// waitClosed fails the test unless ch is closed within boundedWait.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(boundedWait):
		t.Fatalf("waited %v in vain until %s; goroutines:\n%s", boundedWait, what, allGoroutines())
	}
}

// pollFor polls done every 10 ms and fails the test with what unless it
// holds within boundedWait.
func pollFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, boundedWait, true,
		func(context.Context) (bool, error) { return done(), nil })
	if err != nil {
		t.Fatalf("waited %v in vain until %s", boundedWait, what)
	}
}

// watchesOf counts the watches of resource the fake client was asked for.
// The fake records an action and runs its reactors under one lock, so a
// watch counted here is open: it gets every later change.
func watchesOf(client *dynamicfake.FakeDynamicClient, resource string) int {
	n := 0
	for _, action := range client.Actions() {
		if action.GetVerb() == "watch" && action.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

// createWidgetSeenBy creates Widget team-a/name through the fake client
// once the informer's watch is open (the fake drops the events of changes
// made between a list and its watch) and fails the test unless the
// informer's cache gets it. wantWatches is the number of Widget watches
// the fake must have been asked for by then.
func createWidgetSeenBy(t *testing.T, client *dynamicfake.FakeDynamicClient, informer cache.SharedIndexInformer, wantWatches int, name string) {
	t.Helper()
	pollFor(t, "the informer watches Widgets", func() bool { return watchesOf(client, widget.GVR.Resource) >= wantWatches })
	if _, err := client.Resource(widget.GVR).Namespace("team-a").Create(context.Background(), newWidget("team-a", name, int64(3)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pollFor(t, "the informer's cache has team-a/"+name, func() bool {
		_, exists, err := informer.GetStore().GetByKey("team-a/" + name)
		return err == nil && exists
	})
}

// allGoroutines is the stack of every goroutine, for a failure message.
func allGoroutines() string {
	buf := make([]byte, 1<<20)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestForResourceReplacesInformerStoppedByHand is defect 6 (kubernetes
// #138800): a caller ran the informer ForResource gave it by hand,
// Informer().Run(stop), and closed stop. The next Acquire (ForResource) handed back
// that stopped informer, which WaitForCacheSync reported synced while its
// cache never changed again. It must hand out a fresh informer that, once
// started, syncs and sees later changes.
func TestForResourceReplacesInformerStoppedByHand(t *testing.T) {
	tests := []struct {
		name       string
		newFactory func(*dynamicfake.FakeDynamicClient) sharedFactory
	}{
		{name: "generic Factory", newFactory: genericWidgets},
		{name: "drop-in NewDynamicSharedInformerFactory", newFactory: func(client *dynamicfake.FakeDynamicClient) sharedFactory {
			return clientGoShapedWidgets(unstructured.NewDynamicSharedInformerFactory(client, 0))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/widgets.yaml")
			factory := tc.newFactory(client)
			startCtx, stopStart := context.WithCancel(context.Background())
			t.Cleanup(func() {
				stopStart()
				factory.shutdown()
			})
			ctx, cancel := testContext(t)
			defer cancel()

			byHand := factory.forResource()
			stop := make(chan struct{})
			ran := runByHand(byHand, stop)
			if !cache.WaitForCacheSync(ctx.Done(), byHand.HasSynced) {
				close(stop)
				t.Fatal("the informer run by hand did not sync")
			}
			close(stop)
			waitClosed(t, ran, "the informer run by hand returned")

			fresh := factory.forResource()
			if fresh == byHand {
				t.Fatal("ForResource returned the informer its caller ran by hand and stopped")
			}
			watches := watchesOf(client, widget.GVR.Resource)
			factory.start(startCtx)
			if diff := cmp.Diff(map[schema.GroupVersionResource]bool{widget.GVR: true}, factory.waitForCacheSync(ctx)); diff != "" {
				t.Fatalf("WaitForCacheSync after Start (-want +got):\n%s", diff)
			}
			createWidgetSeenBy(t, client, fresh, watches+1, "later")
		})
	}
}

// TestDropInForResourceKeepsHandRunInformer is defect 7: with the drop-in
// factory, a caller runs acquire(f, gvr).Informer().Run(stop) by hand
// and also calls f.Start(stop). The Factory's own Run of that informer
// returned at once (it ran already), and the next ForResource took that
// for a stop and handed out a fresh informer that nothing would ever run.
// client-go's dynamicinformer returns the running one; so must the drop-in,
// and that informer keeps seeing changes.
func TestDropInForResourceKeepsHandRunInformer(t *testing.T) {
	tests := []struct {
		name       string
		newFactory func(*dynamicfake.FakeDynamicClient) clientGoShaped
	}{
		{name: "drop-in unstructured.NewDynamicSharedInformerFactory", newFactory: func(client *dynamicfake.FakeDynamicClient) clientGoShaped {
			return unstructured.NewDynamicSharedInformerFactory(client, 0)
		}},
		{name: "client-go dynamicinformer.NewDynamicSharedInformerFactory", newFactory: func(client *dynamicfake.FakeDynamicClient) clientGoShaped {
			return dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/widgets.yaml")
			factory := clientGoShapedWidgets(tc.newFactory(client))
			stop := make(chan struct{})
			var ran <-chan struct{}
			t.Cleanup(func() {
				close(stop)
				if ran != nil {
					<-ran
				}
				factory.shutdown()
			})
			ctx, cancel := testContext(t)
			defer cancel()
			stopCtx := wait.ContextForChannel(stop)

			byHand := factory.forResource()
			ran = runByHand(byHand, stop)
			if !cache.WaitForCacheSync(ctx.Done(), byHand.HasSynced) {
				t.Fatal("the informer run by hand did not sync")
			}
			factory.start(stopCtx)
			if diff := cmp.Diff(map[schema.GroupVersionResource]bool{widget.GVR: true}, factory.waitForCacheSync(stopCtx)); diff != "" {
				t.Fatalf("WaitForCacheSync after Start (-want +got):\n%s", diff)
			}
			createWidgetSeenBy(t, client, byHand, 1, "first")

			again := factory.forResource()
			if again != byHand {
				t.Fatalf("ForResource returned a fresh informer (stopped: %v, synced: %v), not the one running by hand",
					again.IsStopped(), again.HasSynced())
			}
			createWidgetSeenBy(t, client, again, 1, "second")
		})
	}
}

// TestInformerAskedForAfterStartRuns is defect 8 (kubernetes #92777): an
// informer asked for after Start was never run, WaitForCacheSyncError
// returned nil and its state said Syncing. It must run at once under
// Start's context, and WaitForCacheSyncError must report it until it has
// synced (the client-go-shaped factory's informers wait for the next
// Start, as client-go's do: TestFactoryStartTwice). Its lists answer 403 until the test allows them, so that it cannot sync
// before.
func TestInformerAskedForAfterStartRuns(t *testing.T) {
	tests := []struct {
		name string
		opts []generic.InformerOption
		// wantUnsynced is what WaitForCacheSyncError names, by resource,
		// before a second Start; wantState the late informer's State then.
		wantUnsynced map[string]generic.State
		wantState    generic.State
		// wantLists: whether the late informer listed before a second Start.
		wantLists bool
	}{
		{
			name:         "default: runs at once",
			wantUnsynced: map[string]generic.State{"widgets": generic.Forbidden},
			wantState:    generic.Forbidden,
			wantLists:    true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/widgets.yaml")
			var forbidden atomic.Bool
			var widgetLists atomic.Int32
			forbidden.Store(true)
			client.PrependReactor("list", widget.GVR.Resource, func(clienttesting.Action) (bool, runtime.Object, error) {
				widgetLists.Add(1)
				if forbidden.Load() {
					return true, nil, apierrors.NewForbidden(widget.GVR.GroupResource(), "", errors.New("not yet"))
				}
				return false, nil, nil
			})
			factory := newFactory[*apiunstructured.Unstructured](generic.DynamicSource(client), nil, asFactoryOptions(tc.opts)...)
			startCtx, stopStart := context.WithCancel(context.Background())
			t.Cleanup(func() {
				stopStart()
				factory.Shutdown()
			})
			ctx, cancel := testContext(t)
			defer cancel()

			acquire(factory, configMapsGVR)
			factory.Start(startCtx)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatalf("first sync: %v", err)
			}

			late := acquire(factory, widget.GVR)
			if tc.wantLists {
				// Let it list (and be refused), however loaded the machine,
				// before the bounded wait that must name why.
				pollFor(t, "the late informer is "+tc.wantState.String(), func() bool { return late.Status().State == tc.wantState })
			}
			err := waitForCacheSyncErrorWithin(factory, time.Second)
			if diff := cmp.Diff(tc.wantUnsynced, unsyncedStates(t, err)); diff != "" {
				t.Errorf("WaitForCacheSyncError before a second Start, error %v (-want +got):\n%s", err, diff)
			}
			if tc.wantUnsynced != nil && !apierrors.IsForbidden(err) {
				t.Errorf("WaitForCacheSyncError = %v, want one that is Forbidden to apierrors.IsForbidden", err)
			}
			if diff := cmp.Diff(tc.wantState, late.Status().State); diff != "" {
				t.Errorf("late informer's state before a second Start (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLists, widgetLists.Load() > 0); diff != "" {
				t.Errorf("late informer listed before a second Start (-want +got):\n%s", diff)
			}

			factory.Start(startCtx)
			pollFor(t, "the late informer is Forbidden", func() bool { return late.Status().State == generic.Forbidden })
			err = waitForCacheSyncErrorWithin(factory, time.Second)
			if diff := cmp.Diff(map[string]generic.State{"widgets": generic.Forbidden}, unsyncedStates(t, err)); diff != "" {
				t.Errorf("WaitForCacheSyncError after a second Start, error %v (-want +got):\n%s", err, diff)
			}

			forbidden.Store(false)
			if err := factory.WaitForCacheSync(ctx).AsError(); err != nil {
				t.Fatalf("WaitForCacheSyncError once allowed to list = %v, want nil", err)
			}
			if diff := cmp.Diff(generic.Synced, late.Status().State); diff != "" {
				t.Errorf("late informer's state once synced (-want +got):\n%s", diff)
			}
			stopStart()
			pollFor(t, "the late informer stopped with Start's context", func() bool { return late.Status().State == generic.Stopped })
		})
	}
}

// waitForCacheSyncErrorWithin calls WaitForCacheSyncError with a deadline d
// away.
func waitForCacheSyncErrorWithin[T generic.Object](factory *generic.Factory[T], d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return factory.WaitForCacheSync(ctx).AsError()
}

// unsyncedStates returns the State of each resource a *SyncError names, by
// resource name; nil for a nil error.
func unsyncedStates(t *testing.T, err error) map[string]generic.State {
	t.Helper()
	if err == nil {
		return nil
	}
	var syncErr *generic.SyncError
	if !errors.As(err, &syncErr) {
		t.Fatalf("error %v is not a *SyncError", err)
	}
	states := map[string]generic.State{}
	for _, s := range syncErr.Unsynced {
		states[s.GVR.Resource] = s.State
	}
	return states
}

// TestCallbackMayReleaseOrShutdown is defect 9: a callback (StateHandler,
// event handler, ErrorHandler) that called Release or Shutdown deadlocked,
// since they waited for the informer's goroutines, the callback's among
// them. Release now never waits, and from a callback the informers are
// stopped by cancelling Start's context (Shutdown waits for the callbacks
// and must not be called from them, as client-go's ShutDownEventHandler).
// Each call must return (Release of the last hold with true), and once the
// callback has returned no goroutine of the library may remain.
func TestCallbackMayReleaseOrShutdown(t *testing.T) {
	release := func(h generic.Handle[*widget.Widget]) bool { return h.Release() }
	// stop is the non-blocking alternative to Shutdown from a callback:
	// cancel the context given to Start (set by the test before Start).
	stopStart := context.CancelFunc(func() {})
	stop := func(generic.Handle[*widget.Widget]) bool {
		stopStart()
		return true
	}
	onSynced := func(trigger func()) []generic.InformerOption {
		return []generic.InformerOption{generic.WithStateHandler(func(s generic.Status) {
			if s.State == generic.Synced {
				trigger()
			}
		})}
	}
	onAdd := func(trigger func()) cache.TypedResourceEventHandler[*widget.Widget] {
		return cache.TypedResourceEventHandlerFuncs[*widget.Widget]{AddFunc: func(*widget.Widget) { trigger() }}
	}
	onAddClientGo := func(trigger func()) cache.ResourceEventHandler {
		return cache.ResourceEventHandlerFuncs{AddFunc: func(any) { trigger() }}
	}
	onConversionError := func(trigger func()) []generic.InformerOption {
		return []generic.InformerOption{generic.WithErrorHandler(func(_ context.Context, err error) {
			var conversion *generic.ConversionError
			if errors.As(err, &conversion) {
				trigger()
			}
		})}
	}
	malformed := load(t, "testdata/malformed/widget-wrong-type.yaml")[0]
	tests := []struct {
		name string
		// opts and handler, if not nil, make the callback that calls
		// trigger, which makes the call once.
		opts    func(trigger func()) []generic.InformerOption
		handler func(trigger func()) cache.TypedResourceEventHandler[*widget.Widget]
		// clientGoHandler is added the client-go way, on Informer().
		clientGoHandler func(trigger func()) cache.ResourceEventHandler
		call            func(generic.Handle[*widget.Widget]) bool
		// malformed is where the malformed Widget comes from, if any: the
		// initial list, or a watch (created once the informer watches).
		// Before the fix only the watch deadlocked: client-go's reflector
		// lists in a goroutine it does not wait for, while the converting
		// watch's goroutine was one Run waited for.
		malformed string
	}{
		{name: "StateHandler calls Release on Synced", opts: onSynced, call: release},
		{name: "StateHandler cancels Start's context on Synced", opts: onSynced, call: stop},
		{name: "event handler calls Release", handler: onAdd, call: release},
		{name: "event handler cancels Start's context", handler: onAdd, call: stop},
		{name: "client-go event handler calls Release", clientGoHandler: onAddClientGo, call: release},
		{name: "client-go event handler cancels Start's context", clientGoHandler: onAddClientGo, call: stop},
		{name: "ErrorHandler calls Release on a ConversionError from the list", opts: onConversionError, call: release, malformed: "list"},
		{name: "ErrorHandler cancels Start's context on a ConversionError from the list", opts: onConversionError, call: stop, malformed: "list"},
		{name: "ErrorHandler calls Release on a ConversionError from a watch", opts: onConversionError, call: release, malformed: "watch"},
		{name: "ErrorHandler cancels Start's context on a ConversionError from a watch", opts: onConversionError, call: stop, malformed: "watch"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/widgets.yaml")
			if tc.malformed == "list" {
				if err := client.Tracker().Add(malformed.DeepCopy()); err != nil {
					t.Fatal(err)
				}
			}
			var factory *generic.Factory[*widget.Widget]
			var informer generic.Handle[*widget.Widget]
			var called atomic.Bool
			var once sync.Once
			returned := make(chan bool, 1)
			trigger := func() {
				once.Do(func() {
					called.Store(true)
					returned <- tc.call(informer)
				})
			}
			var opts []generic.InformerOption
			if tc.opts != nil {
				opts = tc.opts(trigger)
			}

			// The scenario runs in a goroutine of its own, so that the
			// test can fail, with the goroutines' stacks, if it hangs.
			done := make(chan struct{})
			var got bool
			var setupErr error
			go func() {
				defer close(done)
				factory = newFactory(generic.DynamicSource(client), generic.FromUnstructured[*widget.Widget](), asFactoryOptions(opts)...)
				informer = acquire(factory, widget.GVR)
				if tc.handler != nil {
					if _, setupErr = informer.AddEventHandler(tc.handler(trigger)); setupErr != nil {
						return
					}
				}
				if tc.clientGoHandler != nil {
					if _, setupErr = informer.Informer().AddEventHandler(tc.clientGoHandler(trigger)); setupErr != nil {
						return
					}
				}
				var startCtx context.Context
				startCtx, stopStart = context.WithCancel(context.Background())
				factory.Start(startCtx)
				if tc.malformed == "watch" {
					setupErr = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, boundedWait/2, true,
						func(context.Context) (bool, error) {
							return informer.HasSynced() && watchesOf(client, widget.GVR.Resource) > 0, nil
						})
					if setupErr != nil {
						setupErr = fmt.Errorf("the informer did not sync and watch: %w", setupErr)
						return
					}
					if _, setupErr = client.Resource(widget.GVR).Namespace(malformed.GetNamespace()).Create(context.Background(), malformed.DeepCopy(), metav1.CreateOptions{}); setupErr != nil {
						return
					}
				}
				got = <-returned
			}()
			select {
			case <-done:
			case <-time.After(boundedWait):
				// The factory is left as it is: with the defect, Shutdown
				// would hang too.
				stopStart()
				if !called.Load() {
					t.Fatalf("the callback was not called within %v; goroutines:\n%s", boundedWait, allGoroutines())
				}
				t.Fatalf("the call from the callback did not return within %v (deadlock); goroutines:\n%s", boundedWait, allGoroutines())
			}
			t.Cleanup(factory.Shutdown)
			t.Cleanup(stopStart)
			if setupErr != nil {
				t.Fatal(setupErr)
			}
			if diff := cmp.Diff(true, got); diff != "" {
				t.Errorf("the call from the callback returned (-want +got):\n%s", diff)
			}
			pollFor(t, "the informer is Stopped", func() bool { return informer.Status().State == generic.Stopped })
			waitForNoLibraryGoroutines(t, "after the callback returned")
		})
	}
}

// TestSyncErrorIsForbiddenWhateverTheOrder is defect 11:
// apierrors.IsForbidden(err) was false for a *SyncError in which another
// resource, sorted before the forbidden one, failed with 404 Not Found,
// since apierrors' predicates look at the first API error they find.
func TestSyncErrorIsForbiddenWhateverTheOrder(t *testing.T) {
	type unsynced struct {
		Resource string
		State    generic.State
	}
	type verdict struct{ Forbidden, DeadlineExceeded bool }
	tests := []struct {
		name                string
		notFound, forbidden schema.GroupVersionResource
		// wantUnsynced is SyncError.Unsynced, in its order (by GVR).
		wantUnsynced []unsynced
	}{
		{
			name:         "the 404 resource sorts first",
			notFound:     configMapsGVR,
			forbidden:    podsGVR,
			wantUnsynced: []unsynced{{"configmaps", generic.NotServed}, {"pods", generic.Forbidden}},
		},
		{
			name:         "the 403 resource sorts first",
			notFound:     podsGVR,
			forbidden:    configMapsGVR,
			wantUnsynced: []unsynced{{"configmaps", generic.Forbidden}, {"pods", generic.NotServed}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := newDynamicClient(t, "testdata/configmaps.yaml", "testdata/pods.yaml")
			client.PrependReactor("list", tc.notFound.Resource, func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewNotFound(tc.notFound.GroupResource(), "")
			})
			client.PrependReactor("list", tc.forbidden.Resource, func(clienttesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(tc.forbidden.GroupResource(), "", errors.New("user cannot list"))
			})
			factory := newFactory[*apiunstructured.Unstructured](generic.DynamicSource(client), nil)
			t.Cleanup(factory.Shutdown)
			notFound := acquire(factory, tc.notFound)
			forbidden := acquire(factory, tc.forbidden)
			factory.Start(context.Background())
			pollFor(t, "the 404 informer is NotServed", func() bool { return notFound.Status().State == generic.NotServed })
			pollFor(t, "the 403 informer is Forbidden", func() bool { return forbidden.Status().State == generic.Forbidden })

			err := waitForCacheSyncErrorWithin(factory, 200*time.Millisecond)
			var syncErr *generic.SyncError
			if !errors.As(err, &syncErr) {
				t.Fatalf("error = %v, want a *SyncError", err)
			}
			var got []unsynced
			for _, s := range syncErr.Unsynced {
				got = append(got, unsynced{s.GVR.Resource, s.State})
			}
			if diff := cmp.Diff(tc.wantUnsynced, got); diff != "" {
				t.Errorf("SyncError.Unsynced (-want +got):\n%s", diff)
			}
			want := verdict{Forbidden: true, DeadlineExceeded: true}
			if diff := cmp.Diff(want, verdict{Forbidden: apierrors.IsForbidden(err), DeadlineExceeded: errors.Is(err, context.DeadlineExceeded)}); diff != "" {
				t.Errorf("error %q (-want +got):\n%s", err, diff)
			}
		})
	}
}
