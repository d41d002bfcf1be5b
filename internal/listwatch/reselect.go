package listwatch

import (
	"context"
	"errors"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// A change of the informer's selection (a reshard step) takes effect in
// the watch the reflector holds, without a relist: the watch lists the new
// selection, hands on what differs from what the informer holds (the
// record), then a bookmark at the list's resourceVersion, and watches the
// new selection from there (reselect). The reflector would otherwise
// relist, and client-go's reflector waits before each relist by its
// backoff, which doubles from 0.8 s to 30 s (and up to twice that with
// jitter) while relists come less than 2 minutes apart: each step of a
// membership's reshard would wait longer than the last.
//
// A watch that cannot move so (a WatchList stream still in its initial
// events, a list or watch that fails, a list without a resourceVersion)
// ends with a 410 Gone, and the reflector relists as before.

// pending is an event reselect hands on, and what it changes in the record.
type pending struct {
	event  watch.Event
	commit commitFunc
}

var (
	errInitialEvents = errors.New("the WatchList stream is still in its initial events")
	errNoListRV      = errors.New("the list has no resourceVersion")
)

// reselect moves the watch to the selection the informer asks for now: it
// returns the events that take the informer from what the record holds to
// the new selection's list (an add for each object the record does not
// hold, an update for each whose resourceVersion changed, a delete
// carrying the last state for each the list does not hold, and a bookmark
// at the list's resourceVersion, whose commit records the list as the
// last one, for a reshard's wait), the watch of the new selection from the
// list's resourceVersion, and the channel closed when the selection
// changes again. options are those of the watch it replaces.
func (s *watchStream[T]) reselect(ctx context.Context, options metav1.ListOptions) (watch.Interface, <-chan struct{}, []pending, error) {
	if s.initial != nil {
		return nil, nil, nil, errInitialEvents
	}
	v, changed := s.in.shard.current()
	next, rv, err := s.listSelection(ctx, v)
	if err != nil {
		return nil, nil, nil, err
	}
	events := s.changesTo(next)
	bookmark, _, ok := s.bookmarkAt(rv)
	if !ok {
		return nil, nil, nil, errNoListRV
	}
	events = append(events, pending{event: bookmark, commit: func() func() {
		s.in.shard.listedWith(v, rv, next.cacheKeys)
		return nil
	}})
	events[0].commit = s.alsoStale(next.staleObjects(), events[0].commit)
	options.ResourceVersion, options.ShardSelector = rv, v.shardSelector()
	options.SendInitialEvents, options.ResourceVersionMatch = nil, ""
	w, err := s.in.inner.WatchWithContext(ctx, options)
	if err == nil && (w == nil || isNilPointer(w)) {
		err = errNilWatch
	}
	if err != nil {
		return nil, nil, nil, err
	}
	s.shard = v
	return w, changed, events, nil
}

// alsoStale returns commit, preceded by marking stale the objects of stale
// the record holds: those the list holds at their last good state (their
// listed state did not convert), which no event changes, since the record
// holds that state already. They are stale from the first event on, before
// the cache can reach the resourceVersion of a state that did not convert.
// Its undo takes both back.
func (s *watchStream[T]) alsoStale(stale []Staleness, commit commitFunc) commitFunc {
	if len(stale) == 0 {
		return commit
	}
	return func() func() {
		var undos []func()
		for _, st := range stale {
			if _, held := s.get(st.Key); !held {
				continue
			}
			was, wasStale := s.staleness(st.Key)
			s.markStale(st.Key, staleErr{resourceVersion: st.ResourceVersion, err: st.Err}, st.Since)
			undos = append(undos, func() { s.restoreStale(st.Key, was, wasStale) })
		}
		if commit != nil {
			if undo := commit(); undo != nil {
				undos = append(undos, undo)
			}
		}
		return func() {
			for _, undo := range slices.Backward(undos) {
				undo()
			}
		}
	}
}

// listSelection lists selection v, as the informer's list would (its
// source's namespace and selectors, converted and kept to v), and returns
// what it holds and its resourceVersion.
func (s *watchStream[T]) listSelection(ctx context.Context, v view) (*objectSet[Stored], string, error) {
	list, err := s.in.inner.ListWithContext(ctx, metav1.ListOptions{ShardSelector: v.shardSelector()})
	if err != nil {
		return nil, "", err
	}
	listMeta, items, err := s.in.itemsOf(ctx, list, v)
	if err != nil {
		return nil, "", err
	}
	next := s.in.record.newSet(len(items))
	s.in.keep(ctx, items, v, next, nil)
	if listMeta.GetResourceVersion() == "" {
		return nil, "", errNoListRV
	}
	return next, listMeta.GetResourceVersion(), nil
}

// changesTo returns the events that make what the record holds next, and
// counts them in the informer's metrics.
func (s *watchStream[T]) changesTo(next *objectSet[Stored]) []pending {
	var events []pending
	var added, updated, deleted int
	next.each(func(key cache.ObjectName, t Stored) {
		held, known := s.get(key)
		switch {
		case !known:
			added++
			events = append(events, pending{event: watch.Event{Type: watch.Added, Object: t}, commit: func() func() { return s.setUndoably(key, t) }})
		case held.GetResourceVersion() != t.GetResourceVersion():
			updated++
			events = append(events, pending{event: watch.Event{Type: watch.Modified, Object: t}, commit: func() func() { return s.setUndoably(key, t) }})
		}
	})
	s.in.record.each(s.generation, func(key cache.ObjectName, held Stored) {
		if _, kept := next.get(key); !kept {
			deleted++
			events = append(events, pending{event: watch.Event{Type: watch.Deleted, Object: held}, commit: func() func() { return s.removeUndoably(key) }})
		}
	})
	s.in.meter.Events(added, updated, deleted, 0)
	inResourceVersionOrder(events)
	return events
}

// inResourceVersionOrder orders events by the resourceVersion of their
// objects, oldest first (the deletes, which carry the last state
// delivered, come before the adds and updates of what the watch had not
// delivered): the cache's resourceVersion is that of the last event it
// applied, and a cache at N must have applied every event of the step
// before N, or a read-your-writes wait for N (WaitForResourceVersion,
// WaitForWrite) would end while an object written before N is still
// missing from it. Resource versions that cannot be ordered keep their
// order.
func inResourceVersionOrder(events []pending) {
	slices.SortStableFunc(events, func(a, b pending) int {
		order, err := resourceversion.CompareResourceVersion(resourceVersionOf(a.event.Object), resourceVersionOf(b.event.Object))
		if err != nil {
			return 0
		}
		return order
	})
}
