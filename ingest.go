package generic

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// ingest is the one path by which every informer's objects reach its
// cache, whatever the source: it turns each object a ListerWatcher delivers
// into T, once, so that the reflector, the cache and the handlers only ever
// see T.
//
// Its contract, the same for a typed REST client, the dynamic client, the
// metadata client or a typed view of a dynamic feed:
//   - per item: an object that cannot be decoded (an *Undecodable from the
//     source) or converted, or is nil, is reported as a *ConversionError
//     naming the resource, its namespace/name where they can be read, and
//     the cause, and left out; every other object of the list or watch goes
//     on, and the informer syncs;
//   - a watch event whose object is bad is skipped and the watch goes on;
//     if the object was known, it leaves the cache as a delete carrying its
//     last good state, taken from the ingest's own record of what it
//     delivered (lastGood), never from the cache, which lags the queue.
//
// Conversion happens here rather than in the informer's TransformFunc
// because client-go fails a whole Replace (the initial list, every relist)
// when the transform fails on one object.
type ingest[T Object] struct {
	inner   cache.ListerWatcherWithContext
	gvr     schema.GroupVersionResource
	convert Converter[T]
	newT    func() T
	report  func(ctx context.Context, err error)
	record  *lastGood[T]
	// goroutines counts the goroutines of the watches it made, so that the
	// informer's Run returns only after they have ended.
	goroutines *sync.WaitGroup
	// watchListUnsupported forwards the inner ListerWatcher's answer, so
	// that the reflector's WatchList decision is the one client-go would
	// make without us in between.
	watchListUnsupported bool
	// shard sets the ShardSelector of every request and filters what
	// comes back by it (shard_ingest.go).
	shard *shardFilter
	// telemetry counts what passes for the informer's sync progress and
	// metrics (metrics_ingest.go); nil counts nothing.
	telemetry *telemetry

	// transform, if not nil, is done to every object converted, before it
	// is recorded or handed on (informer.ingestTransform). It runs here, not
	// in the informer's transform, because the record reads the objects it
	// handed on (their names, from their metadata) while the reflector
	// works on them: an edit of an *unstructured.Unstructured's maps there
	// would be a concurrent map read and write.
	transform func(T) (T, error)

	// listing collects the objects of a paged list until its last page.
	mu      sync.Mutex
	listing *objectSet[T]
}

var (
	errNoName    = errors.New("object has no name")
	errNilObject = errors.New("the source delivered a nil object")
	errNilResult = errors.New("converter returned no object and no error")
	// errNilWatch is a ListerWatcher's Watch that returned neither a watch
	// nor an error; the reflector would panic on it.
	errNilWatch = errors.New("generic: the ListerWatcher's Watch returned no watch and no error")
)

var (
	_ cache.ListerWatcher            = (*ingest[*metav1.PartialObjectMetadata])(nil)
	_ cache.ListerWatcherWithContext = (*ingest[*metav1.PartialObjectMetadata])(nil)
)

func newIngest[T Object](inner cache.ListerWatcher, gvr schema.GroupVersionResource, convert Converter[T], newT func() T, report func(context.Context, error), goroutines *sync.WaitGroup) *ingest[T] {
	return &ingest[T]{
		goroutines:           goroutines,
		inner:                cache.ToListerWatcherWithContext(inner),
		gvr:                  gvr,
		convert:              convert,
		newT:                 newT,
		report:               report,
		record:               newLastGood[T](),
		watchListUnsupported: watchlist.DoesClientNotSupportWatchListSemantics(inner),
		shard:                newShardFilter(nil, ShardByUID),
	}
}

// IsWatchListSemanticsUnSupported is what client-go's reflector asks a
// ListerWatcher before it lists through a watch (WatchList, KEP-3157).
func (in *ingest[T]) IsWatchListSemanticsUnSupported() bool { return in.watchListUnsupported }

func (in *ingest[T]) List(options metav1.ListOptions) (runtime.Object, error) {
	return in.ListWithContext(context.Background(), options)
}

func (in *ingest[T]) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return in.WatchWithContext(context.Background(), options)
}

// ListWithContext lists one page and converts its items. The page's
// ListMeta (resourceVersion, continue token) is kept, so client-go's pager
// and reflector treat the result as the original list. The last page of a
// list replaces the record of last good states.
func (in *ingest[T]) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	shard := in.shard.forListPage(&options)
	list, err := in.inner.ListWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	listMeta, err := metaOfList(list)
	if err != nil {
		return nil, err
	}
	in.shard.checkList(ctx, list, shard)
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return nil, fmt.Errorf("generic: list of %s: %w", in.gvr, err)
	}
	out := &metainternalversion.List{
		ListMeta: metav1.ListMeta{
			ResourceVersion:    listMeta.GetResourceVersion(),
			Continue:           listMeta.GetContinue(),
			RemainingItemCount: listMeta.GetRemainingItemCount(),
		},
		Items: make([]runtime.Object, 0, len(items)),
	}
	page := in.listPage(options.Continue == "", len(items))
	for _, item := range items {
		if key, t, ok := in.convertOne(ctx, item); ok && in.inShard(ctx, shard, t) {
			out.Items = append(out.Items, t)
			page.set(key, t)
		}
	}
	if out.Continue == "" {
		countReplace(in.telemetry, in.record, page)
		in.record.replace(page)
		in.endListing()
		in.shard.listedWith(shard, out.ResourceVersion, page.cacheKeys)
	}
	return out, nil
}

// listPage returns the map that collects the objects of the list a page
// belongs to; the first page starts a new one.
func (in *ingest[T]) listPage(first bool, size int) *objectSet[T] {
	in.mu.Lock()
	defer in.mu.Unlock()
	if first || in.listing == nil {
		in.listing = in.record.newSet(size)
	}
	return in.listing
}

// endListing forgets the list whose last page came.
func (in *ingest[T]) endListing() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.listing = nil
}

func (in *ingest[T]) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	shard, shardChanged, stale := in.shard.forWatch(&options)
	if stale {
		return eventWatch(shardChangedEvent()), nil
	}
	w, err := in.inner.WatchWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	if w == nil || isNilPointer(w) {
		return nil, errNilWatch
	}
	stream := &watchStream[T]{in: in, generation: in.record.current(), shard: shard}
	if options.SendInitialEvents != nil && *options.SendInitialEvents {
		stream.initial = in.record.newSet(0)
	}
	convert := func(event watch.Event) (watch.Event, commitFunc, bool) {
		return stream.convert(ctx, event)
	}
	if in.telemetry != nil {
		convert = in.telemetry.watching(ctx, stream.initial != nil, convert)
	}
	return newConvertingWatch(ctx, in.goroutines, w, shardChanged, convert), nil
}

// convertOne converts one object of a list or watch, reporting a bad one.
func (in *ingest[T]) convertOne(ctx context.Context, obj runtime.Object) (objectKey, T, bool) {
	var zero T
	key := keyOfSource(obj)
	t, err := in.safeConvert(obj)
	switch {
	case err != nil:
	case t == zero || isNilPointer(t):
		err = errNilResult
	case t.GetName() == "":
		// A nameless object has no cache key of its own: it would be stored
		// under "namespace/" and shadow any other nameless one.
		err = errNoName
	}
	if err != nil {
		in.report(ctx, &ConversionError{GVR: in.gvr, Key: key.String(), Err: err})
		return key, zero, false
	}
	if in.transform != nil {
		transformed, err := in.transform(t)
		if err != nil {
			in.report(ctx, &ConversionError{GVR: in.gvr, Key: key.String(), Err: fmt.Errorf("transform: %w", err)})
			return key, zero, false
		}
		t = transformed
	}
	return objectKey{namespace: t.GetNamespace(), name: t.GetName()}, t, true
}

// safeConvert calls the Converter on what a source delivered; nil objects,
// Undecodable ones and a panicking Converter are errors.
func (in *ingest[T]) safeConvert(obj runtime.Object) (t T, err error) {
	if obj == nil || isNilPointer(obj) {
		return t, errNilObject
	}
	if u, ok := obj.(*Undecodable); ok {
		return t, u.Err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("converter panicked: %v", r)
		}
	}()
	return in.convert(obj)
}

// keyOfSource reads the namespace and name of what a source delivered,
// without trusting it to be whole: a nil object, or one whose metadata
// cannot be read, has the zero key.
func keyOfSource(obj runtime.Object) objectKey {
	if obj == nil || isNilPointer(obj) {
		return objectKey{}
	}
	if u, ok := obj.(*Undecodable); ok {
		return objectKey{namespace: u.Namespace, name: u.Name}
	}
	if m, ok := obj.(metav1.Object); ok {
		return objectKey{namespace: m.GetNamespace(), name: m.GetName()}
	}
	return objectKey{}
}

// watchStream converts the events of one watch.
type watchStream[T Object] struct {
	in *ingest[T]
	// generation is the record's generation this watch works in.
	generation uint64
	// initial collects the objects of a WatchList stream's initial events,
	// until the bookmark that ends them; nil for a plain watch.
	initial *objectSet[T]
	// shard is the selection the watch was made with.
	shard shardView
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
	key, t, ok := s.in.convertOne(ctx, event.Object)
	if ok && !s.in.inShard(ctx, s.shard, t) {
		return s.outOfShard(ctx, event, key, t)
	}
	if ok {
		event.Object = t
		if event.Type == watch.Deleted {
			return event, func() func() { return s.removeUndoably(key) }, true
		}
		return event, func() func() { return s.setUndoably(key, t) }, true
	}
	last, known := s.get(key)
	if !known {
		return event, nil, false
	}
	// The object is known and is now bad: serving its outdated state is
	// worse than serving none, and a relist would drop it anyway.
	return watch.Event{Type: watch.Deleted, Object: last}, func() func() { return s.removeUndoably(key) }, true
}

// setUndoably records t under key and returns how to restore what was.
func (s *watchStream[T]) setUndoably(key objectKey, t T) func() {
	prev, had := s.get(key)
	s.set(key, t)
	if had {
		return func() { s.set(key, prev) }
	}
	return func() { s.remove(key) }
}

// removeUndoably forgets key and returns how to restore what was.
func (s *watchStream[T]) removeUndoably(key objectKey) func() {
	prev, had := s.get(key)
	s.remove(key)
	if !had {
		return nil
	}
	return func() { s.set(key, prev) }
}

func (s *watchStream[T]) set(key objectKey, t T) {
	if s.initial != nil {
		s.initial.set(key, t)
		return
	}
	s.in.record.set(s.generation, key, t)
}

func (s *watchStream[T]) remove(key objectKey) {
	if s.initial != nil {
		s.initial.remove(key)
		return
	}
	s.in.record.remove(s.generation, key)
}

func (s *watchStream[T]) get(key objectKey) (T, bool) {
	if s.initial != nil {
		return s.initial.get(key)
	}
	return s.in.record.get(s.generation, key)
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
		s.in.report(ctx, &ConversionError{GVR: s.in.gvr, Err: fmt.Errorf("bookmark: %w", err)})
		return event, nil, false
	}
	var commit commitFunc
	if s.initial != nil && from.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
		commit = func() func() {
			s.in.shard.listedWith(s.shard, from.GetResourceVersion(), s.initial.cacheKeys)
			countReplace(s.in.telemetry, s.in.record, s.initial)
			s.generation = s.in.record.replace(s.initial)
			s.initial = nil
			return nil
		}
	}
	if _, ok := event.Object.(T); ok {
		return event, commit, true
	}
	if s.in.newT == nil {
		s.in.report(ctx, &ConversionError{GVR: s.in.gvr, Err: unexpectedType[T](s.in.gvr.GroupResource(), event.Object)})
		return event, nil, false
	}
	bookmark := s.in.newT()
	bookmark.SetResourceVersion(from.GetResourceVersion())
	bookmark.SetAnnotations(from.GetAnnotations())
	event.Object = bookmark
	return event, commit, true
}

// metaOfList returns a list's ListMeta, or an error naming what the source
// returned instead of a list.
func metaOfList(list runtime.Object) (meta.List, error) {
	if list == nil || isNilPointer(list) {
		return nil, errors.New("generic: the source's List returned no list and no error")
	}
	return meta.ListAccessor(list)
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
// What an event changes in the ingest's record is committed when the event
// enters the buffer, and taken back at Stop for the events the reflector
// left in it: the record then holds exactly what the reflector took, so a
// watch resumed from the reflector's last resourceVersion, which delivers
// those events again, finds it as it was.
type convertingWatch struct {
	inner   watch.Interface
	convert func(watch.Event) (watch.Event, commitFunc, bool)
	// interrupt, when closed, ends the watch with a 410 Gone, so that the
	// reflector relists (the informer's shard changed); nil never does.
	interrupt <-chan struct{}
	result    chan watch.Event
	stopped   chan struct{}
	stopOnce  sync.Once
	// loopDone is closed when the loop's goroutine has ended.
	loopDone chan struct{}

	mu sync.Mutex
	// undos takes back the commits of the last events sent, oldest first;
	// it keeps at least the last resultBuffer.
	undos []func()
}

// resultBuffer is how many converted events may wait for the reflector.
const resultBuffer = 64

func newConvertingWatch(ctx context.Context, goroutines *sync.WaitGroup, inner watch.Interface, interrupt <-chan struct{}, convert func(watch.Event) (watch.Event, commitFunc, bool)) *convertingWatch {
	w := &convertingWatch{
		inner:     inner,
		convert:   convert,
		interrupt: interrupt,
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
		close(w.stopped)
		w.inner.Stop()
	})
}

// undoUntaken takes back, newest first, the commits of the events still
// in the buffer.
func (w *convertingWatch) undoUntaken() {
	w.mu.Lock()
	defer w.mu.Unlock()
	untaken := min(len(w.result), len(w.undos))
	for i := len(w.undos) - 1; i >= len(w.undos)-untaken; i-- {
		if w.undos[i] != nil {
			w.undos[i]()
		}
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
			w.interrupted(ctx)
			return
		}
		out, commit, keep := w.convert(event)
		if !keep {
			continue
		}
		select {
		case w.result <- out:
			w.committed(commit)
		case <-w.stopped:
			return
		case <-ctx.Done():
			w.stop()
			return
		}
	}
}

// interrupted sends the 410 Gone that makes the reflector relist, and ends
// the watch.
func (w *convertingWatch) interrupted(ctx context.Context) {
	select {
	case w.result <- shardChangedEvent():
		w.committed(nil)
	case <-w.stopped:
	case <-ctx.Done():
	}
	w.stop()
}

// committed commits what a sent event changes and keeps how to take it
// back.
func (w *convertingWatch) committed(commit commitFunc) {
	var undo func()
	if commit != nil {
		undo = commit()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.undos = append(w.undos, undo)
	if len(w.undos) >= 2*resultBuffer {
		w.undos = append(w.undos[:0], w.undos[len(w.undos)-resultBuffer:]...)
	}
}

// isNilPointer reports whether v holds a nil pointer (a typed nil in an
// interface), which v == nil does not catch.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
