package generic

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// handle is a Handle: one hold on the informer of a Registry entry. Its
// Informer[T] methods act on the informer that holds the hold now (see
// Handle), which it finds at each call from the entry it acquired
// (registry.Entry.Latest): an atomic load, and a type assertion.
type handle[T Object] struct {
	registry *Registry
	entry    *entry
	// first is the informer of entry, which current falls back on.
	first  *informer[T]
	once   sync.Once
	lister *handleLister[T]
}

// newHandle returns the Handle of a hold on e, whose informer is i.
func newHandle[T Object](r *Registry, e *entry, i *informer[T]) *handle[T] {
	h := &handle[T]{registry: r, entry: e, first: i}
	h.lister = &handleLister[T]{handle: h}
	return h
}

// current is the informer that holds the hold now: the one acquired, or
// the one that replaced it, and so on. Every informer of an entry's line
// is an *informer[T] (the key names the view, and so T); should one not
// be, the first is read.
func (h *handle[T]) current() *informer[T] {
	if i, ok := h.entry.Latest().Runner.(*informer[T]); ok {
		return i
	}
	return h.first
}

// reading is the informer a read goes to, or an error wrapping
// ErrInformerStopped if it has stopped and nothing replaced it: its cache
// no longer follows the server, and is not read. Stopped is its State, or
// client-go's shared informer, which has stopped a moment before the State
// says so (and then takes no more indexers: a later Acquire's are kept
// for the replacement).
func (h *handle[T]) reading() (*informer[T], error) {
	i := h.current()
	if i.stopped() || i.shared.IsStopped() {
		return nil, fmt.Errorf("generic: read of %s through a Handle: its informer has stopped and no informer replaced it yet (the next Start or Acquire does, until its last Release, RemoveResource or Shutdown): %w", i.gvr, ErrInformerStopped)
	}
	return i, nil
}

func (h *handle[T]) Release() bool {
	released := false
	h.once.Do(func() { released = h.registry.informers.Release(h.entry) })
	return released
}

func (h *handle[T]) Done() <-chan struct{} { return h.entry.Gone() }

func (h *handle[T]) Informer() cache.SharedIndexInformer { return h.current().Informer() }

func (h *handle[T]) Lister() Lister[T] { return h.lister }

func (h *handle[T]) AddEventHandler(handler cache.TypedResourceEventHandler[T], options ...cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return h.current().AddEventHandler(handler, options...)
}

func (h *handle[T]) AddIndexers(indexers cache.TypedIndexers[T]) error {
	return h.current().AddIndexers(indexers)
}

func (h *handle[T]) HasSynced() bool { return h.current().HasSynced() }

func (h *handle[T]) Run(ctx context.Context) { h.current().Run(ctx) }

func (h *handle[T]) GroupVersionResource() schema.GroupVersionResource { return h.first.gvr }

func (h *handle[T]) Status() Status { return h.current().Status() }

func (h *handle[T]) StaleObjects() []StaleObject { return h.current().StaleObjects() }

func (h *handle[T]) Ownership() Ownership { return h.current().Ownership() }

func (h *handle[T]) WaitForResourceVersion(ctx context.Context, resourceVersion string) error {
	return h.current().WaitForResourceVersion(ctx, resourceVersion)
}

func (h *handle[T]) WaitForWrite(ctx context.Context, obj T) error {
	return h.current().WaitForWrite(ctx, obj)
}

func (h *handle[T]) WaitForDelete(ctx context.Context, obj T) error {
	return h.current().WaitForDelete(ctx, obj)
}

// handleLister is a Handle's Lister: each read goes to the Lister of the
// informer that holds the Handle's hold at that moment, or fails if it
// has stopped (handle.reading).
type handleLister[T Object] struct {
	handle *handle[T]
	// namespaces caches the NamespaceLister of each namespace asked for,
	// as lister's does (maxCachedNamespaces).
	namespaces sync.Map // string -> *handleNamespaceLister[T]
	cached     atomic.Int32
}

func (l *handleLister[T]) List(selector labels.Selector) ([]T, error) {
	i, err := l.handle.reading()
	if err != nil {
		return nil, err
	}
	return i.lister.List(selector)
}

func (l *handleLister[T]) Get(name string) (T, error) {
	i, err := l.handle.reading()
	if err != nil {
		var none T
		return none, err
	}
	return i.lister.Get(name)
}

func (l *handleLister[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	i, err := l.handle.reading()
	if err != nil {
		return nil, err
	}
	return i.lister.ByIndex(indexName, indexedValue)
}

func (l *handleLister[T]) Namespace(namespace string) NamespaceLister[T] {
	if cached, ok := l.namespaces.Load(namespace); ok {
		return cached.(*handleNamespaceLister[T])
	}
	nl := &handleNamespaceLister[T]{handle: l.handle, namespace: namespace}
	if l.cached.Load() < maxCachedNamespaces {
		if cached, loaded := l.namespaces.LoadOrStore(namespace, nl); loaded {
			return cached.(*handleNamespaceLister[T])
		}
		l.cached.Add(1)
	}
	return nl
}

// handleNamespaceLister is Namespace(ns) of a Handle's Lister: each read
// goes to Namespace(ns) of the Lister of the informer that holds the hold
// at that moment, which it keeps until that informer is replaced.
type handleNamespaceLister[T Object] struct {
	handle    *handle[T]
	namespace string
	bound     atomic.Pointer[boundNamespaceLister[T]]
}

// boundNamespaceLister is Namespace(ns) of one informer's Lister.
type boundNamespaceLister[T Object] struct {
	informer *informer[T]
	lister   NamespaceLister[T]
}

// reading is Namespace(ns) of the Lister of the informer a read goes to,
// or handle.reading's error.
func (l *handleNamespaceLister[T]) reading() (NamespaceLister[T], error) {
	i, err := l.handle.reading()
	if err != nil {
		return nil, err
	}
	if b := l.bound.Load(); b != nil && b.informer == i {
		return b.lister, nil
	}
	b := &boundNamespaceLister[T]{informer: i, lister: i.lister.Namespace(l.namespace)}
	l.bound.Store(b)
	return b.lister, nil
}

func (l *handleNamespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	nl, err := l.reading()
	if err != nil {
		return nil, err
	}
	return nl.List(selector)
}

func (l *handleNamespaceLister[T]) Get(name string) (T, error) {
	nl, err := l.reading()
	if err != nil {
		var none T
		return none, err
	}
	return nl.Get(name)
}

func (l *handleNamespaceLister[T]) ByIndex(indexName, indexedValue string) ([]T, error) {
	nl, err := l.reading()
	if err != nil {
		return nil, err
	}
	return nl.ByIndex(indexName, indexedValue)
}
