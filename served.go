package generic

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/klog/v2"
)

// servedGuard stands between an informer's reflector and its ListerWatcher
// and deals with a resource the server stops serving (404 Not Found: a CRD
// deleted, an API group removed), which client-go leaves to the reflector:
// it retries and logs forever and keeps serving the objects it had.
//
// On a 404 the guard records the NotServed state and, if the cache holds
// objects from before, answers the reflector's relist itself with an empty
// list (or an empty WatchList stream): the informer delivers a delete, with
// the last known state, for every object it had. It then parks the
// reflector's watch and probes the server with a small list, with backoff
// from notServedProbeInitial to notServedProbeMax, logging only the changes
// of state. When a probe finds the resource served again, the parked watch
// ends with 410 Gone and the reflector relists by itself.
//
// Everything else passes through: the guard costs one function call per
// list or watch request, nothing per event.
type servedGuard struct {
	inner                cache.ListerWatcherWithContext
	watchListUnsupported bool
	status               *statusTracker
	// hasSynced reports whether the informer's cache has been filled once:
	// only then does an empty answer have deletes to deliver.
	hasSynced func() bool
	// lastResourceVersion is the informer's, for the empty answers.
	lastResourceVersion func() string
	// bookmark makes the end-of-initial-events bookmark of an empty
	// WatchList stream, of the informer's type; false if it cannot.
	bookmark func(resourceVersion string) (runtime.Object, bool)
	// stopForGood: after the deletes, make no more requests.
	stopForGood bool
	// goroutines counts the goroutines of parked watches, so that the
	// informer's Run returns only after they have ended.
	goroutines *sync.WaitGroup

	mu        sync.Mutex
	notServed bool
	delay     time.Duration
	nextProbe time.Time
}

// Probe backoff while a resource is not served: 1, 2, 4, 8, 16 s, then
// every 30 s, a handful of requests in the first minute and two a minute
// after that.
const (
	notServedProbeInitial = time.Second
	notServedProbeMax     = 30 * time.Second
)

func newServedGuard(inner cache.ListerWatcher, status *statusTracker, hasSynced func() bool, lastResourceVersion func() string, bookmark func(string) (runtime.Object, bool), stopForGood bool, goroutines *sync.WaitGroup) *servedGuard {
	return &servedGuard{
		goroutines:           goroutines,
		inner:                cache.ToListerWatcherWithContext(inner),
		watchListUnsupported: watchlist.DoesClientNotSupportWatchListSemantics(inner),
		status:               status,
		hasSynced:            hasSynced,
		lastResourceVersion:  lastResourceVersion,
		bookmark:             bookmark,
		stopForGood:          stopForGood,
	}
}

// IsWatchListSemanticsUnSupported forwards the inner ListerWatcher's answer.
func (g *servedGuard) IsWatchListSemanticsUnSupported() bool { return g.watchListUnsupported }

func (g *servedGuard) List(options metav1.ListOptions) (runtime.Object, error) {
	return g.ListWithContext(context.Background(), options)
}

func (g *servedGuard) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return g.WatchWithContext(context.Background(), options)
}

func (g *servedGuard) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	if answer, done, err := g.whileNotServed(ctx); done {
		if answer {
			return &metainternalversion.List{ListMeta: metav1.ListMeta{ResourceVersion: g.resourceVersion()}}, nil
		}
		return nil, err
	}
	list, err := g.inner.ListWithContext(ctx, options)
	if err != nil {
		return g.listFailed(ctx, err)
	}
	if options.Continue == "" {
		g.served(ctx)
	}
	return list, nil
}

func (g *servedGuard) listFailed(ctx context.Context, err error) (runtime.Object, error) {
	if !apierrors.IsNotFound(err) {
		g.recordError(err)
		return nil, err
	}
	g.markNotServed(ctx, err)
	if !g.hasSynced() {
		return nil, err
	}
	return &metainternalversion.List{ListMeta: metav1.ListMeta{ResourceVersion: g.resourceVersion()}}, nil
}

func (g *servedGuard) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	initialEvents := options.SendInitialEvents != nil && *options.SendInitialEvents
	if !initialEvents && g.isNotServed() {
		return g.park(ctx, nil), nil
	}
	if initialEvents {
		if answer, done, err := g.whileNotServed(ctx); done {
			if answer {
				return g.emptyInitialEvents(ctx, err)
			}
			return nil, err
		}
	}
	w, err := g.inner.WatchWithContext(ctx, options)
	if err == nil && w == nil {
		err = errNilWatch
	}
	if err == nil {
		if initialEvents {
			g.served(ctx)
		}
		return w, nil
	}
	if !apierrors.IsNotFound(err) {
		g.recordError(err)
		return nil, err
	}
	g.markNotServed(ctx, err)
	if !initialEvents {
		// The resource went away under a running watch: make the
		// reflector relist now, so that the deletes are delivered.
		g.mu.Lock()
		g.nextProbe = time.Now()
		g.mu.Unlock()
		return g.park(ctx, &watch.Event{Type: watch.Error, Object: gone()}), nil
	}
	if !g.hasSynced() {
		return nil, err
	}
	return g.emptyInitialEvents(ctx, err)
}

// whileNotServed decides a list (or WatchList) while the resource is not
// served. done is false when the request should go to the server (served,
// or time for a probe). Otherwise answer says to answer empty (the cache
// has objects to delete), or err is what to return.
func (g *servedGuard) whileNotServed(ctx context.Context) (answer, done bool, err error) {
	g.mu.Lock()
	notServed, nextProbe := g.notServed, g.nextProbe
	g.mu.Unlock()
	if !notServed {
		return false, false, nil
	}
	if g.stopForGood {
		return g.hasSynced(), true, g.status.get().LastError
	}
	if g.hasSynced() && time.Now().Before(nextProbe) {
		return true, true, nil
	}
	// Never synced: hold the reflector until the next probe instead of
	// letting it retry at its own pace.
	if err := sleepUntil(ctx, nextProbe); err != nil {
		return false, true, err
	}
	return false, false, nil
}

// emptyInitialEvents answers a WatchList request with no object: the
// bookmark that ends the initial events, then a parked watch. If no
// bookmark of the informer's type can be made, it returns err instead.
func (g *servedGuard) emptyInitialEvents(ctx context.Context, err error) (watch.Interface, error) {
	bookmark, ok := g.bookmark(g.resourceVersion())
	if !ok {
		return nil, err
	}
	return g.park(ctx, &watch.Event{Type: watch.Bookmark, Object: bookmark}), nil
}

func (g *servedGuard) resourceVersion() string {
	if rv := g.lastResourceVersion(); rv != "" {
		return rv
	}
	return "0"
}

func (g *servedGuard) isNotServed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.notServed
}

// markNotServed records a 404 and schedules the next probe.
func (g *servedGuard) markNotServed(ctx context.Context, err error) {
	g.mu.Lock()
	first := !g.notServed
	g.notServed = true
	if first {
		g.delay = notServedProbeInitial
	} else {
		g.delay = min(2*g.delay, notServedProbeMax)
	}
	g.nextProbe = time.Now().Add(g.delay)
	delay := g.delay
	g.mu.Unlock()
	if g.stopForGood {
		g.status.set(Stopped, err)
	} else {
		g.status.set(NotServed, err)
	}
	logger := klog.FromContext(ctx)
	if first {
		logger.Info("Resource is not served; the informer probes it with backoff", "gvr", g.status.get().GVR.String(), "err", err.Error())
	} else {
		logger.V(4).Info("Resource is still not served", "gvr", g.status.get().GVR.String(), "nextProbe", delay)
	}
}

// served records a list (or WatchList) the server answered.
func (g *servedGuard) served(ctx context.Context) {
	g.mu.Lock()
	was := g.notServed
	g.notServed = false
	g.mu.Unlock()
	if was {
		klog.FromContext(ctx).Info("Resource is served again; the informer relists it", "gvr", g.status.get().GVR.String())
	}
	if g.hasSynced() {
		g.status.synced()
	}
}

func (g *servedGuard) recordError(err error) {
	if apierrors.IsForbidden(err) {
		g.status.set(Forbidden, err)
		return
	}
	g.status.failed(err)
}

// probe asks the server for one object of the resource; it reports whether
// the question is settled for now: false means still not served.
func (g *servedGuard) probe(ctx context.Context) bool {
	_, err := g.inner.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		g.markNotServed(ctx, err)
		return false
	}
	if err == nil {
		g.served(ctx)
	}
	return true
}

// park returns a watch that sends first (if any), then nothing until a
// probe finds the resource served (or failing otherwise): then it ends with
// 410 Gone, and the reflector relists.
func (g *servedGuard) park(ctx context.Context, first *watch.Event) watch.Interface {
	w := &parkedWatch{result: make(chan watch.Event, 1), stopped: make(chan struct{})}
	if first != nil {
		w.result <- *first
	}
	g.goroutines.Go(func() {
		defer close(w.result)
		if first != nil && first.Type == watch.Error {
			return
		}
		for {
			g.mu.Lock()
			nextProbe := g.nextProbe
			g.mu.Unlock()
			if g.stopForGood {
				nextProbe = time.Now().Add(100 * 365 * 24 * time.Hour)
			}
			select {
			case <-w.stopped:
				return
			case <-ctx.Done():
				return
			case <-time.After(time.Until(nextProbe)):
			}
			if g.probe(ctx) {
				select {
				case w.result <- watch.Event{Type: watch.Error, Object: gone()}:
				case <-w.stopped:
				case <-ctx.Done():
				}
				return
			}
		}
	})
	return w
}

// gone is the Status of a 410 Gone, which makes the reflector relist.
func gone() *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    410,
		Reason:  metav1.StatusReasonExpired,
		Message: "generic: the resource was not served; relist",
	}
}

// parkedWatch is a watch whose events come from the guard.
type parkedWatch struct {
	result   chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
}

func (w *parkedWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *parkedWatch) Stop() { w.stopOnce.Do(func() { close(w.stopped) }) }

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
