package listwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ingest is the one path by which every informer's objects reach its
// cache, whatever the source: it turns each object a ListerWatcher delivers
// into T, once, so that the reflector, the cache and the handlers only ever
// see T.
//
// Its contract, the same for a typed REST client, the dynamic client, the
// metadata client or a typed view of a dynamic feed:
//   - per item: an object that cannot be decoded (a source's stand-in for
//     it, see Undecodable) or converted, or is nil, is rejected (Hooks.Reject)
//     naming its namespace/name where they can be read, and the cause, and
//     left out; every other object of the list or watch goes on, and the
//     informer syncs;
//   - a watch event whose object is bad is skipped and the watch goes on;
//     if the object was known, it keeps its last good state, marked stale
//     (stale.go), taken from the ingest's own record of what it delivered
//     (lastGood), never from the cache, which lags the queue: a delete is a
//     fact from the server, never an inference from an error.
//
// Conversion happens here rather than in the informer's TransformFunc
// because client-go fails a whole Replace (the initial list, every relist)
// when the transform fails on one object.
type ingest[T Object] struct {
	// lw is the ingest as the stage above sees it.
	lw    cache.ListerWatcher
	inner cache.ListerWatcherWithContext
	gvr   schema.GroupVersionResource
	// convert, newT and transform are Config's.
	convert   func(runtime.Object) (T, error)
	newT      func() T
	transform func(T) (T, error)
	// store is Config.Store: nil hands on the objects themselves.
	store func(T) Stored
	// unexpectedType is wrapped by the errors of objects of another type.
	unexpectedType error
	reject         func(ctx context.Context, key string, err error)
	meter          Meter
	// record holds what was handed on of each object: the object, or
	// what Store made of it.
	record *lastGood[Stored]
	// handed is the newest resourceVersion handed on.
	handed handedOn
	// goroutines counts the goroutines of the watches it made, so that the
	// informer's Run returns only after they have ended.
	goroutines *sync.WaitGroup
	// shard sets the ShardSelector of every request and filters what
	// comes back by it (shard.go).
	shard *shardFilter

	// listing collects the objects of a paged list until its last page.
	mu      sync.Mutex
	listing *objectSet[Stored]
}

var (
	errNoName    = errors.New("object has no name")
	errNilObject = errors.New("the source delivered a nil object")
	errNilResult = errors.New("converter returned no object and no error")
	// errNilWatch is a ListerWatcher's Watch that returned neither a watch
	// nor an error; the reflector would panic on it.
	errNilWatch = errors.New("generic: the ListerWatcher's Watch returned no watch and no error")
)

func newIngest[T Object](inner cache.ListerWatcher, c Config[T], h Hooks, shard *shardFilter, goroutines *sync.WaitGroup) *ingest[T] {
	in := &ingest[T]{
		goroutines:     goroutines,
		inner:          cache.ToListerWatcherWithContext(inner),
		gvr:            c.GVR,
		convert:        c.Convert,
		newT:           c.NewT,
		transform:      c.Transform,
		store:          c.Store,
		unexpectedType: c.UnexpectedType,
		reject:         h.Reject,
		meter:          h.Meter,
		record:         newLastGood(c.EncodedSize),
		shard:          shard,
	}
	in.lw = stage(inner, in.list, in.watch)
	return in
}

// list lists one page and converts its items. The page's ListMeta
// (resourceVersion, continue token) is kept, so client-go's pager and
// reflector treat the result as the original list. The last page of a
// list replaces the record of last good states.
func (in *ingest[T]) list(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	shard := in.shard.forListPage(&options)
	list, err := in.inner.ListWithContext(ctx, options)
	if err != nil {
		in.shard.listFailed()
		return nil, err
	}
	listMeta, items, err := in.itemsOf(ctx, list, shard)
	if err != nil {
		in.shard.listFailed()
		return nil, err
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
	in.keep(ctx, items, shard, page, func(stored Stored) { out.Items = append(out.Items, stored) })
	in.handed.advance(newestOf(out.Items)) // once a page, not once an object
	if out.Continue == "" {
		in.replaceRecord(page)
		in.endListing()
		in.shard.listedWith(shard, out.ResourceVersion, page.cacheKeys)
	}
	return out, nil
}

// itemsOf returns the ListMeta and items of a list response to a request
// made with selection v, and notices one that ignored the selector.
func (in *ingest[T]) itemsOf(ctx context.Context, list runtime.Object, v view) (meta.List, []runtime.Object, error) {
	listMeta, err := metaOfList(list)
	if err != nil {
		return nil, nil, err
	}
	in.shard.checkList(ctx, list, v)
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
		return nil, nil, fmt.Errorf("generic: list of %s: %w", in.gvr, err)
	}
	return listMeta, items, nil
}

// keep converts the items of a list made with selection v into set, in
// order, and calls each (if not nil) with what is stored of every object
// kept: each that converted and belongs to v, and the last good state of
// each the informer holds whose listed state did not convert (kept stale,
// stale.go: a relist never drops an object the server still has).
func (in *ingest[T]) keep(ctx context.Context, items []runtime.Object, v view, set *objectSet[Stored], each func(Stored)) {
	for _, item := range items {
		key, t, err := in.convertOne(ctx, item)
		var stored Stored
		switch {
		case err != nil:
			last, ok := in.record.latest(key)
			if !ok || !in.mayKeep(v, item, last) {
				continue
			}
			stored = last
			set.set(key, last)
			set.markStale(key, staleOf(item, err), in.record.staleSince(key))
		case in.inShard(ctx, v, t):
			stored = in.stored(t)
			set.set(key, stored)
		default:
			continue
		}
		if each != nil {
			each(stored)
		}
	}
}

// stored is what the chain records and hands on of t (Config.Store).
func (in *ingest[T]) stored(t T) Stored {
	if in.store == nil {
		return t
	}
	return in.store(t)
}

// listPage returns the map that collects the objects of the list a page
// belongs to; the first page starts a new one.
func (in *ingest[T]) listPage(first bool, size int) *objectSet[Stored] {
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

// replaceRecord makes next, a complete list or a WatchList stream's
// initial events, the record of what the ingest delivered, and returns the
// record's new generation. Before, it counts what the informer will
// deliver for it: an add for each object the record does not hold, an
// update for each it holds, a tombstone for each it holds that next does
// not. The informer's store is what the record says (it lags it, never
// leads it), so these are the events client-go's Replace hands to the
// handlers.
func (in *ingest[T]) replaceRecord(next *objectSet[Stored]) uint64 {
	in.meter.CompleteList()
	if in.meter.CountsEvents() {
		held, before := in.record.overlap(next)
		in.meter.Events(next.len()-held, held, 0, before-held)
	}
	return in.record.replace(next)
}

// forget empties the record of what the ingest delivered, in a generation
// of its own: the reflector takes an empty list in the place of the
// objects (the served guard's, for a resource the server no longer
// serves). No object of before then is the last good state of one listed
// later: a custom resource whose CRD was deleted and installed again, and
// whose new state does not decode, is not the one deleted with the CRD.
func (in *ingest[T]) forget() { in.record.replace(in.record.newSet(0)) }

func (in *ingest[T]) watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	shard, shardChanged := in.shard.forWatch(&options)
	initialEvents := options.SendInitialEvents != nil && *options.SendInitialEvents
	w, err := in.inner.WatchWithContext(ctx, options)
	if err != nil {
		if initialEvents { // a WatchList stream: the list failed
			in.shard.listFailed()
		}
		return nil, err
	}
	if w == nil || isNilPointer(w) {
		return nil, errNilWatch
	}
	stream := &watchStream[T]{in: in, generation: in.record.current(), shard: shard}
	if initialEvents {
		stream.initial = in.record.newSet(0)
	}
	convert := metered(ctx, in.meter, stream.initial != nil, func(event watch.Event) (watch.Event, commitFunc, bool) {
		return stream.convert(ctx, event)
	})
	reselect := func(ctx context.Context) (watch.Interface, <-chan struct{}, []pending, error) {
		return stream.reselect(ctx, options)
	}
	return newConvertingWatch(ctx, in.goroutines, &in.handed, w, shardChanged, convert, reselect), nil
}

// convertOne converts one object of a list or watch, rejecting a bad one:
// it returns the object's key (the zero key if none can be read), and the
// T, or why there is none.
func (in *ingest[T]) convertOne(ctx context.Context, obj runtime.Object) (cache.ObjectName, T, error) {
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
	if err == nil && in.transform != nil {
		var transformed T
		if transformed, err = in.transform(t); err != nil {
			err = fmt.Errorf("transform: %w", err)
		}
		t = transformed
	}
	if err != nil {
		in.rejectKey(ctx, key, err)
		return key, zero, err
	}
	return cache.ObjectName{Namespace: t.GetNamespace(), Name: t.GetName()}, t, nil
}

// rejectKey rejects the object of key; the zero key is no key.
func (in *ingest[T]) rejectKey(ctx context.Context, key cache.ObjectName, err error) {
	var name string
	if key != (cache.ObjectName{}) {
		name = key.String()
	}
	in.reject(ctx, name, err)
}

// safeConvert calls the converter on what a source delivered; nil objects,
// undecodable ones and a panicking converter are errors.
func (in *ingest[T]) safeConvert(obj runtime.Object) (t T, err error) {
	if obj == nil || isNilPointer(obj) {
		return t, errNilObject
	}
	if u, ok := obj.(Undecodable); ok {
		return t, u.Unwrap()
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("converter panicked: %v", r)
		}
	}()
	return in.convert(obj)
}

// Undecodable is what a source delivers in the place of an object it could
// not decode (the root package's *Undecodable): its error, and the
// namespace and name read from its raw bytes, where they could be read.
type Undecodable interface {
	runtime.Object
	Unwrap() error
	ObjectName() cache.ObjectName
}

// keyOfSource reads the namespace and name of what a source delivered,
// without trusting it to be whole: a nil object, or one whose metadata
// cannot be read, has the zero key.
func keyOfSource(obj runtime.Object) cache.ObjectName {
	if obj == nil || isNilPointer(obj) {
		return cache.ObjectName{}
	}
	if u, ok := obj.(Undecodable); ok {
		return u.ObjectName()
	}
	if m, ok := obj.(metav1.Object); ok {
		return cache.ObjectName{Namespace: m.GetNamespace(), Name: m.GetName()}
	}
	return cache.ObjectName{}
}

// metaOfList returns a list's ListMeta, or an error naming what the source
// returned instead of a list.
func metaOfList(list runtime.Object) (meta.List, error) {
	if list == nil || isNilPointer(list) {
		return nil, errors.New("generic: the source's List returned no list and no error")
	}
	return meta.ListAccessor(list)
}
