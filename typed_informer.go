package generic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/client-go/tools/cache"
)

// TypedInformer returns i as client-go's cache.TypedSharedIndexInformer[T],
// the type informer-gen v0.38's generated informers hand out from
// TypedInformer() (corev1informers.PodIndexInformer is one), so that code
// written against upstream's typed interface takes this library's
// informers and Handles. i must not be nil; TypedInformer(nil) is nil.
//
// Unlike client-go's own wrapper (cache.NewTypedSharedIndexInformer), no
// method panics on a value of another type than T:
//
//   - AddTypedEventHandler is i.AddEventHandler: tombstones unwrapped,
//     a value that is not a T reported to the ErrorHandler (wrapping
//     ErrUnexpectedType) and dropped;
//   - AddTypedIndexers is i.AddIndexers: an index function's error is
//     reported as an *IndexError and makes the index's answers partial
//     (*PartialIndexError);
//   - GetTypedIndexer reads i.Informer().GetIndexer(): TypedIndex and
//     ByTypedIndex return the T values they found, with an error wrapping
//     ErrUnexpectedType if they met a value of another type, and the
//     index's *PartialIndexError if its answer is partial (errors.Join of
//     both when both); its AddTypedIndexers checks the type as
//     AddTypedIndexers does.
//
// With WithCompactStore, the store holds compact records, and every read
// (GetTypedIndexer, GetStore, GetIndexer) and handler gets decoded objects,
// as i.Informer() gives them. Every other method is i.Informer()'s, looked
// up at each call, so that the result follows i as i.Informer() does.
// Objects returned are shared cache state: read-only. It is safe for
// concurrent use.
func TypedInformer[T Object](i Informer[T]) cache.TypedSharedIndexInformer[T] {
	if i == nil || isNilPointer(i) {
		return nil
	}
	// Embedded, a method client-go adds to the interface later reaches
	// i.Informer() as it is now; every method client-go has now is
	// i.Informer()'s at each call.
	return &typedInformer[T]{SharedIndexInformer: i.Informer(), informer: i}
}

type typedInformer[T Object] struct {
	cache.SharedIndexInformer
	informer Informer[T]
}

// current is the shared informer i.Informer() returns now.
func (t *typedInformer[T]) current() cache.SharedIndexInformer { return t.informer.Informer() }

func (t *typedInformer[T]) AddTypedEventHandler(handler cache.TypedResourceEventHandler[T], options ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return t.informer.AddEventHandler(handler, options...)
}

func (t *typedInformer[T]) AddTypedIndexers(indexers cache.TypedIndexers[T]) error {
	return t.informer.AddIndexers(indexers)
}

func (t *typedInformer[T]) GetTypedIndexer() cache.TypedIndexer[T] {
	return &typedIndexer[T]{Indexer: t.current().GetIndexer(), resource: t.informer.GroupVersionResource().GroupResource()}
}

func (t *typedInformer[T]) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return t.current().AddEventHandler(handler)
}

func (t *typedInformer[T]) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return t.current().AddEventHandlerWithResyncPeriod(handler, resyncPeriod)
}

func (t *typedInformer[T]) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return t.current().AddEventHandlerWithOptions(handler, options)
}

func (t *typedInformer[T]) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	return t.current().RemoveEventHandler(handle)
}

func (t *typedInformer[T]) GetStore() cache.Store { return t.current().GetStore() }

func (t *typedInformer[T]) GetController() cache.Controller { return t.current().GetController() }

func (t *typedInformer[T]) Run(stopCh <-chan struct{}) { t.current().Run(stopCh) }

func (t *typedInformer[T]) RunWithContext(ctx context.Context) { t.current().RunWithContext(ctx) }

func (t *typedInformer[T]) HasSynced() bool { return t.current().HasSynced() }

func (t *typedInformer[T]) HasSyncedChecker() cache.DoneChecker {
	return t.current().HasSyncedChecker()
}

func (t *typedInformer[T]) LastSyncResourceVersion() string {
	return t.current().LastSyncResourceVersion()
}

func (t *typedInformer[T]) SetWatchErrorHandler(handler cache.WatchErrorHandler) error {
	return t.current().SetWatchErrorHandler(handler)
}

func (t *typedInformer[T]) SetWatchErrorHandlerWithContext(handler cache.WatchErrorHandlerWithContext) error {
	return t.current().SetWatchErrorHandlerWithContext(handler)
}

func (t *typedInformer[T]) SetTransform(handler cache.TransformFunc) error {
	return t.current().SetTransform(handler)
}

func (t *typedInformer[T]) SetShardSelector(selector sharding.Selector) error {
	return t.current().SetShardSelector(selector)
}

func (t *typedInformer[T]) IsStopped() bool { return t.current().IsStopped() }

func (t *typedInformer[T]) AddIndexers(indexers cache.Indexers) error {
	return t.current().AddIndexers(indexers)
}

func (t *typedInformer[T]) GetIndexer() cache.Indexer { return t.current().GetIndexer() }

// typedIndexer is an informer's indexer as client-go's cache.TypedIndexer
// of T, with checked type assertions.
type typedIndexer[T Object] struct {
	cache.Indexer
	resource schema.GroupResource
}

func (x *typedIndexer[T]) TypedIndex(indexName string, obj T) ([]T, error) {
	objs, err := x.Index(indexName, obj)
	return x.typed(objs, err)
}

func (x *typedIndexer[T]) ByTypedIndex(indexName, indexedValue string) ([]T, error) {
	objs, err := x.ByIndex(indexName, indexedValue)
	return x.typed(objs, err)
}

// typed returns the T values of objs, what the indexer answered with err:
// nil and err if there are none and err is not nil (an unknown index);
// else the T values, with err (a *PartialIndexError) and, if a value of
// another type was met, an error wrapping ErrUnexpectedType.
func (x *typedIndexer[T]) typed(objs []any, err error) ([]T, error) {
	if objs == nil && err != nil {
		return nil, err
	}
	ret := make([]T, 0, len(objs))
	var mismatch error
	for _, obj := range objs {
		if t, ok := obj.(T); ok {
			ret = append(ret, t)
		} else if mismatch == nil {
			mismatch = unexpectedType[T](x.resource, obj)
		}
	}
	if mismatch == nil {
		return ret, err
	}
	return ret, errors.Join(err, mismatch)
}

func (x *typedIndexer[T]) AddTypedIndexers(indexers cache.TypedIndexers[T]) error {
	untyped, err := untypedIndexers(indexers, x.resource)
	if err != nil {
		return err
	}
	return x.AddIndexers(untyped)
}

// untypedIndexers returns indexers as functions of any value: one that is
// not a T is an error wrapping ErrUnexpectedType, which the informer's
// guard reports. A nil function is an error naming its index.
func untypedIndexers[T Object](indexers cache.TypedIndexers[T], resource schema.GroupResource) (cache.Indexers, error) {
	untyped := make(cache.Indexers, len(indexers))
	for name, fn := range indexers {
		if fn == nil {
			return nil, fmt.Errorf("generic: index %q has a nil function", name)
		}
		untyped[name] = func(obj any) ([]string, error) {
			t, ok := obj.(T)
			if !ok {
				return nil, unexpectedType[T](resource, obj)
			}
			return fn(t)
		}
	}
	return untyped, nil
}
