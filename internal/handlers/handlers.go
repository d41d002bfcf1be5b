// Package handlers adapts the event handlers users give an informer to
// the untyped cache.ResourceEventHandler client-go's shared informer
// calls: a typed handler (cache.TypedResourceEventHandler[T]) with checked
// type assertions, and a client-go one as it is; both tell the informer's
// delivery clock what they are called with, for the delivery latency.
//
// It imports nothing of this module: reports, the clock and the decoding
// of a compact store's records are hooks the root package hands it.
package handlers

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
)

// Cursor is a handler's place in its informer's delivery clock: Delivered
// is told of each object the handler is called with. It is used by the
// handler's goroutine only.
type Cursor interface{ Delivered(obj any) }

// Typed adapts a cache.TypedResourceEventHandler[T] to the untyped
// cache.ResourceEventHandler that a SharedIndexInformer calls.
//
// It does what client-go's own adapter (cache.TypedSharedIndexInformer)
// does, with checked type assertions: a value that is not a T is reported
// (WrongType's error, to Report) and dropped instead of panicking the
// informer's goroutine, and a delete whose tombstone holds no T still
// reaches the handler with the tombstone, so that no delete is lost.
type Typed[T cache.Object] struct {
	Handler cache.TypedResourceEventHandler[T]
	// Report receives what went wrong; it must not block.
	Report func(error)
	// WrongType is the error of an event of verb for obj, not a T.
	WrongType func(verb string, obj any) error
	Cursor    Cursor
	// Decode, if not nil, turns what the store holds into the object
	// (a compact store's record, see Hooks.Decode).
	Decode func(obj any) (any, error)
}

// decoded is obj through Decode; if it does not decode, the error is
// reported and what Decode made of it is returned: nil for an object, the
// tombstone with no object for a tombstone, so that no delete is lost.
func decoded(decode func(any) (any, error), report func(error), obj any) any {
	if decode == nil {
		return obj
	}
	out, err := decode(obj)
	if err != nil {
		report(err)
	}
	return out
}

func (h *Typed[T]) OnAdd(obj any, isInInitialList bool) {
	h.Cursor.Delivered(obj) // what the ingest handed on, and the clock stamped
	obj = decoded(h.Decode, h.Report, obj)
	t, ok := obj.(T)
	if !ok {
		h.Report(h.WrongType("add", obj))
		return
	}
	h.Handler.OnAdd(t, isInInitialList)
}

func (h *Typed[T]) OnUpdate(oldObj, newObj any) {
	h.Cursor.Delivered(newObj)
	oldObj, newObj = decoded(h.Decode, h.Report, oldObj), decoded(h.Decode, h.Report, newObj)
	oldT, okOld := oldObj.(T)
	newT, okNew := newObj.(T)
	if !okOld || !okNew {
		h.Report(h.WrongType("update", newObj))
		return
	}
	h.Handler.OnUpdate(oldT, newT)
}

// OnDelete delivers a cache.DeletedObject[T]: OptionalObj is the deleted
// object, or, when the informer missed the delete (a relist found the object
// gone), the last state it had cached, with FinalStateUnknown holding the
// tombstone.
func (h *Typed[T]) OnDelete(obj any) {
	h.Cursor.Delivered(obj)
	obj = decoded(h.Decode, h.Report, obj)
	switch o := obj.(type) {
	case T:
		h.Handler.OnDelete(cache.DeletedObject[T]{OptionalObj: o})
	case cache.DeletedFinalStateUnknown:
		deleted := cache.DeletedObject[T]{FinalStateUnknown: &o}
		if t, ok := o.Obj.(T); ok {
			deleted.OptionalObj = t
		} else if o.Obj != nil {
			h.Report(h.WrongType("delete", o.Obj))
		}
		h.Handler.OnDelete(deleted)
	default:
		h.Report(h.WrongType("delete", obj))
	}
}

// Measured is a client-go handler, as it is, that tells its Cursor what
// it is called with, and gets objects through Decode if it is set. (The
// Cursor is told of the object before it is decoded: what the ingest
// handed on, which the clock stamped, a compact store's Record.)
type Measured struct {
	cache.ResourceEventHandler
	Cursor Cursor
	// Decode and Report: as Typed's. An object that does not decode is
	// reported and its event dropped.
	Decode func(obj any) (any, error)
	Report func(error)
}

func (h *Measured) OnAdd(obj any, isInInitialList bool) {
	h.Cursor.Delivered(obj) // what the ingest handed on, and the clock stamped
	if obj = decoded(h.Decode, h.Report, obj); obj != nil {
		h.ResourceEventHandler.OnAdd(obj, isInInitialList)
	}
}

func (h *Measured) OnUpdate(oldObj, newObj any) {
	h.Cursor.Delivered(newObj)
	oldObj, newObj = decoded(h.Decode, h.Report, oldObj), decoded(h.Decode, h.Report, newObj)
	if oldObj != nil && newObj != nil {
		h.ResourceEventHandler.OnUpdate(oldObj, newObj)
	}
}

func (h *Measured) OnDelete(obj any) {
	h.Cursor.Delivered(obj)
	if obj = decoded(h.Decode, h.Report, obj); obj != nil {
		h.ResourceEventHandler.OnDelete(obj)
	}
}

// Hooks are what Shared needs of the informer it hands out.
type Hooks struct {
	// Run is the Informer[T]'s Run; SetTransform sets its own transform,
	// run in its ingest.
	Run          func(context.Context)
	SetTransform func(cache.TransformFunc) error
	// NewCursor makes a handler's place in the delivery clock.
	NewCursor func() Cursor
	// Indexer, if not nil, is what GetIndexer and GetStore return instead
	// of the shared informer's own store (a view of it that says when an
	// index's answer is partial, or a compact store's view of objects);
	// Decode, if not nil, turns what the store holds into an object for
	// handlers, and Report is told of what does not decode.
	Indexer cache.Indexer
	Decode  func(obj any) (any, error)
	Report  func(error)
	// AddIndexers, if not nil, adds the index functions AddIndexers is
	// given, in the Informer[T]'s way: called with objects (not a compact
	// store's records), guarded, and kept for the informers that replace
	// it; the shared informer's own AddIndexers is not called.
	AddIndexers func(cache.Indexers) error
}

// Shared returns shared as an Informer[T] hands it out: running it (Run,
// RunWithContext, as client-go users do) calls hooks.Run instead, the
// Informer[T]'s Run, so that its State, and the factory that shares it,
// know it is running and when it stops; SetTransform calls
// hooks.SetTransform, AddIndexers hooks.AddIndexers; handlers added the
// client-go way are Measured, each with a cursor of its own, and get
// objects through hooks.Decode; its store is hooks.Indexer if set.
func Shared(shared cache.SharedIndexInformer, hooks Hooks) cache.SharedIndexInformer {
	return &sharedInformer{SharedIndexInformer: shared, hooks: hooks}
}

type sharedInformer struct {
	cache.SharedIndexInformer
	hooks Hooks
}

func (s *sharedInformer) Run(stopCh <-chan struct{}) { s.hooks.Run(wait.ContextForChannel(stopCh)) }

func (s *sharedInformer) RunWithContext(ctx context.Context) { s.hooks.Run(ctx) }

// SetTransform sets the Informer[T]'s transform (generic.WithTransform's);
// as in client-go, it fails once the informer has started.
func (s *sharedInformer) SetTransform(transform cache.TransformFunc) error {
	return s.hooks.SetTransform(transform)
}

func (s *sharedInformer) GetStore() cache.Store {
	if s.hooks.Indexer != nil {
		return s.hooks.Indexer
	}
	return s.SharedIndexInformer.GetStore()
}

func (s *sharedInformer) GetIndexer() cache.Indexer {
	if s.hooks.Indexer != nil {
		return s.hooks.Indexer
	}
	return s.SharedIndexInformer.GetIndexer()
}

// AddIndexers adds index functions through hooks.AddIndexers if set.
func (s *sharedInformer) AddIndexers(indexers cache.Indexers) error {
	if s.hooks.AddIndexers != nil {
		return s.hooks.AddIndexers(indexers)
	}
	return s.SharedIndexInformer.AddIndexers(indexers)
}

func (s *sharedInformer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandler(s.measured(handler))
}

func (s *sharedInformer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandlerWithResyncPeriod(s.measured(handler), resyncPeriod)
}

func (s *sharedInformer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return s.SharedIndexInformer.AddEventHandlerWithOptions(s.measured(handler), options)
}

func (s *sharedInformer) measured(handler cache.ResourceEventHandler) cache.ResourceEventHandler {
	if handler == nil {
		return nil // client-go refuses it
	}
	return &Measured{ResourceEventHandler: handler, Cursor: s.hooks.NewCursor(), Decode: s.hooks.Decode, Report: s.hooks.Report}
}
