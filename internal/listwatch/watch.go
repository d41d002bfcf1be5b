package listwatch

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// watchStream converts the events of one watch.
type watchStream[T Object] struct {
	in *ingest[T]
	// generation is the record's generation this watch works in.
	generation uint64
	// initial collects the objects of a WatchList stream's initial events,
	// until the bookmark that ends them; nil for a plain watch.
	initial *objectSet[Stored]
	// shard is the selection the watch was made with.
	shard view
}

// commitFunc records what a delivered event changes in the ingest's
// record, and returns how to take it back (nil: nothing to take back).
type commitFunc func() (undo func())

// convert converts the object of one watch event. It returns the event to
// deliver, what to record once it is delivered, and false to skip it.
// Errors pass through untouched (their object is a *metav1.Status).
func (s *watchStream[T]) convert(ctx context.Context, event watch.Event) (watch.Event, commitFunc, bool) {
	switch event.Type {
	case watch.Error:
		return event, nil, true
	case watch.Bookmark:
		return s.convertBookmark(ctx, event)
	}
	key, t, err := s.in.convertOne(ctx, event.Object)
	if err != nil {
		return s.turnedBad(event, key, err)
	}
	if !s.in.inShard(ctx, s.shard, t) {
		return s.outOfShard(event, key, t)
	}
	{
		stored := s.in.stored(t)
		event.Object = stored
		if event.Type == watch.Deleted {
			return event, func() func() { return s.removeUndoably(key) }, true
		}
		return event, func() func() { return s.setUndoably(key, stored) }, true
	}
}

// turnedBad handles a watch event whose object did not decode, convert or
// transform (stale.go): an object the informer does not hold is skipped;
// a delete of one it holds is delivered, with its last good state at the
// delete's resourceVersion; any other event keeps the last good state and
// marks it stale, and is handed on as a bookmark at its resourceVersion
// (in a WatchList stream's initial events, as the last good state, which
// the relist then keeps). A last good state that may not stand for the
// object (mayKeep: outside the watch's selection, or another object of its
// name) is not kept: a WatchList stream's initial events leave it out (the
// relist drops it), and a plain watch delivers its delete, as outOfShard
// does.
func (s *watchStream[T]) turnedBad(event watch.Event, key cache.ObjectName, err error) (watch.Event, commitFunc, bool) {
	last, known := s.lastGoodOf(key)
	if !known {
		return event, nil, false
	}
	why := staleOf(event.Object, err)
	if !s.in.mayKeep(s.shard, event.Object, last) {
		if s.initial != nil {
			return event, nil, false
		}
		event.Type = watch.Deleted
	}
	if event.Type == watch.Deleted {
		gone := atResourceVersion(last, why.resourceVersion)
		return watch.Event{Type: watch.Deleted, Object: gone}, func() func() { return s.removeUndoably(key) }, true
	}
	if s.initial != nil {
		return watch.Event{Type: watch.Added, Object: last}, func() func() { return s.keepStaleUndoably(key, last, why) }, true
	}
	bookmark, _, ok := s.bookmarkAt(why.resourceVersion)
	if !ok {
		s.keepStaleUndoably(key, last, why)
		return event, nil, false
	}
	return bookmark, func() func() { return s.keepStaleUndoably(key, last, why) }, true
}

// lastGoodOf returns the last good state of key the informer holds: in a
// WatchList stream's initial events, the one they delivered, or else the
// one the record holds (the relist keeps it); otherwise the record's.
func (s *watchStream[T]) lastGoodOf(key cache.ObjectName) (Stored, bool) {
	if last, ok := s.get(key); ok || s.initial == nil {
		return last, ok
	}
	return s.in.record.latest(key)
}

// keepStaleUndoably records last, the last good state of key, as stale
// for why, and returns how to restore what was.
func (s *watchStream[T]) keepStaleUndoably(key cache.ObjectName, last Stored, why staleErr) func() {
	prev, had := s.get(key)
	was, wasStale := s.staleness(key)
	if !had {
		s.set(key, last)
	}
	since := time.Now()
	if wasStale {
		since = was.Since
	} else if st, ok := s.in.record.latestStaleness(key); ok && s.initial != nil {
		since = st.Since // a relist's initial events keep the record's
	}
	s.markStale(key, why, since)
	return func() {
		if had {
			s.set(key, prev)
			s.restoreStale(key, was, wasStale)
		} else {
			s.remove(key)
		}
	}
}

// setUndoably records t under key and returns how to restore what was.
func (s *watchStream[T]) setUndoably(key cache.ObjectName, t Stored) func() {
	prev, had := s.get(key)
	was, wasStale := s.staleness(key)
	s.set(key, t)
	if had {
		return func() { s.set(key, prev); s.restoreStale(key, was, wasStale) }
	}
	return func() { s.remove(key) }
}

// removeUndoably forgets key and returns how to restore what was.
func (s *watchStream[T]) removeUndoably(key cache.ObjectName) func() {
	prev, had := s.get(key)
	was, wasStale := s.staleness(key)
	s.remove(key)
	if !had {
		return nil
	}
	return func() { s.set(key, prev); s.restoreStale(key, was, wasStale) }
}

func (s *watchStream[T]) set(key cache.ObjectName, t Stored) {
	if s.initial != nil {
		s.initial.set(key, t)
		return
	}
	s.in.record.set(s.generation, key, t)
}

func (s *watchStream[T]) remove(key cache.ObjectName) {
	if s.initial != nil {
		s.initial.remove(key)
		return
	}
	s.in.record.remove(s.generation, key)
}

func (s *watchStream[T]) get(key cache.ObjectName) (Stored, bool) {
	if s.initial != nil {
		return s.initial.get(key)
	}
	return s.in.record.get(s.generation, key)
}

func (s *watchStream[T]) markStale(key cache.ObjectName, why staleErr, since time.Time) {
	if s.initial != nil {
		s.initial.markStale(key, why, since)
		return
	}
	s.in.record.markStale(s.generation, key, why, since)
}

func (s *watchStream[T]) staleness(key cache.ObjectName) (Staleness, bool) {
	if s.initial != nil {
		return s.initial.staleness(key)
	}
	return s.in.record.staleness(s.generation, key)
}

func (s *watchStream[T]) restoreStale(key cache.ObjectName, was Staleness, ok bool) {
	if s.initial != nil {
		s.initial.restoreStale(key, was, ok)
		return
	}
	s.in.record.restoreStale(s.generation, key, was, ok)
}

// convertBookmark passes a bookmark on as a T (bookmarks carry only a
// resourceVersion and annotations). The bookmark that ends a WatchList
// stream's initial events makes them the record.
//
// That replacement is not taken back if the bookmark is not consumed: the
// reflector then did not finish its WatchList and lists again, which
// replaces the record anyway.
func (s *watchStream[T]) convertBookmark(ctx context.Context, event watch.Event) (watch.Event, commitFunc, bool) {
	from, err := meta.Accessor(event.Object)
	if err == nil && isNilPointer(event.Object) {
		err = errNilObject
	}
	if err != nil {
		s.in.reject(ctx, "", fmt.Errorf("bookmark: %w", err))
		return event, nil, false
	}
	var commit commitFunc
	if s.initial != nil && from.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
		commit = func() func() {
			s.in.shard.listedWith(s.shard, from.GetResourceVersion(), s.initial.cacheKeys)
			s.generation = s.in.replaceRecord(s.initial)
			s.initial = nil
			return nil
		}
	}
	if _, ok := event.Object.(T); ok {
		return event, commit, true
	}
	if s.in.newT == nil {
		s.in.reject(ctx, "", fmt.Errorf("%w: bookmark of %s is a %T, not a %T", s.in.unexpectedType, s.in.gvr, event.Object, *new(T)))
		return event, nil, false
	}
	bookmark := s.in.newT()
	bookmark.SetResourceVersion(from.GetResourceVersion())
	bookmark.SetAnnotations(from.GetAnnotations())
	event.Object = bookmark
	return event, commit, true
}

// convertingWatch applies a function to every event of a watch.
//
// It is apimachinery's watch.Filter with these differences that matter to
// us: its goroutine also ends when Stop is called while nobody reads the
// result channel (the reflector stops a watch without draining it), where
// watch.Filter's goroutine would block on its send forever; it ends when
// the watch's context does, counted in a WaitGroup that the informer's Run
// waits for; and its result channel is buffered, so that converting an
// event and the reflector's handling of the one before overlap instead of
// handing over one event at a time (the hand-over cost the typed ingest
// about 1.4x client-go in BenchmarkIngest).
//
// What an event changes in the ingest's record is committed just before
// the event enters the buffer (taken back at once if it does not enter
// it), so that the record is never behind what the reflector, and so the
// cache, may have taken (a WaitForWrite reads the record's staleness once
// the cache has applied the event); and it is taken back at Stop for the
// events the reflector left in the buffer: the record then holds exactly
// what the reflector took, so a watch resumed from the reflector's last
// resourceVersion, which delivers those events again, finds it as it was.
type convertingWatch struct {
	inner   watch.Interface
	convert func(watch.Event) (watch.Event, commitFunc, bool)
	// interrupt is closed when the informer's selection changes (a
	// reshard step); nil never is. reselect then moves the watch to the
	// new selection (reselect.go); if it is nil or fails, the watch ends
	// with a 410 Gone, so that the reflector relists.
	interrupt <-chan struct{}
	reselect  func(ctx context.Context) (watch.Interface, <-chan struct{}, []pending, error)
	result    chan watch.Event
	stopped   chan struct{}
	stopOnce  sync.Once
	// loopDone is closed when the loop's goroutine has ended.
	loopDone chan struct{}

	mu sync.Mutex
	// undos takes back the commits of the last events sent, oldest first,
	// and of the one being sent; it keeps at least the last
	// resultBuffer+1.
	undos []sent
	// handed is the chain's newest resourceVersion handed on, which the
	// events sent advance and undoUntaken takes back.
	handed *handedOn
	// innerMu guards inner, which reselect replaces.
	innerMu sync.Mutex
}

// resultBuffer is how many converted events may wait for the reflector.
const resultBuffer = 64

// sent is what an event sent changed: how to take back its commit (nil:
// nothing), and the newest resourceVersion handed on before it, if it
// advanced it.
type sent struct {
	undo       func()
	advanced   bool
	handedFrom string
}

// takeBack takes back what s changed.
func (s sent) takeBack(handed *handedOn) {
	if s.undo != nil {
		s.undo()
	}
	if s.advanced {
		handed.rollback(s.handedFrom)
	}
}

func newConvertingWatch(ctx context.Context, goroutines *sync.WaitGroup, handed *handedOn, inner watch.Interface, interrupt <-chan struct{}, convert func(watch.Event) (watch.Event, commitFunc, bool), reselect func(context.Context) (watch.Interface, <-chan struct{}, []pending, error)) *convertingWatch {
	w := &convertingWatch{
		handed:    handed,
		inner:     inner,
		convert:   convert,
		interrupt: interrupt,
		reselect:  reselect,
		result:    make(chan watch.Event, resultBuffer),
		stopped:   make(chan struct{}),
		loopDone:  make(chan struct{}),
	}
	goroutines.Go(func() { w.loop(ctx) })
	return w
}

func (w *convertingWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch, and takes back the commits of the events the
// reflector did not take. The reflector calls it once it has stopped
// reading.
func (w *convertingWatch) Stop() {
	w.stop()
	<-w.loopDone
	w.undoUntaken()
}

func (w *convertingWatch) stop() {
	w.stopOnce.Do(func() {
		w.innerMu.Lock()
		defer w.innerMu.Unlock()
		close(w.stopped)
		w.inner.Stop()
	})
}

// swapInner makes inner the watch read from now on and stops the one
// before; it reports false, stopping inner, if the watch was stopped.
func (w *convertingWatch) swapInner(inner watch.Interface) bool {
	w.innerMu.Lock()
	defer w.innerMu.Unlock()
	select {
	case <-w.stopped:
		inner.Stop()
		return false
	default:
	}
	w.inner.Stop()
	w.inner = inner
	return true
}

// undoUntaken takes back, newest first, the commits of the events still
// in the buffer.
func (w *convertingWatch) undoUntaken() {
	w.mu.Lock()
	defer w.mu.Unlock()
	untaken := min(len(w.result), len(w.undos))
	for i := len(w.undos) - 1; i >= len(w.undos)-untaken; i-- {
		w.undos[i].takeBack(w.handed)
	}
	w.undos = nil
}

func (w *convertingWatch) loop(ctx context.Context) {
	defer close(w.loopDone)
	defer close(w.result)
	in := w.inner.ResultChan()
	for {
		var event watch.Event
		var ok bool
		select {
		case event, ok = <-in:
			if !ok {
				return
			}
		case <-w.stopped:
			return
		case <-ctx.Done():
			w.stop()
			return
		case <-w.interrupt:
			if !w.moved(ctx) {
				w.interrupted(ctx)
				return
			}
			in = w.inner.ResultChan()
			continue
		}
		out, commit, keep := w.convert(event)
		if !keep {
			continue
		}
		if !w.send(ctx, out, commit) {
			return
		}
	}
}

// send commits what event changes and puts it in the buffer; if the watch
// is stopped or its context ends first, it takes the commit back and
// reports false.
func (w *convertingWatch) send(ctx context.Context, event watch.Event, commit commitFunc) bool {
	w.committed(event, commit)
	select {
	case w.result <- event:
		return true
	case <-w.stopped:
	case <-ctx.Done():
		w.stop()
	}
	w.takeBackLast()
	return false
}

// takeBackLast takes back the last commit, whose event was not sent.
func (w *convertingWatch) takeBackLast() {
	w.mu.Lock()
	defer w.mu.Unlock()
	last := len(w.undos) - 1
	w.undos[last].takeBack(w.handed)
	w.undos = w.undos[:last]
}

// moved moves the watch to the informer's new selection (reselect), and
// sends the events that take the informer there; it reports false if it
// could not (the watch then ends with a 410 Gone), or was stopped.
func (w *convertingWatch) moved(ctx context.Context) bool {
	if w.reselect == nil {
		return false
	}
	inner, interrupt, events, err := w.reselect(ctx)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("The watch could not move to the informer's new shard; the informer relists", "err", err)
		return false
	}
	if !w.swapInner(inner) {
		return false
	}
	w.interrupt = interrupt
	for _, e := range events {
		if !w.send(ctx, e.event, e.commit) {
			return false
		}
	}
	return true
}

// interrupted sends the 410 Gone that makes the reflector relist, and ends
// the watch.
func (w *convertingWatch) interrupted(ctx context.Context) {
	w.send(ctx, relistEvent(shardChangedMessage), nil)
	w.stop()
}

// committed commits what an event about to be sent changes, advances the
// newest resourceVersion handed on by its object's, and keeps how to take
// both back: with the events in the buffer, at most resultBuffer+1
// may be taken back.
func (w *convertingWatch) committed(event watch.Event, commit commitFunc) {
	var s sent
	if commit != nil {
		s.undo = commit()
	}
	switch event.Type {
	case watch.Added, watch.Modified, watch.Deleted:
		// An object's resourceVersion, not a bookmark's (handedon.go).
		s.advanced, s.handedFrom = true, w.handed.advance(resourceVersionOf(event.Object))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.undos = append(w.undos, s)
	if len(w.undos) >= 2*resultBuffer {
		w.undos = append(w.undos[:0], w.undos[len(w.undos)-resultBuffer-1:]...)
	}
}
