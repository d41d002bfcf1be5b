package generic

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// requestCounter stands between the ingest and the source, where requests
// go to the server: it counts them and their failures, and the objects of
// the initial list's pages. One function call per request, nothing per
// object.
type requestCounter struct {
	inner                cache.ListerWatcherWithContext
	telemetry            *telemetry
	watchListUnsupported bool
}

var _ cache.ListerWatcherWithContext = (*requestCounter)(nil)

// requests wraps the source lw.
func (t *telemetry) requests(lw cache.ListerWatcher) cache.ListerWatcher {
	return &requestCounter{
		inner:                cache.ToListerWatcherWithContext(lw),
		telemetry:            t,
		watchListUnsupported: watchlist.DoesClientNotSupportWatchListSemantics(lw),
	}
}

// IsWatchListSemanticsUnSupported forwards the source's answer.
func (r *requestCounter) IsWatchListSemanticsUnSupported() bool { return r.watchListUnsupported }

func (r *requestCounter) List(options metav1.ListOptions) (runtime.Object, error) {
	return r.ListWithContext(context.Background(), options)
}

func (r *requestCounter) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return r.WatchWithContext(context.Background(), options)
}

func (r *requestCounter) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	r.telemetry.request(RequestList)
	list, err := r.inner.ListWithContext(ctx, options)
	if err != nil {
		r.telemetry.failed(ctx, RequestList, err)
		return list, err
	}
	if list != nil && !isNilPointer(list) && !r.telemetry.progress.listDone.Load() {
		r.telemetry.progress.receive(ctx, meta.LenList(list))
	}
	return list, nil
}

func (r *requestCounter) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	r.telemetry.request(RequestWatch)
	w, err := r.inner.WatchWithContext(ctx, options)
	if err != nil {
		r.telemetry.failed(ctx, RequestWatch, err)
	}
	return w, err
}

// watching wraps the ingest's conversion of a watch's events: it notes
// each event's arrival, counts the events the ingest hands on by type
// (the initial events of a WatchList stream, sent=true, count as objects
// received instead, and as events when their bookmark replaces the record:
// see countReplace), counts a watch's error event as a failure of the
// watch, and stamps each event for the delivery latency.
func (t *telemetry) watching(ctx context.Context, initialEvents bool, convert func(watch.Event) (watch.Event, commitFunc, bool)) func(watch.Event) (watch.Event, commitFunc, bool) {
	initial := initialEvents
	return func(event watch.Event) (watch.Event, commitFunc, bool) {
		var arrived time.Duration
		if t.clock != nil && !initial {
			arrived = t.clock.arrival()
		}
		out, commit, keep := convert(event)
		switch event.Type {
		case watch.Error:
			t.failed(ctx, RequestWatch, apierrors.FromObject(event.Object))
		case watch.Bookmark:
			if initial && keep && endsInitialEvents(out.Object) {
				initial = false
			}
		default:
			if initial {
				t.progress.receive(ctx, 1)
				break
			}
			if !keep {
				break
			}
			switch out.Type {
			case watch.Added:
				t.events(EventAdd, 1)
			case watch.Modified:
				t.events(EventUpdate, 1)
			case watch.Deleted:
				t.events(EventDelete, 1)
			}
			if t.clock != nil {
				t.clock.stamp(out.Object, arrived)
			}
		}
		return out, commit, keep
	}
}

// endsInitialEvents reports whether a bookmark ends a WatchList stream's
// initial events.
func endsInitialEvents(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

// countReplace counts what the informer will deliver when next, a complete
// list or a WatchList stream's initial events, replaces the ingest's
// record of what it delivered: an add for each object the record does not
// hold, an update for each it holds, a tombstone for each it holds that
// next does not. The informer's store is what the record says (it lags it,
// never leads it), so these are the events client-go's Replace hands to
// the handlers. It also counts the list, a relist if not the first. Call
// it before the replace.
func countReplace[T Object](t *telemetry, record *lastGood[T], next *objectSet[T]) {
	if t == nil {
		return
	}
	t.listed()
	if t.metrics.Load() == nil {
		return
	}
	record.mu.Lock()
	old := record.objects
	held := 0
	for _, obj := range next.objects {
		if _, ok := old.get(objectKey{namespace: obj.GetNamespace(), name: obj.GetName()}); ok {
			held++
		}
	}
	for key := range next.overflow {
		if _, ok := old.get(key); ok {
			held++
		}
	}
	before := len(old.objects) + len(old.overflow)
	record.mu.Unlock()
	t.events(EventAdd, len(next.objects)+len(next.overflow)-held)
	t.events(EventUpdate, held)
	t.events(EventTombstone, before-held)
}
