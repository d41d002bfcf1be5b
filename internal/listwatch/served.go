package listwatch

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// servedGuard stands between an informer's reflector and its ListerWatcher
// and deals with a resource the server does not serve (a CRD not installed
// yet) or stops serving (a CRD deleted, an API group removed), which
// client-go leaves to the reflector: it retries with its own backoff,
// growing to 30-60 s, logs, and keeps serving the objects it had.
//
// It decides from the server's answers only, never from the cache: a list
// answered 404 Not Found means the collection does not exist, which, once
// the server has listed it before, the guard passes on as the empty list it
// now is (the informer delivers a delete, with the last known state, for
// every object it had). Before any list succeeded, the guard holds the
// list until the resource is served (or the reflector stops), and the
// informer does not sync meanwhile. A watch answered 404 is returned as it
// is: the reflector relists, and the list's answer decides (a watch can
// fail while the resource is served).
//
// While a list is answered 404, the guard holds the reflector (a held
// list, or a parked watch) and asks the server again with backoff, from
// notServedProbeInitial to notServedProbeMax (Config.NotServedProbes),
// logging only the changes; when the resources the server serves may have
// changed (Hooks.ServedChanged: a CRD created or changed), it asks at once,
// and then again with backoff from changedProbeInitial. When the server
// serves the resource, the held list returns what it listed, or the parked
// watch ends with 410 Gone and the reflector relists by itself.
//
// It reports what the server answered to Hooks.Served. Everything else
// passes through: one function call per request, nothing per event.
type servedGuard struct {
	// lw is the guard as the reflector sees it.
	lw    cache.ListerWatcher
	inner cache.ListerWatcherWithContext
	// source is what inner ingests from: probes list it directly, so
	// that a probe's answer, which the reflector never sees, changes
	// nothing of the ingest's (its record, its shard bookkeeping, its
	// metrics' relists).
	source cache.ListerWatcherWithContext
	gvr    string
	state  Served
	// changes is Hooks.ServedChanged.
	changes func() <-chan struct{}
	// probes is the backoff of the probes while not served.
	probes wait.Backoff
	// stopForGood: once a resource the server listed is not served, deliver
	// the deletes, then make no more requests. A resource never listed
	// (a CRD not installed yet) is probed as usual.
	stopForGood bool
	// goroutines counts the goroutines of parked watches, so that the
	// informer's Run returns only after they have ended.
	goroutines *sync.WaitGroup
	// emptied is told that the reflector is handed the empty list of a
	// resource not served in the place of its objects: the ingest then
	// forgets what it delivered (ingest.forget).
	emptied func()

	mu sync.Mutex
	// listed: the server has answered a list of the whole resource.
	listed bool
	// resourceVersion is of the last list the server answered.
	resourceVersion string
	notServed       bool
	backoff         wait.Backoff
	nextProbe       time.Time
	// changed is the ServedChanged channel taken before the last request
	// answered 404: once closed, the resources served may have changed
	// since that answer.
	changed <-chan struct{}
}

// Probe backoff while a resource is not served: 1, 2, 4, 8, 16 s, then
// every 30 s, a handful of requests in the first minute and two a minute
// after that. After the resources served changed (ServedChanged), the
// probes start again at once, then 0.25, 0.5, 1, 2 s ... apart, so that a
// CRD's resource, which discovery and the server serve a moment after the
// CRD is Established, is listed within about a second of it.
const (
	notServedProbeInitial = time.Second
	notServedProbeMax     = 30 * time.Second
	changedProbeInitial   = 250 * time.Millisecond
)

func notServedBackoff() wait.Backoff {
	return wait.Backoff{Duration: notServedProbeInitial, Factor: 2, Steps: math.MaxInt32, Cap: notServedProbeMax}
}

func newServedGuard[T Object](inner, source cache.ListerWatcher, c Config[T], h Hooks, goroutines *sync.WaitGroup, emptied func()) *servedGuard {
	g := &servedGuard{
		goroutines:  goroutines,
		emptied:     emptied,
		inner:       cache.ToListerWatcherWithContext(inner),
		source:      cache.ToListerWatcherWithContext(source),
		gvr:         c.GVR.String(),
		state:       h.Served,
		changes:     h.ServedChanged,
		probes:      notServedBackoff(),
		stopForGood: c.StopForGood,
	}
	if c.NotServedProbes.Duration > 0 {
		g.probes = c.NotServedProbes
	}
	g.lw = stage(inner, g.list, g.watch)
	return g
}

// afterChange is the backoff of the probes after the resources served
// changed: from changedProbeInitial, up to the probes' cap.
func (g *servedGuard) afterChange() wait.Backoff {
	return wait.Backoff{Duration: min(changedProbeInitial, g.probes.Duration), Factor: 2, Steps: math.MaxInt32, Cap: g.probes.Cap}
}

func (g *servedGuard) list(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	if empty, done, err := g.whileNotServed(ctx); done {
		if empty {
			return g.emptyList(), nil
		}
		return nil, err
	}
	for {
		changed := g.changes()
		list, err := g.inner.ListWithContext(ctx, options)
		if err == nil {
			g.listSucceeded(ctx, list)
			return list, nil
		}
		if !apierrors.IsNotFound(err) {
			g.recordError(err)
			return nil, err
		}
		if g.markNotServed(ctx, err, changed) {
			// Listed before: the empty list the collection now is.
			return g.emptyList(), nil
		}
		// Never listed (a CRD not installed yet): hold the reflector
		// here, rather than hand it the 404 and have it retry at its
		// own backoff, which grows to 30-60 s, until the next probe is
		// due or the resources served changed.
		if !g.waitForProbe(ctx, ctx.Done()) {
			return nil, err
		}
	}
}

// watch opens the reflector's watch, or parks it while the
// resource is not served. A WatchList request (a watch that streams the
// initial list, KEP-3157) is refused then, and its 404 returned as it is:
// the reflector falls back to a list, and the list's answer decides.
func (g *servedGuard) watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	initialEvents := options.SendInitialEvents != nil && *options.SendInitialEvents
	if g.isNotServed() {
		if initialEvents {
			return nil, errNotServedWatchList
		}
		return g.park(ctx), nil
	}
	w, err := g.inner.WatchWithContext(ctx, options)
	if err == nil && w == nil {
		err = errNilWatch
	}
	if err != nil {
		g.recordError(err)
		return nil, err
	}
	if initialEvents {
		g.served(ctx)
	}
	return w, nil
}

// errNotServedWatchList refuses a WatchList request while the resource is
// not served, so that the reflector lists instead.
var errNotServedWatchList = errors.New("generic: the resource is not served; list it")

// whileNotServed decides a list (or WatchList) while the resource is not
// served. done is false when the request should go to the server (served,
// or time for a probe). Otherwise empty says to answer with no object, or
// err is what to return.
func (g *servedGuard) whileNotServed(ctx context.Context) (empty, done bool, err error) {
	g.mu.Lock()
	notServed, nextProbe, listed := g.notServed, g.nextProbe, g.listed
	g.mu.Unlock()
	if !notServed {
		return false, false, nil
	}
	if g.stopForGood && listed {
		return true, true, nil
	}
	if listed && time.Now().Before(nextProbe) {
		return true, true, nil
	}
	// Hold the reflector until the next probe instead of letting it retry
	// at its own pace.
	if !g.waitForProbe(ctx, ctx.Done()) {
		return false, true, ctx.Err()
	}
	return false, false, nil
}

// emptyList is the list of a resource that is not served, which the
// reflector takes in the place of the objects it had: the ingest forgets
// them (emptied).
func (g *servedGuard) emptyList() runtime.Object {
	g.emptied()
	return &metainternalversion.List{ListMeta: metav1.ListMeta{ResourceVersion: g.lastResourceVersion()}}
}

func (g *servedGuard) lastResourceVersion() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.resourceVersion != "" {
		return g.resourceVersion
	}
	return "0"
}

// stoppedForGood reports whether the informer stops for good: asked to, and
// the resource it listed is no longer served.
func (g *servedGuard) stoppedForGood() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stopForGood && g.listed && g.notServed
}

func (g *servedGuard) isNotServed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.notServed
}

// markNotServed records a list's 404 and schedules the next probe;
// changed is the ServedChanged channel taken before the list was sent. It
// reports whether the server had listed the resource before, so that the
// 404 stands for an empty list.
func (g *servedGuard) markNotServed(ctx context.Context, err error, changed <-chan struct{}) (listedBefore bool) {
	g.mu.Lock()
	first := !g.notServed
	g.notServed = true
	if first {
		g.backoff = g.probes
	}
	delay := g.backoff.Step()
	g.nextProbe = time.Now().Add(delay)
	g.changed = changed
	listedBefore = g.listed
	g.mu.Unlock()
	if g.stoppedForGood() {
		g.state.StoppedForGood(err)
	} else {
		g.state.NotServed(err)
	}
	logger := klog.FromContext(ctx)
	if first {
		logger.Info("Resource is not served; the informer probes it with backoff", "gvr", g.gvr, "err", err.Error())
	} else {
		logger.V(4).Info("Resource is still not served", "gvr", g.gvr, "nextProbe", delay)
	}
	return listedBefore
}

// listSucceeded records a page of a list the server answered; the last
// page (no continue token) completes a list of the whole resource.
func (g *servedGuard) listSucceeded(ctx context.Context, list runtime.Object) {
	listMeta, err := metaOfList(list)
	if err != nil || listMeta.GetContinue() != "" {
		g.setNotServed(ctx, false)
		return
	}
	g.mu.Lock()
	g.listed = true
	g.resourceVersion = listMeta.GetResourceVersion()
	g.mu.Unlock()
	g.served(ctx)
}

// served records that the server answered a list of the whole resource
// (or opened a WatchList stream).
func (g *servedGuard) served(ctx context.Context) {
	g.mu.Lock()
	g.listed = true
	g.mu.Unlock()
	g.setNotServed(ctx, false)
	g.state.Listed()
}

func (g *servedGuard) setNotServed(ctx context.Context, notServed bool) {
	g.mu.Lock()
	was := g.notServed
	g.notServed = notServed
	g.mu.Unlock()
	if was && !notServed {
		klog.FromContext(ctx).Info("Resource is served again; the informer relists it", "gvr", g.gvr)
	}
}

func (g *servedGuard) recordError(err error) {
	if apierrors.IsForbidden(err) {
		g.state.Forbidden(err)
		return
	}
	g.state.Failed(err)
}

// probe asks the server for one object of the resource; it reports whether
// the question is settled for now: false means still not served.
func (g *servedGuard) probe(ctx context.Context) bool {
	changed := g.changes()
	_, err := g.source.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		g.markNotServed(ctx, err, changed)
		return false
	}
	if err == nil {
		g.setNotServed(ctx, false)
	}
	return true
}

// park returns a watch that sends nothing until a probe finds the
// resource served (or failing otherwise): then it ends with
// 410 Gone, and the reflector relists.
func (g *servedGuard) park(ctx context.Context) watch.Interface {
	result := make(chan watch.Event, 1)
	w := watch.NewProxyWatcher(result)
	g.goroutines.Go(func() {
		defer close(result)
		if g.waitUntilServed(ctx, w.StopChan()) {
			select {
			case result <- relistEvent("generic: the resource was not served; relist"):
			case <-w.StopChan():
			case <-ctx.Done():
			}
		}
	})
	return w
}

// waitUntilServed probes at the backoff's times until a probe finds the
// resource served; false if stopped or ctx ended first. An informer that
// stops for good never probes.
func (g *servedGuard) waitUntilServed(ctx context.Context, stopped <-chan struct{}) bool {
	for {
		if !g.waitForProbe(ctx, stopped) {
			return false
		}
		if g.probe(ctx) {
			return true
		}
	}
}

// waitForProbe waits until the next probe is due, or the resources
// served changed since the last 404 (then the probes start again from
// changedProbeInitial); false if stopped or ctx ended first. An informer
// that stops for good never probes.
func (g *servedGuard) waitForProbe(ctx context.Context, stopped <-chan struct{}) bool {
	var (
		probeAt <-chan time.Time
		changed <-chan struct{}
	)
	if !g.stoppedForGood() {
		g.mu.Lock()
		timer := time.NewTimer(time.Until(g.nextProbe))
		changed = g.changed
		g.mu.Unlock()
		defer timer.Stop()
		probeAt = timer.C
	}
	select {
	case <-stopped:
		return false
	case <-ctx.Done():
		return false
	case <-probeAt:
		return true
	case <-changed:
		g.probeSoon(ctx)
		return true
	}
}

// probeSoon restarts the probes' backoff from changedProbeInitial: the
// resources the server serves changed, and the resource is likely served
// now or in a moment.
func (g *servedGuard) probeSoon(ctx context.Context) {
	g.mu.Lock()
	g.backoff = g.afterChange()
	g.changed = nil
	g.mu.Unlock()
	klog.FromContext(ctx).V(4).Info("The resources served changed; the informer probes its resource now", "gvr", g.gvr)
}
