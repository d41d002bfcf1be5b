package listwatch

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// requestCounter stands between the ingest and the source, where requests
// go to the server: it tells the Meter of them and of their failures, and
// of the objects of the initial list's pages. One function call per
// request, nothing per object.
type requestCounter struct {
	// lw is the counter as the ingest and the served guard's probes see it.
	lw    cache.ListerWatcher
	inner cache.ListerWatcherWithContext
	meter Meter
}

func newRequestCounter(source cache.ListerWatcher, meter Meter) *requestCounter {
	r := &requestCounter{inner: cache.ToListerWatcherWithContext(source), meter: meter}
	r.lw = stage(source, r.list, r.watch)
	return r
}

func (r *requestCounter) list(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	r.meter.Request(false)
	list, err := r.inner.ListWithContext(ctx, options)
	if err != nil {
		r.meter.RequestFailed(ctx, false, err)
		return list, err
	}
	if list != nil && !isNilPointer(list) && r.meter.ReceivingInitialList() {
		r.meter.Received(ctx, meta.LenList(list))
	}
	return list, nil
}

func (r *requestCounter) watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	r.meter.Request(true)
	w, err := r.inner.WatchWithContext(ctx, options)
	if err != nil {
		r.meter.RequestFailed(ctx, true, err)
	}
	return w, err
}

// metered wraps the ingest's conversion of a watch's events: it notes
// each event's arrival, tells the Meter of the events the ingest hands on
// by type (the initial events of a WatchList stream, initialEvents, count
// as objects received instead, and as events when their bookmark replaces
// the record: see ingest.replaceRecord), of a watch's error event as a
// failure of the watch, and stamps each event for the delivery latency.
func metered(ctx context.Context, m Meter, initialEvents bool, convert func(watch.Event) (watch.Event, commitFunc, bool)) func(watch.Event) (watch.Event, commitFunc, bool) {
	initial := initialEvents
	return func(event watch.Event) (watch.Event, commitFunc, bool) {
		var arrived time.Duration
		if !initial {
			arrived = m.Arrival()
		}
		out, commit, keep := convert(event)
		switch event.Type {
		case watch.Error:
			m.RequestFailed(ctx, true, apierrors.FromObject(event.Object))
		case watch.Bookmark:
			if initial && keep && endsInitialEvents(out.Object) {
				initial = false
			}
		default:
			if initial {
				m.Received(ctx, 1)
				break
			}
			if !keep {
				break
			}
			switch out.Type {
			case watch.Added:
				m.Events(1, 0, 0, 0)
			case watch.Modified:
				m.Events(0, 1, 0, 0)
			case watch.Deleted:
				m.Events(0, 0, 1, 0)
			default:
				return out, commit, keep // a bookmark in the place of an object outside the shard
			}
			m.Stamp(out.Object, arrived)
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
