package generic

import (
	"context"
	"errors"
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

// ingest converts, once, every object a ListerWatcher delivers into T, so
// that the reflector, the cache and the handlers only ever see T.
//
// Conversion happens here rather than in the informer's TransformFunc
// because client-go fails a whole Replace (the initial list, every relist)
// when the transform fails on one object: one malformed object would keep
// the informer from ever syncing. Here a rejected object is reported as a
// *ConversionError and left out, and everything else goes on.
type ingest[T Object] struct {
	inner   cache.ListerWatcherWithContext
	gvr     schema.GroupVersionResource
	convert Converter[T]
	newT    func() T
	// cached returns what the cache holds under key: an object that turns
	// unconvertible in a watch event leaves the cache as a delete of its
	// last good state.
	cached func(key string) (any, bool)
	report func(ctx context.Context, err error)
	// goroutines counts the goroutines of the watches it made, so that the
	// informer's Run returns only after they have ended.
	goroutines *sync.WaitGroup
	// watchListUnsupported forwards the inner ListerWatcher's answer, so
	// that the reflector's WatchList decision is the one client-go would
	// make without us in between.
	watchListUnsupported bool
}

var (
	errNoName    = errors.New("object has no name")
	errNilResult = errors.New("converter returned no object and no error")
	// errNilWatch is a ListerWatcher's Watch that returned neither a watch
	// nor an error; the reflector would panic on it.
	errNilWatch = errors.New("generic: the ListerWatcher's Watch returned no watch and no error")
)

var (
	_ cache.ListerWatcher            = (*ingest[*metav1.PartialObjectMetadata])(nil)
	_ cache.ListerWatcherWithContext = (*ingest[*metav1.PartialObjectMetadata])(nil)
)

func newIngest[T Object](inner cache.ListerWatcher, gvr schema.GroupVersionResource, convert Converter[T], newT func() T, cached func(string) (any, bool), report func(context.Context, error), goroutines *sync.WaitGroup) *ingest[T] {
	return &ingest[T]{
		goroutines:           goroutines,
		inner:                cache.ToListerWatcherWithContext(inner),
		gvr:                  gvr,
		convert:              convert,
		newT:                 newT,
		cached:               cached,
		report:               report,
		watchListUnsupported: watchlist.DoesClientNotSupportWatchListSemantics(inner),
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
// and reflector treat the result as the original list.
func (in *ingest[T]) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	list, err := in.inner.ListWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	listMeta, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractListWithAlloc(list)
	if err != nil {
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
	for _, item := range items {
		if t, ok := in.convertOne(ctx, item); ok {
			out.Items = append(out.Items, t)
		}
	}
	return out, nil
}

func (in *ingest[T]) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	w, err := in.inner.WatchWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errNilWatch
	}
	return newConvertingWatch(ctx, in.goroutines, w, func(event watch.Event) (watch.Event, bool) {
		return in.convertEvent(ctx, event)
	}), nil
}

func (in *ingest[T]) convertOne(ctx context.Context, obj runtime.Object) (T, bool) {
	t, err := in.convert(obj)
	var zero T
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
		in.report(ctx, &ConversionError{GVR: in.gvr, Key: keyOf(obj), Err: err})
		return t, false
	}
	return t, true
}

// convertEvent converts the object of one watch event. Errors pass through
// untouched (their object is a *metav1.Status). Bookmarks only carry a
// resourceVersion and annotations, which are copied to a new T. An object
// that fails to convert is skipped; if the cache holds a good state of it,
// that state leaves the cache as a delete: a relist would drop it anyway,
// and serving an outdated object is worse than serving none.
func (in *ingest[T]) convertEvent(ctx context.Context, event watch.Event) (watch.Event, bool) {
	switch event.Type {
	case watch.Error:
		return event, true
	case watch.Bookmark:
		return in.convertBookmark(ctx, event)
	}
	if t, ok := in.convertOne(ctx, event.Object); ok {
		event.Object = t
		return event, true
	}
	if event.Type == watch.Added {
		return event, false
	}
	last, ok := in.cached(keyOf(event.Object))
	if !ok {
		return event, false
	}
	lastT, ok := last.(T)
	if !ok {
		return event, false
	}
	return watch.Event{Type: watch.Deleted, Object: lastT}, true
}

func (in *ingest[T]) convertBookmark(ctx context.Context, event watch.Event) (watch.Event, bool) {
	if _, ok := event.Object.(T); ok {
		return event, true
	}
	from, err := meta.Accessor(event.Object)
	if err == nil && in.newT == nil {
		err = unexpectedType[T](in.gvr.GroupResource(), event.Object)
	}
	if err != nil {
		in.report(ctx, &ConversionError{GVR: in.gvr, Err: err})
		return event, false
	}
	bookmark := in.newT()
	bookmark.SetResourceVersion(from.GetResourceVersion())
	bookmark.SetAnnotations(from.GetAnnotations())
	event.Object = bookmark
	return event, true
}

// convertingWatch applies a function to every event of a watch.
//
// It is apimachinery's watch.Filter with two differences that matter to us:
// its goroutine also ends when Stop is called while nobody reads the result
// channel (the reflector stops a watch without draining it), where
// watch.Filter's goroutine would block on its send forever; and it ends when
// the watch's context does, counted in a WaitGroup that the informer's Run
// waits for.
type convertingWatch struct {
	inner    watch.Interface
	convert  func(watch.Event) (watch.Event, bool)
	result   chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
}

func newConvertingWatch(ctx context.Context, goroutines *sync.WaitGroup, inner watch.Interface, convert func(watch.Event) (watch.Event, bool)) *convertingWatch {
	w := &convertingWatch{
		inner:   inner,
		convert: convert,
		result:  make(chan watch.Event),
		stopped: make(chan struct{}),
	}
	goroutines.Go(func() { w.loop(ctx) })
	return w
}

func (w *convertingWatch) ResultChan() <-chan watch.Event { return w.result }

func (w *convertingWatch) Stop() {
	w.stopOnce.Do(func() {
		close(w.stopped)
		w.inner.Stop()
	})
}

func (w *convertingWatch) loop(ctx context.Context) {
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
			w.Stop()
			return
		}
		out, keep := w.convert(event)
		if !keep {
			continue
		}
		select {
		case w.result <- out:
		case <-w.stopped:
			return
		case <-ctx.Done():
			w.Stop()
			return
		}
	}
}

// isNilPointer reports whether v, of an interface type T such as
// typed.Object, holds a nil pointer, which t == zero does not catch.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
