package generic

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// Informer is a cache.SharedIndexInformer whose objects are all of type T,
// with a typed Lister, typed event handlers and typed indexers. No method
// needs a type assertion from its caller, and none panics on a value of
// another type: such values are reported to the ErrorHandler and dropped.
//
// The methods are safe for concurrent use.
type Informer[T Object] interface {
	// Informer returns the underlying shared informer, for code that takes
	// client-go types (cache.WaitForCacheSync, informers.GenericInformer).
	Informer() cache.SharedIndexInformer
	// Lister returns a Lister over the informer's cache.
	Lister() Lister[T]
	// AddEventHandler registers a typed handler, as client-go's
	// cache.TypedSharedIndexInformer.AddTypedEventHandler does, with at most
	// one HandlerOptions. Deletes reach OnDelete as a
	// cache.DeletedObject[T]: when the informer missed the delete event
	// (the object vanished between a watch and a relist), OptionalObj is
	// the last state it cached and FinalStateUnknown holds the tombstone.
	AddEventHandler(handler cache.TypedResourceEventHandler[T], options ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error)
	// AddIndexers adds typed index functions. As with client-go, indexers
	// added after the informer started are applied to the objects already
	// cached. An index function that returns an error is reported as an
	// *IndexError and leaves that object out of that index.
	AddIndexers(indexers cache.TypedIndexers[T]) error
	// HasSynced reports whether the cache has been filled by a complete
	// initial list.
	HasSynced() bool
	// Run runs the informer until ctx ends and returns when it has stopped.
	// An informer runs at most once; a Factory calls Run for the informers
	// it hands out.
	Run(ctx context.Context)
	// GroupVersionResource returns the resource the informer watches.
	GroupVersionResource() schema.GroupVersionResource
	// Status reports the informer's State, its last error and when it
	// last synced.
	Status() Status
}

// NewInformer returns an Informer[T] that lists and watches gvr through lw.
//
// convert, when not nil, turns each object lw delivers into T once, as it is
// ingested; objects it rejects are reported and skipped (see Converter).
// With a nil convert, lw must deliver T itself, as a typed REST client or,
// for T = *unstructured.Unstructured, the dynamic client does; the reflector
// drops anything else, as client-go's does.
//
// Of the Options, all but WithNamespace and WithTweakListOptions apply;
// those are lw's business.
// Most callers get informers from a Factory instead.
func NewInformer[T Object](lw cache.ListerWatcher, gvr schema.GroupVersionResource, convert Converter[T], opts ...Option) Informer[T] {
	o := resolveOptions(opts)
	i := &informer[T]{gvr: gvr, errorHandler: o.errorHandler, status: newStatusTracker(gvr, o.stateHandler)}
	background := context.Background()
	i.runCtx.Store(&background)

	newT, _ := newObjectFunc[T]()
	var example runtime.Object
	if newT != nil {
		example = newT()
	}
	if lw == nil {
		lw = FailingListerWatcher(errors.New("generic: nil ListerWatcher"))
	}
	if convert != nil {
		lw = newIngest(lw, gvr, convert, newT, i.cached, i.errorHandler, &i.goroutines)
	}
	lw = newServedGuard(lw, i.status, i.HasSynced, i.lastResourceVersion, bookmarkOf(newT), o.stopWhenGone, &i.goroutines)
	i.shared = cache.NewSharedIndexInformerWithOptions(lw, example, cache.SharedIndexInformerOptions{
		ResyncPeriod:      o.resyncPeriod,
		Indexers:          i.guardIndexers(o.indexers),
		ObjectDescription: gvr.String(),
	})
	// The informer has not started, so these cannot fail.
	if transform := o.storeTransform(); transform != nil {
		_ = i.shared.SetTransform(i.guardTransform(transform))
	}
	_ = i.shared.SetWatchErrorHandlerWithContext(i.watchError)
	i.lister = NewLister[T](i.shared.GetIndexer(), gvr.GroupResource())
	return i
}

type informer[T Object] struct {
	shared       cache.SharedIndexInformer
	lister       Lister[T]
	gvr          schema.GroupVersionResource
	errorHandler ErrorHandler
	status       *statusTracker
	// lastLogged is the last list or watch error logged, so that a failure
	// that repeats is logged once, not at every retry.
	lastLogged atomic.Pointer[string]
	// runCtx is the context Run was called with (context.Background before),
	// passed to the ErrorHandler for errors raised outside of a list or
	// watch call, so that they are logged with the informer's logger.
	runCtx atomic.Pointer[context.Context]
	// ran is set by the first Run; later ones only let client-go refuse.
	ran atomic.Bool
	// goroutines counts the goroutines of the watches our ListerWatchers
	// made and of deferred error reports; Run waits for them, so that
	// nothing it started outlives it.
	goroutines sync.WaitGroup
}

func (i *informer[T]) Informer() cache.SharedIndexInformer { return i.shared }

func (i *informer[T]) Lister() Lister[T] { return i.lister }

func (i *informer[T]) HasSynced() bool { return i.shared.HasSynced() }

func (i *informer[T]) GroupVersionResource() schema.GroupVersionResource { return i.gvr }

func (i *informer[T]) Status() Status {
	// The first sync is also noticed here, so that Status agrees with
	// HasSynced as soon as HasSynced turns true.
	if i.status.get().State == Syncing && i.shared.HasSynced() {
		i.status.firstSync()
	}
	return i.status.get()
}

// Run runs the shared informer, and tracks its first sync and its end in
// its Status. It returns when ctx has ended and every goroutine it started
// (the reflector's, the handlers', the watches') has ended.
func (i *informer[T]) Run(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	if !i.ran.CompareAndSwap(false, true) {
		i.shared.RunWithContext(ctx) // logs and returns: it runs already
		return
	}
	i.runCtx.Store(&ctx)
	ctx, cancel := context.WithCancel(ctx)
	var syncWatch sync.WaitGroup
	syncWatch.Go(func() {
		select {
		case <-i.shared.HasSyncedChecker().Done():
			i.status.firstSync()
		case <-ctx.Done():
		}
	})
	i.shared.RunWithContext(ctx)
	cancel()
	syncWatch.Wait()
	// The reflector has returned, so no watch is made any more, and the
	// ones it made end with ctx.
	i.goroutines.Wait()
	i.status.set(Stopped, i.status.get().LastError)
}

func (i *informer[T]) lastResourceVersion() string { return i.shared.LastSyncResourceVersion() }

// watchError is the reflector's WatchErrorHandler: client-go's default
// logging, except that a failure that repeats is logged once (at V(4)
// afterwards), and a 404 not at all (the served guard logs its changes).
func (i *informer[T]) watchError(ctx context.Context, r *cache.Reflector, err error) {
	logger := klog.FromContext(ctx)
	message := err.Error()
	if apierrors.IsNotFound(err) || (i.lastLogged.Load() != nil && *i.lastLogged.Load() == message) {
		logger.V(4).Info("List or watch failed again", "gvr", i.gvr.String(), "err", message)
		return
	}
	i.lastLogged.Store(&message)
	cache.DefaultWatchErrorHandler(ctx, r, err)
}

func (i *informer[T]) AddEventHandler(handler cache.TypedResourceEventHandler[T], options ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, errors.New("generic: nil event handler")
	}
	var o cache.HandlerOptions
	switch len(options) {
	case 0:
	case 1:
		o = options[0]
	default:
		return nil, fmt.Errorf("generic: at most one HandlerOptions may be passed, got %d", len(options))
	}
	return i.shared.AddEventHandlerWithOptions(&typedHandler[T]{handler: handler, report: i.report}, o)
}

func (i *informer[T]) AddIndexers(indexers cache.TypedIndexers[T]) error {
	untyped := make(cache.Indexers, len(indexers))
	for name, fn := range indexers {
		if fn == nil {
			return fmt.Errorf("generic: index %q has a nil function", name)
		}
		untyped[name] = func(obj any) ([]string, error) {
			t, ok := obj.(T)
			if !ok {
				return nil, unexpectedType[T](i.gvr.GroupResource(), obj)
			}
			return fn(t)
		}
	}
	return i.shared.AddIndexers(i.guardIndexers(untyped))
}

// guardTransform wraps a store transform so that a result that is not a T
// (nil, or another type), which the cache would keep silently or not at
// all, is reported as an error wrapping ErrUnexpectedType and the object
// is stored as it was before the transform. The transform's own errors
// keep client-go's meaning. client-go does not pass tombstones to it.
func (i *informer[T]) guardTransform(transform cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (any, error) {
		out, err := transform(obj)
		if err != nil {
			return out, err
		}
		if t, ok := out.(T); ok && !isNilPointer(t) {
			return out, nil
		}
		i.reportLater(fmt.Errorf("generic: the transform of %s %q returned %T: %w; the object is stored untransformed",
			i.gvr, keyOf(obj), out, ErrUnexpectedType))
		return obj, nil
	}
}

// guardIndexers wraps index functions so that an error is reported instead
// of reaching client-go's thread-safe store, which panics on it.
func (i *informer[T]) guardIndexers(indexers cache.Indexers) cache.Indexers {
	guarded := make(cache.Indexers, len(indexers))
	for name, fn := range indexers {
		if fn == nil {
			// Only WithIndexers gets here: AddIndexers refuses nil.
			i.report(&IndexError{Index: name, Err: errors.New("nil index function; the index is left out")})
			continue
		}
		guarded[name] = func(obj any) ([]string, error) {
			values, err := fn(obj)
			if err != nil {
				i.reportLater(&IndexError{Index: name, Key: keyOf(obj), Err: err})
				return nil, nil
			}
			return values, nil
		}
	}
	return guarded
}

func (i *informer[T]) report(err error) { i.errorHandler(*i.runCtx.Load(), err) }

// reportLater reports err from another goroutine, which Run waits for: an
// index function runs with the cache locked, and an ErrorHandler that reads
// the cache would wait for it forever.
func (i *informer[T]) reportLater(err error) { i.goroutines.Go(func() { i.report(err) }) }

// cached returns the object the cache holds under key.
func (i *informer[T]) cached(key string) (any, bool) {
	obj, exists, err := i.shared.GetIndexer().GetByKey(key)
	return obj, exists && err == nil
}

// keyOf is the cache key of obj, tombstones included, or "" if it has none.
func keyOf(obj any) string {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return ""
	}
	return key
}

// bookmarkOf makes the bookmark that ends the initial events of a WatchList
// stream, as an object of type T: a new T, or for an interface T a
// *metav1.PartialObjectMetadata if that is a T.
func bookmarkOf[T Object](newT func() T) func(resourceVersion string) (runtime.Object, bool) {
	return func(resourceVersion string) (runtime.Object, bool) {
		var bookmark T
		if newT != nil {
			bookmark = newT()
		} else if t, ok := any(&metav1.PartialObjectMetadata{}).(T); ok {
			bookmark = t
		} else {
			return nil, false
		}
		bookmark.SetResourceVersion(resourceVersion)
		bookmark.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
		return bookmark, true
	}
}
